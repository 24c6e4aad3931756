"""The front end under the real converters: every generated line maps to the user's code,
and errors in converted code name the user's line."""

import inspect
import linecache
import traceback

import pytest

import autograph as ag
from autograph.source import origin


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def first_negative(xs):
    for i in range(len(xs)):
        if xs[i] < 0:
            return i
        elif xs[i] == 0:
            continue
    return -1


def blows_up(x):
    if x > 0:
        y = x // 0
    else:
        y = x
    return y


@pytest.mark.parametrize("fn", [collatz, first_negative, blows_up])
def test_every_generated_line_maps_into_the_users_function(fn):
    converted = ag.to_graph(fn)
    generated = getattr(converted, "__autograph_generated__", converted)
    filename = generated.__code__.co_filename
    omap = origin.origin_map(filename)
    assert omap is not None
    first = fn.__code__.co_firstlineno
    last = first + len(inspect.getsourcelines(fn)[0])
    user_lines = open(__file__).read().splitlines()
    text = ag.to_code(fn)
    start = generated.__code__.co_firstlineno
    lines = linecache.getlines(filename)
    for lineno in range(start, start + len(text.splitlines())):
        if not lines[lineno - 1].strip():
            continue
        loc = omap.get(lineno)
        assert loc is not None, f"generated line {lineno} has no origin: {lines[lineno - 1]!r}"
        assert loc.filename == __file__ and first <= loc.lineno < last
        assert loc.source_line == user_lines[loc.lineno - 1]
        assert loc.function_name == fn.__name__


def test_converted_code_still_computes_the_same():
    assert ag.to_graph(collatz)(27) == collatz(27) == 111
    assert ag.to_graph(first_negative)([3, 0, -2]) == first_negative([3, 0, -2]) == 2


def test_error_in_converted_code_names_the_user_line():
    with pytest.raises(ZeroDivisionError) as info:
        ag.to_graph(blows_up)(3)
    text = "".join(traceback.format_exception(info.value))
    line = blows_up.__code__.co_firstlineno + 2
    assert f'File "{__file__}", line {line}, in blows_up\n    y = x // 0' in text
    # autograph's own operator frames are not shown; the generated frame is
    assert "autograph/operators" not in text
    assert "<autograph: blows_up" in text


def closure_after_branch(x):
    g = lambda: a  # noqa: E731
    if x > 0:
        a = 1
    else:
        a = 2
    return g()


def checked_sum(xs, n):
    i = 0
    s = 0.0
    while i < n:
        v = xs[i]
        assert v >= 0, f"negative {v}"
        s += v
        i += 1
    return s


def test_liveness_of_closures_under_the_real_converters():
    import numpy as np
    for x in (3, -3):
        assert ag.to_graph(closure_after_branch)(x) == closure_after_branch(x)
        assert ag.function(closure_after_branch)(np.int64(x)) == closure_after_branch(x)
    xs = np.arange(4.0)
    # v is a loop temporary read by the assert's message lambda: not loop state
    assert ag.function(checked_sum)(xs, np.int64(4)) == checked_sum(xs, 4) == 6.0
