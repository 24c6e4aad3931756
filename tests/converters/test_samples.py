"""The shared samples, run three ways: original Python, converted on Python values, and
converted + traced on NumPy arrays (ag.function). All must agree."""

import inspect

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.converters import samples


def _cases():
    for fn, arg_sets, static in samples.SAMPLES:
        for args in arg_sets:
            yield pytest.param(fn, args, static, id=f"{fn.__name__}{args}")


def _same(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return np.asarray(a).item() == np.asarray(b).item() if np.ndim(a) == 0 else np.array_equal(a, b)


@pytest.mark.parametrize("fn,args,static", list(_cases()))
def test_converted_on_python_values(fn, args, static):
    expected = fn(*args)
    got = api.to_graph(fn)(*args)
    assert type(got) is type(expected)
    assert got == expected


@pytest.mark.parametrize("fn,args,static", list(_cases()))
def test_converted_and_traced_on_arrays(fn, args, static):
    expected = fn(*args)
    params = list(inspect.signature(fn).parameters)
    call_args = [a if p in static else samples.as_array(a) for p, a in zip(params, args)]
    got = ag.function(fn)(*call_args)
    assert _same(got, expected), (got, expected)


@pytest.mark.parametrize("fn,args", [pytest.param(fn, a, id=f"{fn.__name__}{a}")
                                     for fn, arg_sets in samples.PYTHON_ONLY for a in arg_sets])
def test_python_only_samples(fn, args):
    assert api.to_graph(fn)(*args) == fn(*args)


def test_unbound_variable_raises_like_python():
    converted = api.to_graph(samples.maybe_unbound)
    assert converted(3) == samples.maybe_unbound(3) == 1
    with pytest.raises(UnboundLocalError) as original:
        samples.maybe_unbound(-1)
    with pytest.raises(UnboundLocalError) as ours:
        converted(-1)
    assert "'y'" in str(original.value) and "'y'" in str(ours.value)


def _ops(graph):
    out = []
    for node in graph.nodes:
        out.append(node.op)
        for value in node.attrs.values():
            if isinstance(value, ag.Graph):
                out.extend(_ops(value))
    return out


@pytest.mark.parametrize("fn,op", [
    (samples.collatz, "while_loop"), (samples.break_in_while, "while_loop"),
    (samples.continue_in_for, "while_loop"), (samples.elif_chain, "cond"),
    (samples.return_in_for, "while_loop"), (samples.nested_break, "while_loop"),
])
def test_tensor_control_flow_is_staged(fn, op):
    """The traced graphs really hold the loops and conds (not a Python-unrolled trace)."""
    conc = ag.function(fn).get_concrete_function(ag.TensorSpec([], np.int64))
    assert op in _ops(conc.graph)
