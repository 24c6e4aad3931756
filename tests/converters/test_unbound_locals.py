"""A local variable read before it has a value raises UnboundLocalError in converted code
wherever Python does (differential run: NameError was raised instead where the only
assignment sat in code after a break/continue/return, which the jump passes drop, and
TypeError for `x += ...`). Each function is run as Python and converted, on inputs that
take each path; the error class and the variable's name must agree."""

import numpy as np
import pytest

import autograph as ag


def if_branch(x):
    if x > 0:
        y = 1
    return y


def aug_after_if(x):
    if x > 0:
        y = 1
    y += 1
    return y


def aug_in_loop(x):
    for i in range(x):
        y = i
    y *= 2
    return y


def while_body(x):
    i = 0
    while i < x:
        y = i
        i += 1
    return y


def walrus_after_break(x):
    for i in range(x):
        break
        if (w := i) > 4:
            pass
    return w


def assigned_after_continue(x):
    for i in range(x):
        continue
        z = i
    return z


def assigned_after_return(x):
    if x > 5:
        return 0
        q = 1
    return q


def assigned_after_raise(x):
    if x > 5:
        raise ValueError("big")
        q = 1
    if x > 3:
        q = 2
    return q


def import_after_break(x):
    for i in range(x):
        break
        import math as m
    return m.pi


def for_target_after_break(x):
    for i in range(x):
        break
        for k in range(3):
            pass
    return k


def with_and_except_names_after_continue(x):
    for i in range(x):
        continue
        try:
            raise KeyError
        except KeyError as err:
            e = err
    return e


def walrus_in_comprehension_after_break(x):
    for i in range(x):
        break
        _ = [(v := j) for j in range(3)]
    return v


def deleted(x):
    y = 1
    del y
    if x > 0:
        y = 2
    return y


def nested_function_own_dead_local(x):
    def g(n):
        for i in range(n):
            break
            u = i
        return u
    return g(x)


def read_in_loop_before_assignment(x):
    total = 0
    for i in range(3):
        if i == x:
            z = i
        total += z
    return total


def nested_if_paths(x):
    if x > 0:
        if x > 2:
            a = 1
        else:
            return -1
    else:
        a = 2
    return a


def free_variable(x):          # a genuine free variable: NameError, not UnboundLocalError
    def g():
        return t
    if x > 0:
        t = 4
    return g()


def comprehension_reads(x):
    if x > 0:
        k = 2
    return [k * j for j in range(3)]


def shared_with_closure(x):      # `t` is a cell: the generated branches share it
    if x > 4:
        t = 1
    if x > 0:
        t = t * 2 + 1
    g = lambda: t
    return g()


def user_nonlocal_unbound(x):    # Python: NameError (a free variable), kept as is
    def inc():
        nonlocal t
        t = t + 1
    if x > 0:
        t = 0
    inc()
    return t


FUNCTIONS = [shared_with_closure, user_nonlocal_unbound, if_branch, aug_after_if, aug_in_loop, while_body, walrus_after_break,
             assigned_after_continue, assigned_after_return, assigned_after_raise,
             import_after_break, for_target_after_break, with_and_except_names_after_continue,
             walrus_in_comprehension_after_break, deleted, nested_function_own_dead_local,
             read_in_loop_before_assignment, nested_if_paths, free_variable,
             comprehension_reads]


def _outcome(call):
    try:
        return "value", call()
    except NameError as exc:
        return type(exc), str(exc)
    except Exception as exc:
        return type(exc), None


def _name_in(message):
    return message.split("'")[1] if "'" in message else None


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [-1, 0, 1, 3, 6])
@pytest.mark.parametrize("how", ["converted", "traced"])
def test_same_error_as_python(fn, x, how):
    want_kind, want = _outcome(lambda: fn(x))
    run = ag.to_graph(fn) if how == "converted" else ag.function(fn)
    got_kind, got = _outcome(lambda: run(x))
    if want_kind == "value":
        assert got_kind == "value" and np.all(np.asarray(got) == np.asarray(want)), got
    elif want_kind is UnboundLocalError:
        assert got_kind is UnboundLocalError, (got_kind, got)
        assert _name_in(got) == _name_in(want)
    elif want_kind is NameError:   # (UnboundLocalError is a NameError too)
        assert issubclass(got_kind, NameError), (got_kind, got)
        assert _name_in(got) == _name_in(want)
    else:
        assert got_kind is want_kind


def test_the_error_names_the_users_line():
    import traceback
    try:
        ag.function(walrus_after_break)(0)
    except UnboundLocalError as caught:
        exc = caught
        frames = traceback.extract_tb(exc.__traceback__)
    else:
        raise AssertionError("no error")
    mine = [f for f in frames if f.filename == __file__]
    assert mine[-1].lineno == walrus_after_break.__code__.co_firstlineno + 5
    assert mine[-1].line == "return w"
    assert "'w'" in str(exc)


@pytest.mark.parametrize("fn", [aug_after_if, while_body])
def test_tensor_paths_refuse_or_raise_unbound(fn):
    """Under a tensor condition the graph holds every path: a clear refusal (still an
    UnboundLocalError for reads) or the graph's own check, never a value."""
    from autograph import errors
    with pytest.raises((UnboundLocalError, errors.StagingError)):
        ag.function(fn)(np.int64(0))
