"""The call fast path's process-wide flag (autograph.config._busy): every device scope,
graph being built and run_functions_eagerly(True) holds one entry while it lasts, in any
thread, exceptions included; while it is set the fast path asks the thread's own state,
so a thread in a scope or a trace never takes it, and other threads still do."""

import threading

import numpy as np
import pytest

import autograph as ag
from autograph.config import _busy as BUSY
from autograph.function.concrete import fast_key


def _double(x):
    return x * 2


class _Counted:
    """Wraps a Function's general path (`_call`) to count the calls that did not take the
    fast path."""

    def __init__(self, fn):
        self.fn, self.slow = fn, 0
        original = fn._call

        def counting(args, kwargs):
            self.slow += 1
            return original(args, kwargs)
        fn._call = counting


def test_busy_is_balanced_after_scopes_traces_errors_and_eager():
    assert BUSY == []
    f = ag.function(_double)
    with ag.device("cpu"):
        assert len(BUSY) == 1
        f(np.ones(2))
    with pytest.raises(ZeroDivisionError):
        with ag.device("cpu"):
            1 / 0

    def broken(x):
        raise ValueError("in the trace")
    with pytest.raises(ValueError):
        ag.function(broken)(np.ones(2))
    ag.config.run_functions_eagerly(True)
    ag.config.run_functions_eagerly(True)   # twice: still one entry
    assert len(BUSY) == 1
    ag.config.run_functions_eagerly(False)
    ag.config.run_functions_eagerly(False)
    assert BUSY == []


@pytest.mark.parametrize("arg", [np.float64(1.5), np.ones(3), np.int32(7)],
                         ids=["np_scalar", "array", "np_int32"])
def test_warm_calls_skip_the_general_path_and_scopes_do_not(arg):
    f = ag.function(_double)
    counted = _Counted(f)
    want = f(arg)
    for _ in range(3):
        got = f(arg)
        assert type(got) is type(want) and np.array_equal(got, want)
    assert counted.slow == 1                      # the first call only
    with ag.device("cpu"):                        # this thread's scope: the general path
        f(arg)
    assert counted.slow == 2
    ag.config.run_functions_eagerly(True)
    try:
        got = f(arg)                              # eager: the Python function
    finally:
        ag.config.run_functions_eagerly(False)
    assert counted.slow == 3 and np.array_equal(got, want)
    f(arg)
    assert counted.slow == 3


def test_another_threads_scope_leaves_this_threads_fast_path_on():
    f = ag.function(_double)
    x = np.arange(3.0)
    f(x)
    counted = _Counted(f)
    entered, release = threading.Event(), threading.Event()

    def hold_scope():
        with ag.device("cpu"):
            entered.set()
            release.wait(10)
    t = threading.Thread(target=hold_scope)
    t.start()
    try:
        assert entered.wait(10) and BUSY          # set by the other thread
        np.testing.assert_array_equal(f(x), x * 2)
        assert counted.slow == 0                  # this thread is calm: fast path
    finally:
        release.set()
        t.join()
    assert BUSY == []


def test_a_warm_function_called_while_tracing_is_inlined():
    inner = ag.function(_double)
    x = np.arange(3.0)
    inner(x)
    inner(x)
    runs = []

    def outer(y):
        runs.append(1)
        return inner(y) + 1

    g = ag.function(outer)
    np.testing.assert_array_equal(g(x), x * 2 + 1)
    ops = [n.op for n in g.get_concrete_function(x).graph.nodes]
    assert "mul" in ops or "multiply" in ops      # inner's operation joined outer's graph
    assert runs == [1]


def test_numpy_scalar_entries_are_keyed_by_type_only():
    f = ag.function(_double)
    f(np.float32(2))
    f(np.float32(2))
    assert fast_key((np.float32(2),)) is np.float32 and np.float32 in f._fast
    f(3)                                          # a Python int: keyed by value, not type
    assert int not in f._fast
    assert f(np.float64(2)) == np.float64(4) and type(f(np.float64(2))) is np.float64
