"""Python lists appended to in loops the graph runs (issue 31, item 1): the converted
program gives Python's answer traced (ag.function), on Python values, and natively; the
list comes back as a Python list of arrays; gradients match central differences; n appends
cost O(n) (counted: no element is copied, each append is one store)."""

import numpy as np
import pytest

import autograph as ag
from autograph import api
from tests.autodiff.modes import MODES, fd, fd2, grad, second
# (programs the list corpus holds already)
from tests.converters.list_corpus import iterate_after as iterated_after
from tests.converters.list_corpus import rows_of_python_lists as python_rows_in_staged_loop
from tests.converters.list_corpus import stack_axis as stacked_axis


def returned_list(x, n):
    out = []
    for i in range(n):
        out.append(x * i)
    return out


def stacked(x, n):
    rows = []
    for i in range(n):
        rows.append(np.sin(x) * i)
    return np.stack(rows)


def while_with_branch(x, n):
    seen = [x]
    i = 0
    while i < n:
        if i % 2 == 0:
            seen.append(x + i)
        i += 1
    return len(seen), seen[0], seen[-1], np.array(seen).sum()


def with_break(x, n):
    acc = []
    for i in range(n):
        acc.append(x * i)
        if i >= 3:
            break
    return np.asarray(acc)


def indexed_after(x, n):
    vals = []
    for i in range(n):
        vals.append(x * x + i)
    return vals[1] - vals[0] + len(vals)


def two_lists(x, n):
    evens, odds = [], []
    for i in range(n):
        if i % 2 == 0:
            evens.append(x * i)
        else:
            odds.append(x * i)
    return np.stack(evens).sum() - np.stack(odds).sum()


def nested_loops(x, n):
    cells = []
    for i in range(n):
        for j in range(i):
            cells.append(x * (i * 10 + j))
    return np.concatenate([np.stack(cells), x[None]])


def kept_state_and_list(x, n):
    total = x
    trace = []
    while total < n:
        total = total * 2.0
        trace.append(total)
    return total, np.stack(trace)


def read_in_loop(x, n):
    vals = [x]
    for i in range(n):
        vals.append(vals[-1] * 1.5 + vals[0])
    return vals[-1], len(vals)


def _collect(x, n):
    got = []
    k = 0
    while k < n:
        got.append(x - k)
        k += 1
    return got


def from_a_helper(x, n):
    return np.stack(_collect(x, n)).sum() + len(_collect(x, n))


def return_inside(x, n):
    seen = []
    for i in range(n):
        seen.append(x * i)
        if i == 3:
            return np.stack(seen).sum()
    return -np.stack(seen).sum() if seen else x


CASES = [
    (read_in_loop, (np.float64(1.5), 4)),
    (from_a_helper, (np.float64(2.5), 3)),
    (return_inside, (np.float64(2.0), 6)),
    (return_inside, (np.float64(2.0), 2)),
    (return_inside, (np.float64(2.0), 0)),
    (python_rows_in_staged_loop, (np.array([1.0, -1.0]), 3)),
    (returned_list, (np.float64(1.5), 4)),
    (stacked, (np.array([0.3, 1.2]), 5)),
    (stacked_axis, (np.array([1.0, 2.0, 3.0]), 4)),
    (while_with_branch, (np.float64(2.0), 5)),
    (with_break, (np.float64(2.0), 7)),
    (with_break, (np.float64(2.0), 2)),
    (indexed_after, (np.float64(3.0), 3)),
    (two_lists, (np.float64(1.25), 6)),
    (nested_loops, (np.float64(0.5), 4)),
    (kept_state_and_list, (np.float64(1.5), 40.0)),
]


def _same(got, want):
    if isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        assert np.shape(got) == np.shape(want) and np.allclose(got, want), (got, want)


@pytest.mark.parametrize("fn,args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_traced_and_converted_give_pythons_answer(fn, args):
    want = fn(*args)
    _same(api.to_graph(fn)(*args), want)
    *head, n = args
    n = np.float64(n) if isinstance(n, float) else np.int64(n)
    _same(ag.function(fn)(*head, n), want)


def test_the_list_comes_back_as_a_python_list_of_arrays():
    got = ag.function(returned_list)(np.array([1.0, 2.0]), np.int64(3))
    assert type(got) is list and len(got) == 3
    assert all(isinstance(g, np.ndarray) and g.shape == (2,) for g in got)
    empty = ag.function(returned_list)(np.array([1.0, 2.0]), np.int64(0))
    assert empty == []


def test_to_code_rebinds_the_list_and_stays_short():
    code = ag.to_code(stacked)
    assert "rows = ag__.list_append(rows, np.sin(x) * i)" in code
    assert "TensorList" not in code and len(code.splitlines()) <= 9


def test_appends_outside_loops_and_to_globals_stay_as_written():
    code = ag.to_code(_appends_to_global)
    assert "list_append" not in code and "LOG.append(x)" in code


LOG = []


def _appends_to_global(x):
    LOG.append(x)
    return x


def test_python_loop_appends_in_place():
    # a Python loop over a Python list: list_append is list.append (aliases see it)
    def f(n):
        a = []
        b = a
        for i in range(n):
            a.append(i)
        return b
    assert api.to_graph(f)(3) == [0, 1, 2]


def test_native_gives_pythons_answer():
    fn = ag.function(stacked, jit_compile=True)
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(fn(x, np.int64(5)), stacked(x, 5))


def _list_loss(x, n):
    return np.sum(stacked(x, n) ** 2) + np.sum(np.stack(returned_list(x, n)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [1, 4])
def test_gradient_through_stacked_list(mode, n):
    # eager tape, tape inside ag.function (the loop staged), ag.grad: vs central differences
    x = np.array([0.3, 1.2])
    want = fd(_list_loss, x, np.int64(n))
    np.testing.assert_allclose(grad(mode, _list_loss, x, np.int64(n)), want,
                               rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_second_gradient_through_stacked_list(mode):
    f = lambda x: _list_loss(x, np.int64(3))  # noqa: E731
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(second(mode, f, x), fd2(f, x), rtol=1e-4, atol=1e-5)


def test_appending_is_linear(monkeypatch):
    # each append stores its element by reference: no element is ever copied, and the
    # run-time list grows by one per append; np.stack copies the elements once
    from autograph.runtime import tensor_array
    copies, stores = [], []
    monkeypatch.setattr(tensor_array, "_copy", lambda xp, a: copies.append(a.size) or a.copy())
    real = tensor_array._Storage.write

    def counted(self, xp, i, value):
        stores.append(i)
        return real(self, xp, i, value)
    monkeypatch.setattr(tensor_array._Storage, "write", counted)
    fn = ag.function(stacked)
    for n in (10, 1000):
        stores.clear()
        out = fn(np.array([0.3, 1.2]), np.int64(n))
        assert out.shape == (n, 2)
        assert stores == list(range(n)) and copies == []


def _mixed_dtypes(n):
    out = []
    for i in range(n):
        out.append(i)
        out.append(0.5)
    return np.stack(out)


def _strings(n):
    names = []
    for i in range(n):
        names.append("step")
    return len(names)


def test_an_element_of_another_dtype_is_refused_not_cast():
    # NumPy would promote the stacked list to float64; a graph list has one dtype: a clear
    # error at the line, never the values cast to int
    assert _mixed_dtypes(2).dtype == np.float64
    with pytest.raises(ag.errors.StagingError, match=r"dtype float64 is appended.*out\.append\(0\.5\)"):
        ag.function(_mixed_dtypes)(np.int64(2))


def test_appending_what_no_tensor_holds_is_refused_as_before():
    assert api.to_graph(_strings)(3) == 3
    with pytest.raises(ag.errors.StagingError, match=r"names\.append\(\.\.\.\)"):
        ag.function(_strings)(np.int64(3))


# -- aliases: the graph's list is a new value, which another holder would not see ------------

def _alias(x, n):
    a = []
    b = a
    for i in range(n):
        a.append(x * i)
    return len(b)


class _Holder:
    pass


def _held(x, n):
    a = []
    h = _Holder()
    h.items = a
    grid = [a]
    for i in range(n):
        a.append(x * i)
    return len(grid[0]) + len(h.items)


def _fill(acc, x, n):
    for i in range(n):
        acc.append(x * i)
    return x


def _caller(x, n):
    acc = []
    _fill(acc, x, n)
    return len(acc)


@pytest.mark.parametrize("fn,holder", [(_alias, "'b'"), (_held, "'grid', 'h'"),
                                       (_caller, "'acc in _caller'")],
                         ids=["name", "containers", "caller"])
def test_a_list_with_other_holders_is_refused(fn, holder):
    assert api.to_graph(fn)(2.0, 3) == fn(2.0, 3)   # Python loops: in place, as Python
    with pytest.raises(ag.errors.StagingError, match=f"also {holder}"):
        ag.function(fn)(np.float64(2.0), np.int64(3))


def extended(x, n):
    out = [x]
    for i in range(n):
        out.extend([x * i, x + i])
        out.extend(np.stack([x, x]) * i)
    return np.stack(out)


def test_extend_by_a_sequence_or_an_array_of_known_length():
    x = np.array([0.5, 2.0])
    for n in (0, 3):
        np.testing.assert_allclose(ag.function(extended)(x, np.int64(n)), extended(x, n))
        np.testing.assert_allclose(api.to_graph(extended)(x, n), extended(x, n))


def _extend_unknown_length(x, n):
    out = []
    for i in range(n):
        out.extend(x[x > i])
    return len(out)


def test_extend_by_an_array_of_unknown_length_is_refused():
    with pytest.raises(ag.errors.StagingError, match="known only when the graph runs"):
        ag.function(_extend_unknown_length)(np.arange(4.0), np.int64(2))


def test_iterating_the_list_after_the_loop():
    x = np.array([0.5, 2.0])
    for n in (0, 1, 4):
        np.testing.assert_allclose(ag.function(iterated_after)(x, np.int64(n)),
                                   iterated_after(x, n))
