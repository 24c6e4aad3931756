"""Branch and loop state, class by class (issue 11 classes 1, 2, 7a, 7b, 12).

Every program runs three ways: as plain Python, converted on Python values (must behave
exactly like Python, errors included), and traced by ag.function with NumPy scalars in
place of the ints (must give Python's numbers, or a clear error where noted).
"""

import types

import numpy as np
import pytest

import autograph as ag
from autograph import api


def _py(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the exception type is the result compared
        return ("raise", type(e))


def same_in_python(fn, *arg_sets):
    conv = api.to_graph(fn)
    for args in arg_sets:
        assert _py(conv, args) == _py(fn, args), (fn.__name__, args)


def same_traced(fn, *arg_sets):
    traced = ag.function(fn)
    for args in arg_sets:
        want = fn(*args)
        got = traced(*[np.int64(a) if isinstance(a, int) and not isinstance(a, bool) else a
                       for a in args])
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float))


# -- class 1: variables bound in branches inside loops, and other generated scopes ---------

def branch_in_for(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            t = i
        else:
            t = -i
        s += t
    return s


def branch_in_while_with_outer_value(n):
    t = 100                      # bound before the loop, but a local of the loop body
    i = 0
    s = 0
    while i < n:
        if i > 1:
            t = i * 3
        else:
            t = 1
        s += t
        i += 1
    return s + t


def nested_branches_in_nested_loops(n):
    s = 0
    for i in range(n):
        for j in range(n):
            if (i + j) % 3 == 0:
                if i > j:
                    u = i
                else:
                    u = j
            else:
                u = -1
            s += u
    return s


def bound_on_some_paths(n):
    if n > 0:
        t = 1
    if n > 1:
        t = 2
    return t


def if_after_early_return(x, flag):
    if flag:
        return -1
    if x > 0:
        b = x
    else:
        b = -x
    return b


def walrus_in_while(n):
    c = 0
    while (n := n - 1) > 0:
        c += n
    return c * 10 + n


def walrus_in_while_with_else(n):
    c = 0
    while (m := n - c) > 2:
        c += 1
    else:
        c += 100
    return c + m


def continue_in_both_branches(n):
    s = 0
    for i in range(n):
        if i % 2:
            continue
        else:
            s += i
            continue
    return s


@pytest.mark.parametrize("fn,arg_sets", [
    (branch_in_for, [(0,), (1,), (5,)]),
    (branch_in_while_with_outer_value, [(0,), (1,), (4,)]),
    (nested_branches_in_nested_loops, [(0,), (3,), (5,)]),
    (walrus_in_while, [(1,), (5,)]),
    (walrus_in_while_with_else, [(0,), (6,)]),
    (continue_in_both_branches, [(0,), (5,)]),
])
def test_generated_scopes_python_and_traced(fn, arg_sets):
    same_in_python(fn, *arg_sets)
    same_traced(fn, *arg_sets)


def test_bound_on_some_paths_raises_only_where_python_does():
    same_in_python(bound_on_some_paths, (0,), (1,), (2,))
    with pytest.raises(UnboundLocalError):
        api.to_graph(bound_on_some_paths)(0)
    same_in_python(if_after_early_return, (3, False), (-3, False), (3, True))
    assert ag.function(if_after_early_return)(np.int64(-3), False) == 3


# -- class 2 and 12: attributes and items as state ------------------------------------------

def item_in_tensor_if(a):
    x = {"b": 0}
    if a > 0:
        x["b"] = 1
    else:
        x["b"] = -1
    return x["b"]


def attr_written_not_read_in_loop(x, n):
    s = types.SimpleNamespace(x=x, fx=0.0)
    i = 0
    while i < n:
        s.fx = np.sum(s.x * s.x) * i
        i += 1
    return s.fx


def item_written_in_loop(n):
    d = {"a": 0, "keep": 7}
    i = 0
    while i < n:
        d["a"] = d["a"] + i
        i += 1
    return d["a"] + d["keep"]


def attr_created_in_loop(n):
    s = types.SimpleNamespace()
    i = 0
    while i < n:
        s.v = i * 2
        i += 1
    return s.v


def key_made_in_loop(n, x):
    d = {}
    i = 0
    while i < n:
        i += 1
        if "m" in d:
            d["m"] += x
        else:
            d["m"] = 1
    return d.get("m", 0)


def attr_made_once_in_loop(n, x):
    s = types.SimpleNamespace()
    for i in range(n):
        if not hasattr(s, "w"):
            s.w = x + 8
    return getattr(s, "w", 0)


def test_place_first_made_in_tensor_loop_that_does_not_ask_for_it():
    """Made by every iteration, never asked for (`in`, hasattr): Python's answer where the
    loop runs (as TensorFlow); where it runs zero times, UnboundLocalError naming it."""
    same_traced(attr_created_in_loop, (1,), (3,))
    with pytest.raises(UnboundLocalError, match=r"'s\.v' is first created inside the `while`"):
        ag.function(attr_created_in_loop)(np.int64(0))


@pytest.mark.parametrize("fn,args,label", [
    (key_made_in_loop, (2, 11), "d['m']"),
    (attr_made_once_in_loop, (1, 3), "s.w"),
])
def test_place_first_made_in_tensor_loop_is_refused(fn, args, label):
    """The first iteration would see it missing, the others present: never silently one way."""
    same_in_python(fn, args, tuple(0 * a for a in args))
    with pytest.raises(ag.errors.StagingError, match=f"'{re_escape(label)}' is first created inside"):
        ag.function(fn)(*[np.int64(a) for a in args])


def re_escape(text):
    import re
    return re.escape(text)


def nested_attr(n):
    o = types.SimpleNamespace(inner=types.SimpleNamespace(v=0))
    for i in range(n):
        if i % 2 == 0:
            o.inner.v = o.inner.v + i
    return o.inner.v


def test_item_in_tensor_if():
    same_in_python(item_in_tensor_if, (1,), (-1,))
    f = ag.function(item_in_tensor_if)
    assert f(np.asarray(1)) == 1 and f(np.asarray(-1)) == -1


def test_attribute_written_not_read_in_tensor_loop():
    x = np.arange(3.0)
    want = attr_written_not_read_in_loop(x, 4)
    got = ag.function(attr_written_not_read_in_loop)(x, np.int64(4))
    assert isinstance(got, (np.ndarray, np.generic)) and got == want


@pytest.mark.parametrize("fn,arg_sets", [
    (item_written_in_loop, [(0,), (4,)]),
    (nested_attr, [(0,), (5,)]),
])
def test_places_python_and_traced(fn, arg_sets):
    same_in_python(fn, *arg_sets)
    same_traced(fn, *arg_sets)


def count_key(d):
    if "a" in d:
        d["a"] += 1
    else:
        d["a"] = 1
    return d["a"]


def cache_attr(o):
    if not hasattr(o, "cache"):
        o.cache = 1
    return o.cache


def delete_key(d):
    if "k" in d:
        del d["k"]
    return len(d)


def one_sided_item(x):
    d = {}
    if x > 0:
        d["b"] = 1
    return sorted(d)


def test_composite_state_read_before_it_exists():
    conv = api.to_graph
    assert conv(count_key)({}) == 1 and conv(count_key)({"a": 4}) == 5
    assert conv(cache_attr)(types.SimpleNamespace()) == 1
    assert conv(cache_attr)(types.SimpleNamespace(cache=9)) == 9
    assert conv(delete_key)({}) == 0 and conv(delete_key)({"k": 1, "j": 2}) == 1
    assert conv(one_sided_item)(0) == [] and conv(one_sided_item)(1) == ["b"]


def test_one_sided_item_under_tensor_if_is_refused_by_name():
    with pytest.raises(ag.errors.StagingError, match=r"d\['b'\]"):
        ag.function(one_sided_item)(np.int64(1))


def test_places_appear_in_generated_code():
    code = ag.to_code(item_in_tensor_if)
    assert """places=(ag__.item(x, 'b', "x['b']"),)""" in code


# -- class 7a: variables first assigned inside a tensor loop --------------------------------

def first_in_while(n):
    i = 0
    while i < n:
        v = i * 2.5
        i += 1
    return v


def first_in_for_over_rows(x):
    for row in x:
        last = row * 2
    return last


def first_in_nested_loops(n):
    for i in range(n):
        for j in range(n):
            w = i * j
    return w


def test_first_assigned_in_tensor_loop():
    f = ag.function(first_in_while)
    assert f(np.int64(3)) == first_in_while(3)
    with pytest.raises(UnboundLocalError, match="'v' is first assigned inside the `while` loop"):
        f(np.int64(0))
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(ag.function(first_in_for_over_rows)(x), first_in_for_over_rows(x))
    assert ag.function(first_in_nested_loops)(np.int64(4)) == first_in_nested_loops(4)


def read_before_first_assignment(n):
    i = 0
    while i < n:
        v = v + 1  # noqa: F821 - Python raises too
        i += 1
    return v


def test_read_before_first_assignment_raises_like_python():
    with pytest.raises(UnboundLocalError):
        read_before_first_assignment(2)
    with pytest.raises(UnboundLocalError):
        ag.function(read_before_first_assignment)(np.int64(2))


# -- class 7b: tensor control flow inside try/finally ---------------------------------------

LOG = []


def tensor_if_in_try_finally(x):
    log = LOG
    try:
        if x > 0:
            y = 1
        else:
            y = 2
    finally:
        log.append("finally")
    return y


def test_tensor_if_in_try_finally():
    f = ag.function(tensor_if_in_try_finally)
    assert f(np.int64(1)) == 1 and f(np.int64(-1)) == 2
    assert LOG == ["finally"]  # a Python side effect: once, while tracing


def tensor_if_in_try_except(x):
    try:
        if x > 0:
            y = 1
        else:
            y = 2
    except ValueError:
        y = 3
    return y


def test_tensor_if_in_try_except_is_still_refused():
    with pytest.raises(ag.errors.StagingError, match="inside a `try` block"):
        ag.function(tensor_if_in_try_except)(np.int64(1))


# -- class 7f: for/else that assigns the variable -------------------------------------------

def for_else_assigns(n):
    for i in range(n):
        if i > 5:
            break
    else:
        i = -1
    return i


def test_for_else_assigning_the_target():
    same_in_python(for_else_assigns, (0,), (3,), (9,))
    same_traced(for_else_assigns, (0,), (3,), (9,))


def first_in_loop_then_maybe_reassigned(n, c):
    i = 0
    while i < n:
        v = i * 2
        i += 1
    if c:
        v = 5
    return v


def first_in_loop_read_on_one_path(n, c):
    i = 0
    while i < n:
        v = i * 2
        i += 1
    if c:
        return 0
    return v


@pytest.mark.parametrize("fn", [first_in_loop_then_maybe_reassigned, first_in_loop_read_on_one_path])
def test_first_assigned_checked_where_read(fn):
    """The run-time check fires exactly where Python would raise."""
    f = ag.function(fn)
    for n in (0, 3):
        for c in (False, True):
            want = _py(fn, (n, c))
            try:
                got = ("ok", int(f(np.int64(n), np.bool_(c))))
            except UnboundLocalError:
                got = ("raise", UnboundLocalError)
            assert got == want, (fn.__name__, n, c)


# -- class 3: closures over loop and branch variables (late binding) ------------------------

def closure_before_tensor_loop(n):
    i = 0
    get = lambda: i  # noqa: E731
    while i < n:
        i += 1
    return get()


def lambdas_made_in_for(n):
    fs = []
    for i in range(n):
        fs.append(lambda: i)
    return sum(f() for f in fs)


def defs_made_in_while(n):
    fs = []
    i = 0
    while i < n:
        def g():
            return i * 10
        fs.append(g)
        i += 1
    return [f() for f in fs]


def closure_made_in_branch(x):
    v = 1
    if x > 0:
        v = 2
        get = lambda: v  # noqa: E731
    else:
        get = lambda: -v  # noqa: E731
    v = 7
    return get()


def closure_in_nested_loops(n):
    fs = []
    for i in range(n):
        for j in range(n):
            fs.append(lambda: i * 10 + j)
    return [f() for f in fs]


@pytest.mark.parametrize("fn,args", [
    (closure_before_tensor_loop, [(0,), (3,)]),
    (lambdas_made_in_for, [(0,), (3,)]),
    (defs_made_in_while, [(0,), (3,)]),
    (closure_made_in_branch, [(1,), (-1,)]),
    (closure_in_nested_loops, [(0,), (2,)]),
])
def test_closures_see_the_variable_not_a_copy(fn, args):
    same_in_python(fn, *args)


def test_closure_read_after_tensor_loop_and_branch():
    assert ag.function(closure_before_tensor_loop)(np.int64(3)) == 3
    code = ag.to_code(lambdas_made_in_for)
    assert "nonlocal i" in code and "ag__.variable(lambda: i, set_i, 'i')" in code


def counter_in_tensor_loop(n):
    i = 0
    get = lambda: i  # noqa: E731
    total = 0
    while i < n:
        total += get()  # a closure read inside a staged loop sees the loop's i
        i += 1
    return total


def test_closure_called_inside_staged_loop():
    assert ag.function(counter_in_tensor_loop)(np.int64(4)) == counter_in_tensor_loop(4)


# -- found by the differential generator ----------------------------------------------------

def walrus_in_if_test_then_loop(x):
    a = x
    if (w := x) > 0:
        a = 1
    i = 2
    while (i := i - 1) >= 0:
        a += 3 if (w := w) > 1 else 2
    return a, w


def list_changed_in_branch_with_closure(n):
    c = 0
    fs = []
    if n > 0:
        fs.append(lambda: c)
        c += 1
    return c + len(fs)


def test_walrus_in_if_test_binds_in_the_function():
    same_in_python(walrus_in_if_test_then_loop, (-6,), (4,))
    same_traced(walrus_in_if_test_then_loop, (-6,), (4,))


def test_list_changed_in_staged_branch_is_refused_even_with_shared_variables():
    same_in_python(list_changed_in_branch_with_closure, (0,), (1,))
    with pytest.raises(ag.errors.StagingError, match="fs.append"):
        ag.function(list_changed_in_branch_with_closure)(np.int64(1))


def zip_list_of_tensors_with_range(x, n):
    s = 0
    for a, b in zip([x, 2 * x], range(n)):
        s += a * b
    return s


def test_zip_of_a_list_holding_tensors_with_a_tensor_range():
    f = ag.function(zip_list_of_tensors_with_range)
    for n in (0, 1, 2, 5):
        assert f(np.float64(1.5), np.int64(n)) == zip_list_of_tensors_with_range(1.5, n)


def walrus_skipped_by_and_keeps_the_loop_value(x, n):
    a, c = 0, 0
    for i in range(3):
        if (w := n) > 5:
            a = a + i
    if (c > a) and ((w := x) > 1):
        c = 1
    return a, c, w


def test_a_walrus_python_may_skip_does_not_end_a_value():
    same_in_python(walrus_skipped_by_and_keeps_the_loop_value, (9, 4), (9, 7), (-1, 2))


def first_in_inner_loop(xs, n):
    c = 0
    for x in xs:
        for i in range(n):
            w = x * i
            c += 1
    return w, c


def test_first_value_from_an_inner_loop_that_ran_zero_times():
    """The outer loop ran, the inner one did not: Python raises, and so does the graph."""
    f = ag.function(first_in_inner_loop)
    xs = np.array([2, 5, 7])
    got = f(xs, np.int64(3))
    assert [int(v) for v in got] == list(first_in_inner_loop(list(xs), 3))
    with pytest.raises(UnboundLocalError, match="'w' is first assigned"):
        f(xs, np.int64(0))
    with pytest.raises(UnboundLocalError):
        first_in_inner_loop(list(xs), 0)
