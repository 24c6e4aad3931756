"""In NumPy an in-place update is seen through every name of the array; inside a traced
function the update makes a new tensor. Where the two can differ, autograph warns
(`AliasWarning`) at the user's line: never a silent difference (autograph.operators.aliases).

Each program below runs as plain Python on NumPy arrays and as an `ag.function`; the
class-wide check is that a program whose answers differ warned, at the line of its update.
"""

import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.operators.aliases import AliasWarning


def same_object(x):
    y = x
    y += 1.0   # update
    return x


def basic_slice(x):
    y = x[0:2]
    y *= 3.0   # update
    return x


def the_base_changes_a_view(x):
    v = x[1:]
    x -= 1.0   # update
    return v


def list_items(x):
    pair = [x, x]
    pair[0] += 1.0   # update
    return pair[1]


def dict_item(x):
    d = {"a": x}
    y = x
    y /= 2.0   # update
    return d["a"]


def item_update_of_a_reshape(x):
    y = x.reshape(2, 2)
    y[0, 0] = 9.0   # update
    return x


def transpose(m):
    t = m.T
    t -= 1.0   # update
    return m


def row_of_a_matrix(m):
    r = m[0]
    r += 5.0   # update
    return m


def unrolled_loop_over_rows(m):
    rows = [m[0], m[1]]
    for r in rows:
        r += 1.0   # update
    return rows[0] + rows[1]


def power_and_matmul(m):
    y = m
    y @= np.eye(2)   # update
    y **= 2
    return m


def numpy_array_given_a_tensor(x):
    c = np.zeros(4)
    d = c
    c[0] = x[1]   # update
    return d


ALIASED = [numpy_array_given_a_tensor, same_object, basic_slice, the_base_changes_a_view, list_items, dict_item,
           item_update_of_a_reshape, transpose, row_of_a_matrix, unrolled_loop_over_rows]


def a_new_array(x):
    y = x * 2.0
    y += 1.0
    return x, y


def a_copy(x):
    y = x.copy()
    y += 1.0
    return x, y


def rebinding(x):
    y = x
    y = y + 1.0
    return x, y


def fancy_index_is_a_copy(x):
    y = x[[0, 1]]
    y += 1.0
    return x, y


def scalar_element_is_a_copy(x):
    y = x[0]
    y += 1.0
    return x, y


def only_name(x):
    x += 1.0
    return x


def staged_loop_counter(x):
    s = x[0] * 0.0
    for i in ag.range(3):
        s += x[i]
    return s


UNALIASED = [a_new_array, a_copy, rebinding, fancy_index_is_a_copy, scalar_element_is_a_copy,
             only_name, staged_loop_counter]


def _args(fn):
    if fn in (transpose, row_of_a_matrix, unrolled_loop_over_rows, power_and_matmul):
        return (np.array([[1.0, 2.0], [3.0, 4.0]]),)
    return (np.array([1.0, 2.0, 3.0, 4.0]),)


@pytest.fixture(autouse=True)
def _each_test_warns_afresh():
    from autograph.operators import aliases
    aliases._warned.clear()


def _run(fn):
    python = fn(*[a.copy() for a in _args(fn)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = ag.function(fn)(*_args(fn))
    hits = [w for w in caught if issubclass(w.category, AliasWarning)]
    return python, traced, hits


def _equal(a, b):
    a, b = (a if isinstance(a, tuple) else (a,)), (b if isinstance(b, tuple) else (b,))
    return all(np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(a, b))


def _update_line(fn):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if "# update" in text)


@pytest.mark.parametrize("fn", ALIASED + [power_and_matmul], ids=lambda f: f.__name__)
def test_an_update_numpy_would_share_warns_at_its_line(fn):
    python, traced, hits = _run(fn)
    assert not _equal(python, traced), "the program should show NumPy's aliasing"
    assert hits, f"{fn.__name__}: answers differ from Python's and nothing warned"
    assert hits[0].filename == __file__
    assert _update_line(fn) in {w.lineno for w in hits}


@pytest.mark.parametrize("fn", UNALIASED, ids=lambda f: f.__name__)
def test_no_warning_where_no_other_name_shares_the_array(fn):
    python, traced, hits = _run(fn)
    assert not hits, [str(w.message) for w in hits]
    assert _equal(python, traced)


def test_the_warning_names_every_holder():
    _, _, hits = _run(list_items)
    message = str(hits[0].message)
    for name in ("`pair[0]`", "`pair[1]`", "`x`"):
        assert name in message
    _, _, hits = _run(basic_slice)
    assert "`x` and `y` both hold" in str(hits[0].message)


def test_sibling_views_are_not_taken_to_share():
    def halves(x):
        a = x[:2]
        b = x[2:]
        del x   # only the two halves are named: their elements do not overlap
        a += 1.0
        return a, b

    python, traced, hits = _run(halves)
    assert not hits and _equal(python, traced)


def shared_before_a_staged_loop(x):
    y = x
    for _ in ag.range(2):
        y += 1.0   # update
    return x


def shared_before_nested_staged_loops(x):
    y = x[1:]
    for _ in ag.range(2):
        for _ in ag.range(2):
            y *= 2.0   # update
    return x


def unshared_before_a_staged_loop(x):
    y = x * 1.0
    for _ in ag.range(2):
        y += 1.0
    return x, y


def test_a_loop_variable_that_entered_shared_warns_at_its_update():
    for fn in (shared_before_a_staged_loop, shared_before_nested_staged_loops):
        python, traced, hits = _run(fn)
        assert not _equal(python, traced)
        assert _update_line(fn) in {w.lineno for w in hits}, fn.__name__
        assert "`x` and `y` both hold" in str(hits[0].message)
    python, traced, hits = _run(unshared_before_a_staged_loop)
    assert not hits and _equal(python, traced)
