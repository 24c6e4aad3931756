"""Returns meet try/except/else/finally, with and loops: converted code on Python values
gives exactly Python's results (the value, the exception, and the path taken)."""

import contextlib

import pytest

import autograph as ag
from tests.converters import try_programs


def helper():
    raise ValueError("helper")


def ret_helper_in_try(x):
    try:
        return helper()
    except ValueError:
        pass
    return x


def ret_in_finally_overrides(x):
    try:
        return x
    finally:
        return x + 1


def ret_in_except_and_else(x):
    try:
        if x > 1:
            raise ValueError
    except ValueError:
        return 2
    else:
        return 3


def ret_in_try_skips_else(x):
    try:
        return x
    except ValueError:
        return -1
    else:
        return 100


def ret_in_loop_in_try(x):
    for i in range(5):
        try:
            if i == x:
                return helper()
        except ValueError:
            continue
    return -1


def ret_in_suppressing_with(x):
    with contextlib.suppress(ValueError):
        return helper()
    return x * 10


def nested_try(x):
    try:
        try:
            return helper()
        finally:
            x += 100
    except ValueError:
        return x


def loop_in_finally_returns(x):
    try:
        return x
    finally:
        for i in range(3):
            if i == 1:
                return i + 50


def finally_guard_after_return(x):
    log = []
    try:
        return x, log
    finally:
        if x > 5:
            return -1, log
        log.append("cleanup")


def break_in_finally_drops_return(x):
    for i in range(3):
        try:
            return i
        finally:
            if x:
                break


def break_in_finally_then_fall_off(x):
    for i in range(3):
        try:
            return i
        finally:
            break


def continue_in_finally(x):
    while True:
        try:
            return x
        finally:
            x += 1
            if x < 5:
                continue


def finally_return_swallows_exception(x):
    try:
        raise KeyError(x)
    finally:
        if x > 0:
            return "swallowed"


def finally_raise_drops_return(x):
    try:
        try:
            return x
        finally:
            raise ValueError
    except ValueError:
        pass
    return "after"


def with_exit_raise_drops_return(x):
    class Exit:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            raise ValueError("exit")
    try:
        with Exit():
            return x
    except ValueError:
        return "exit raised"


def ret_in_with_in_loop(x):
    out = []
    for i in range(4):
        with contextlib.nullcontext():
            out.append(i)
            if i == x:
                return out
    return None


def ret_value_raises_in_else(x):
    try:
        pass
    except ValueError:
        return 1
    else:
        if x > 0:
            return helper()
    return 2


CASES = [ret_helper_in_try, ret_in_finally_overrides, ret_in_except_and_else,
         ret_in_try_skips_else, ret_in_loop_in_try, ret_in_suppressing_with, nested_try,
         loop_in_finally_returns, finally_guard_after_return, break_in_finally_drops_return,
         break_in_finally_then_fall_off, continue_in_finally, finally_return_swallows_exception,
         finally_raise_drops_return, with_exit_raise_drops_return, ret_in_with_in_loop,
         ret_value_raises_in_else]


def _outcome(fn, x):
    try:
        return "value", fn(x)
    except Exception as e:  # noqa: BLE001 - the exception is part of the outcome
        return "raise", type(e), e.args


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [0, 1, 3, 7])
def test_converted_matches_python(fn, x):
    assert _outcome(ag.to_graph(fn), x) == _outcome(fn, x)


def test_issue_reproducer_through_function():
    assert ag.function(ret_helper_in_try)(1) == 1


def test_undefined_return_value_never_escapes():
    for fn in CASES:
        for x in (0, 1, 3, 7):
            result = _outcome(ag.to_graph(fn), x)
            assert "UndefinedReturnValue" not in repr(result), fn.__name__


def test_finally_without_jumps_is_not_rewritten():
    def f(x):
        try:
            return x
        finally:
            x += 1
    assert "finally_exc" not in ag.to_code(f)


@pytest.mark.parametrize("start", range(0, 80, 40))
def test_random_try_programs(start):
    bad = [r for r in (try_programs.check(seed) for seed in range(start, start + 40)) if r]
    assert not bad, bad[0]
