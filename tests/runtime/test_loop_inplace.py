"""Loop variables that a loop body only updates (`a[i] = v`, np.add.at) are written in place
by codegen: the same values as the interpreter and eager Python, the caller's arrays and
the graph's constants untouched, and no in-place update where the old value is read."""

import numpy as np

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, loop_inplace


def fill(a, n):
    for i in ag.range(n):
        a[i] = 2.0 * i
    return a


def fill_const(n):
    a = np.zeros(4)
    for i in ag.range(n):
        a[i] = 1.0 + i
    return a


def add_at(a, n):
    for i in ag.range(n):
        np.add.at(a, np.array([0, 0, 1]), 1.0)
    return a


def reads_old(a, n):
    s = np.float64(0.0)
    for i in ag.range(n):
        s = s + a[0]
        a[i] = 3.0
    return a, s


def keeps_old(a, n):     # b is the old a: the placeholder is read twice
    b = a
    for i in ag.range(n):
        b = a
        a[i] = 5.0
    return a, b


def _graph(f, *args):
    return ag.function(f).get_concrete_function(*args)._graph_to_run()


def _plans(graph):
    return [loop_inplace.plan(nd) for nd in graph.walk() if nd.op == "while_loop"]


def _check(f, *args, eager=True):
    graph = _graph(f, *args)
    before = [np.copy(a) for a in args]
    fast = codegen.compile_graph(graph)(*args)
    ref = interpreter.run(graph, list(args))
    for x, y in zip(fast, ref):
        np.testing.assert_array_equal(x, y)
    if eager:
        values = f(*[np.copy(a) for a in args])
        for x, z in zip(fast, values if isinstance(values, tuple) else (values,)):
            np.testing.assert_array_equal(x, z)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
    return graph


def test_updates_in_place_and_leave_the_callers_array():
    for n in (3, 0):                  # (a loop that runs zero times returns a copy)
        graph = _check(fill, np.ones(4), np.int64(n))
        assert [sorted(p) for p in _plans(graph)] == [[1]]
        src = codegen.source_of(graph)
        assert "copy_loop_value" in src and "k_setitem" not in src   # a[i] = ..., in place


def test_a_constant_initial_value_is_copied_once_per_call():
    graph = _check(fill_const, np.int64(2))
    fn = codegen.compile_graph(graph)
    first = fn(np.int64(2))[0]
    np.testing.assert_array_equal(fn(np.int64(1))[0], [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(first, [1.0, 2.0, 0.0, 0.0])


def test_repeated_indices_accumulate():
    graph = _check(add_at, np.zeros(3), np.int64(4))
    assert any(_plans(graph))


def test_no_in_place_update_when_the_old_value_is_read_after_the_write():
    # (keeps_old: NumPy's aliasing differs, by design; reads_old reads a[0] before the
    # write, which is in place since issue 30: tests/runtime/test_recurrences.py)
    graph = _check(keeps_old, np.ones(4), np.int64(3), eager=False)
    assert not any(_plans(graph))
    assert "k_setitem(" in codegen.source_of(graph)
    graph = _check(reads_old, np.ones(4), np.int64(3))
    assert [sorted(p) for p in _plans(graph)] == [[2]]        # a (after the counter)


def straight(n):
    a = np.zeros(4)
    a[1] = n
    a[2] = 2.0 * n
    return a


def straight_view(n):                # b is a view of the zeros in NumPy: they must not change
    a = np.zeros(4)
    b = a[0:2]
    a[1] = n
    return a, b


def test_updates_of_a_new_array_outside_loops():
    graph = _check(straight, np.float64(3.0))
    assert len(loop_inplace.straight_line(graph)) >= 1
    graph = _check(straight_view, np.float64(3.0), eager=False)
    assert loop_inplace.straight_line(graph) == []
    a, b = codegen.compile_graph(graph)(np.float64(3.0))
    np.testing.assert_array_equal(b, [0.0, 0.0])
    np.testing.assert_array_equal(a, [0.0, 3.0, 0.0, 0.0])
