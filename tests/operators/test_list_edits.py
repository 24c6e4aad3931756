"""pop, insert, item writes and lists of tuples/dicts in loops and branches the graph runs
(issue 31): second gradients and a persistent tape's second gradient against central
differences, the cost of pops (counted), the converted code, and the clear refusals (each
naming the user's file, line and list)."""

import collections
import re

import numpy as np
import pytest

import autograph as ag
from autograph import api
from autograph.runtime.ir import primitives
from tests.autodiff.modes import MODES, fd, fd2, grad, second


def edits(x, n):
    l = [x, x * 2.0]
    acc = x * 0.0
    for i in range(n):
        l.append(np.sin(x) * i)
        acc = acc + l.pop(0) ** 2
        l.insert(1, x * x)
        acc = acc + l.pop()
        l[0] = l[0] * x
    return np.sum(np.stack(l)) + np.sum(acc)


def records(x, n):
    rows = [{"w": x, "k": 0}]
    for i in range(n):
        last = rows[-1]
        rows.append({"w": np.tanh(last["w"]) * x, "k": last["k"] + 1})
        if i % 2 == 1:
            rows.pop(0)
    total = x * 0.0
    for r in rows:
        total = total + r["w"]
    return np.sum(total)


@pytest.mark.parametrize("fn", [edits, records])
@pytest.mark.parametrize("mode", MODES)
def test_gradients_through_pops_inserts_and_writes(fn, mode):
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(grad(mode, fn, x, np.int64(4)), fd(fn, x, 4),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_second_gradient(mode):
    f = lambda x: edits(x, np.int64(3))  # noqa: E731
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(second(mode, f, x), fd2(lambda x: edits(x, 3), x),
                               rtol=1e-4, atol=1e-5)


def test_second_gradient_of_a_persistent_tape():
    def hessian_sums(x):
        with ag.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = edits(x, np.int64(3))
            dy = tape.gradient(y, x)
        return tape.gradient(dy, x)
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(ag.function(hessian_sums)(x), fd2(lambda x: edits(x, 3), x),
                               rtol=1e-4, atol=1e-5)


def _stack_like(x, n):
    out = [x]
    for i in range(n):
        out.append(x * i)
        out.append(out.pop() + 1.0)
    return np.stack(out)


def test_popping_the_last_element_shifts_nothing():
    # l.pop() costs O(1) forward and backward: no gradient-list shift is staged for it
    # (pop(0) needs one: the later elements move)
    x = np.array([0.5, 2.0])
    f = ag.function(_grad_of_stack_like)
    np.testing.assert_allclose(f(x, np.int64(5)), fd(lambda x: np.sum(_stack_like(x, 5)), x),
                               rtol=1e-6)
    graph = f.get_concrete_function(x, np.int64(5)).graph
    ops = _all_ops(graph)
    assert "ta_pop" in ops and "ad_gl_shift" not in ops


def _grad_of_stack_like(x, n):
    with ag.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(_stack_like(x, n))
    return tape.gradient(y, x)


def _all_ops(graph):
    ops = set()
    for node in graph.nodes:
        ops.add(node.op)
        for sub in node.attrs.values():
            if hasattr(sub, "nodes"):
                ops |= _all_ops(sub)
            elif isinstance(sub, (list, tuple)):
                for g in sub:
                    if hasattr(g, "nodes"):
                        ops |= _all_ops(g)
    return ops


def test_to_code_reads_like_the_list_code():
    code = ag.to_code(edits)
    assert "l = ag__.list_append(l, np.sin(x) * i)" in code
    assert "l, l_popped = ag__.list_pop(l, 0)" in code
    assert "l = ag__.list_insert(l, 1, x * x)" in code
    assert "l = ag__.setitem(l, 0, l[0] * x)" in code
    assert "TensorList" not in code


# -- refusals: each names the file, the line and what to write instead --------------------------

def _conditional_pop(x, n):
    l = [x, x]
    for i in range(n):
        l.append(x)
        y = l.pop() if i > 1 else x
    return y


def _structure_changes(x, n):
    l = [(x, x)]
    for i in range(n):
        l.append(x)
    return len(l)


def _sorted_in_loop(x, n):
    l = [x]
    for i in range(n):
        l.append(x * i)
        l.sort()
    return len(l)


def _del_in_loop(x, n):
    l = [x, x]
    for i in range(n):
        l.append(x)
        del l[0]
    return len(l)


def _slice_write(x, n):
    l = [x, x]
    for i in range(n):
        l.append(x)
        l[0:1] = [x]
    return len(l)


def _dict_stacked(x, n):
    l = []
    for i in range(n):
        l.append({"a": x})
    return np.stack(l)


def _summed(x, n):
    l = [x]
    for i in range(n):
        l.append(x * i)
    return sum(l)


@pytest.mark.parametrize("fn,line,what", [
    (_summed, "return sum(l)", r"np\.sum\(np\.stack\(l\), axis=0\)"),
    (_conditional_pop, "y = l.pop() if i > 1 else x", r"Cannot call \.pop\(\)"),
    (_structure_changes, "l.append(x)", "An array is appended"),
    (_sorted_in_loop, "l.sort()", r"Cannot call \.sort\(\)"),
    (_del_in_loop, "del l[0]", r"l\.pop\(i\)"),
    (_slice_write, "l[0:1] = [x]", "assign its elements one at a time"),
    (_dict_stacked, "return np.stack(l)", "stack each field"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_stays_unsupported_is_refused_at_the_users_line(fn, line, what):
    assert api.to_graph(fn)(np.array([1.0]), 3) is not None   # Python values: as Python
    with pytest.raises(ag.errors.StagingError, match=what) as info:
        ag.function(fn)(np.array([1.0]), np.int64(3))
    assert "test_list_edits.py" in str(info.value) and line in str(info.value)


def test_native_code_refuses_pop_clearly():
    def f(x, n):
        l = [x]
        for i in range(n):
            l.append(x * i)
            l.pop(0)
        return np.stack(l)
    from autograph.runtime.exec.native.lower import NativeLoweringError
    with pytest.raises(NativeLoweringError, match="ta_pop"):
        ag.function(f, jit_compile=True)(np.array([1.0]), np.int64(3))


# -- the rewritten statements on other containers stay as written, and refused as before -------

def _dict_pop(n):
    d = {"a": 1, "b": 2}
    s = 0
    for i in range(n):
        if i == 0:
            s += d.pop("a")
    return s + len(d)


def _deque_append(n):
    q = collections.deque([1])
    for i in range(n):
        q.append(i)
    return len(q)


def _deque_iadd(n):
    q = collections.deque([1])
    for i in range(n):
        q += [i]
    return len(q)


@pytest.mark.parametrize("fn,call", [(_dict_pop, "d.pop(...)"), (_deque_append, "q.append(...)"),
                                     (_deque_iadd, "q.extend(...)")],
                         ids=lambda v: getattr(v, "__name__", None) or "")
def test_other_containers_change_in_place_or_are_refused(fn, call):
    assert api.to_graph(fn)(3) == fn(3)   # a Python loop: in place, as written
    with pytest.raises(ag.errors.StagingError, match=re.escape(call)) as info:
        ag.function(fn)(np.int64(3))
    assert "test_list_edits.py" in str(info.value)


def test_a_saved_function_with_pops_and_inserts_loads_and_gives_the_same_answer():
    f = ag.function(edits)
    x = np.array([0.3, 1.2])
    want = f(x, np.int64(4))
    f.get_concrete_function(x, np.int64(4))
    loaded = ag.saved_model.from_bytes(ag.saved_model.to_bytes(f))
    np.testing.assert_allclose(loaded(x, np.int64(4)), want)
    np.testing.assert_allclose(loaded(x, np.int64(1)), edits(x, 1))


def _both_branches_alias(x):
    a = []
    b = a
    if x > 0:
        a.append(x)
    else:
        a.append(-x)
    return len(b)


def _fill_in_branches(acc, x):
    if x > 0:
        acc.append(x)
    else:
        acc.append(-x)


def _branch_caller(x):
    acc = []
    _fill_in_branches(acc, x)
    return len(acc)


@pytest.mark.parametrize("fn,holder", [(_both_branches_alias, "'b'"),
                                       (_branch_caller, "'acc in _branch_caller'")],
                         ids=["name", "caller"])
def test_a_list_another_name_holds_is_refused_in_branches_too(fn, holder):
    # both branches change the list: the graph's list is a new value, `b` (or the caller's
    # list) would stay empty: refused, not a wrong answer
    assert api.to_graph(fn)(2.0) == fn(2.0) == 1
    with pytest.raises(ag.errors.StagingError, match=f"also {holder}"):
        ag.function(fn)(np.float64(2.0))
