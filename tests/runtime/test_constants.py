"""Constants are snapshots: values captured while tracing do not change afterwards."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph

W = np.array([1.0, 2.0])


def scale(x):
    return x * W


def test_global_array_is_read_at_trace_time():
    global W
    f = ag.function(scale)
    x = np.ones(2)
    first = f(x)
    W[0] = 100.0            # changed in place after the trace
    try:
        np.testing.assert_array_equal(f(x), first)       # the trace kept its copy
        np.testing.assert_array_equal(scale(x), [100.0, 2.0])  # plain Python sees the change
    finally:
        W[0] = 1.0


def test_const_value_is_a_read_only_copy():
    source = np.arange(3)
    g = Graph("g")
    with g.as_default():
        t = primitives.constant(source)
    value = t.node.attrs["value"]
    assert value is not source and not np.shares_memory(value, source)
    with pytest.raises(ValueError):
        value[0] = 5


def test_returned_constant_cannot_corrupt_the_graph():
    f = ag.function(lambda: W, autograph=False)
    out = f()
    try:
        out[0] = -1.0
    except ValueError:
        pass                # a read-only result is also safe
    np.testing.assert_array_equal(f(), [1.0, 2.0])
