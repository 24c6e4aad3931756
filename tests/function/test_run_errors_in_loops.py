"""Run-time errors inside staged loops name the user's line, the loop (and the loops around
it) with the iteration that failed, and the values of the loop's scalar variables then.

The reference is plain Python: each sample function is run as it is (NumPy on arrays), and
its failing frame's locals say which iteration failed and what the loop's variables held.
The graph, run by codegen (an `ag.function` call) and by the interpreter, must raise the
same exception type, at the same user line, and report the same iteration and values.
"""

import inspect
import re
import sys

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import interpreter

X5 = np.arange(5.0)


def index_for(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def index_while(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + x[i] * 2
        i += 1
    return s


def negative_index(x, n):
    s = 0.0
    for i in range(n):
        s += x[-i - 3]
    return s


def dot_mismatch(x, n):
    s = 0.0
    for i in range(n):
        s += np.dot(x[i:i + 2], np.ones(2))
    return s


def broadcast_mismatch(x, n):
    s = 0.0
    for i in range(n):
        s += np.sum(x[i:i + 2] + np.ones(2))
    return s


def reshape_fails(x, n):
    s = 0.0
    for i in range(n):
        s += np.sum(np.reshape(x[:2 * i], (2, -1)))
    return s


def stack_mismatch(x, n):
    s = 0.0
    for i in range(n):
        s += np.sum(np.stack([x[i:i + 2], np.ones(2)]))
    return s


def take_out_of_bounds(x, n):
    s = 0.0
    for i in range(n):
        s += np.take(x, i + 2)
    return s


def setitem_out_of_bounds(x, n):
    y = np.zeros(5)
    for i in range(n):
        y[i + 2] = x[i]
    return y


def int_division_by_zero(x, n):
    k = np.int64(0)
    for i in range(n):
        k += np.int64(10) // (np.int64(3) - i)
    return k


def float_division_by_zero(x, n):
    s = 0.0
    for i in range(n):
        s += 1.0 / (x[i] - 2.0)
    return s


def overflow(x, n):
    p = np.float64(1.0)
    for i in range(n):
        p = p * 1e100
    return p


def invalid_sqrt(x, n):
    s = 0.0
    for i in range(n):
        s += np.sqrt(2.0 - x[i])
    return s


def log_of_zero(x, n):
    s = 0.0
    for i in range(n):
        s += np.log(x[4 - i])
    return s


def invalid_cast(x, n):
    k = np.int64(0)
    for i in range(n):
        k += (x[i] * 1e300).astype(np.int64)
    return k


def negative_int_power(x, n):
    k = np.int64(0)
    for i in range(n):
        k += np.int64(2) ** (np.int64(2) - i)
    return k


def arange_zero_step(x, n):
    s = 0.0
    for i in range(n):
        s += np.sum(np.arange(0, 5, 2 - i))
    return s


def failing_assert(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
        assert s < 3.5, "s too big"
    return s


def singular_inverse(x, n):
    s = 0.0
    for i in range(n):
        s += np.sum(np.linalg.inv(np.eye(2) * (x[i] - 3.0)))
    return s


def cholesky_not_positive(x, n):
    s = 0.0
    for i in range(n):
        s += np.sum(np.linalg.cholesky(np.eye(2) * (2.0 - x[i])))
    return s


def in_branch(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 2.0:
            s += x[i + 1]
        else:
            s -= x[i]
    return s


def nan_by_check_numerics(x, n):
    s = 0.0
    for i in range(n):
        s += np.log(3.0 - x[i])
    return s


def inf_by_check_numerics(x, n):
    s = 0.0
    j = 0
    while j < n:
        s = s + x[j] / (x[j] - 2.0)
        j += 1
    return s


def nested(x, n):
    s = 0.0
    for i in range(n):
        j = 0
        while j < i:
            s += x[i + j]
            j += 1
    return s


CASES = [   # (function, its failing line, error type, np.errstate settings)
    (index_for, "s += x[i]", IndexError, {}),
    (index_while, "s = s + x[i] * 2", IndexError, {}),
    (negative_index, "s += x[-i - 3]", IndexError, {}),
    (dot_mismatch, "s += np.dot(x[i:i + 2], np.ones(2))", ValueError, {}),
    (broadcast_mismatch, "s += np.sum(x[i:i + 2] + np.ones(2))", ValueError, {}),
    (reshape_fails, "s += np.sum(np.reshape(x[:2 * i], (2, -1)))", ValueError, {}),
    (stack_mismatch, "s += np.sum(np.stack([x[i:i + 2], np.ones(2)]))", ValueError, {}),
    (take_out_of_bounds, "s += np.take(x, i + 2)", IndexError, {}),
    (setitem_out_of_bounds, "y[i + 2] = x[i]", IndexError, {}),
    (int_division_by_zero, "k += np.int64(10) // (np.int64(3) - i)", FloatingPointError,
     {"divide": "raise"}),
    (float_division_by_zero, "s += 1.0 / (x[i] - 2.0)", FloatingPointError,
     {"divide": "raise"}),
    (overflow, "p = p * 1e100", FloatingPointError, {"over": "raise"}),
    (invalid_sqrt, "s += np.sqrt(2.0 - x[i])", FloatingPointError, {"invalid": "raise"}),
    (log_of_zero, "s += np.log(x[4 - i])", FloatingPointError, {"divide": "raise"}),
    (invalid_cast, "k += (x[i] * 1e300).astype(np.int64)", FloatingPointError,
     {"invalid": "raise"}),
    (negative_int_power, "k += np.int64(2) ** (np.int64(2) - i)", ValueError, {}),
    (arange_zero_step, "s += np.sum(np.arange(0, 5, 2 - i))", ZeroDivisionError, {}),
    (failing_assert, 'assert s < 3.5, "s too big"', AssertionError, {}),
    (singular_inverse, "s += np.sum(np.linalg.inv(np.eye(2) * (x[i] - 3.0)))",
     np.linalg.LinAlgError, {}),
    (cholesky_not_positive, "s += np.sum(np.linalg.cholesky(np.eye(2) * (2.0 - x[i])))",
     np.linalg.LinAlgError, {}),
    (in_branch, "s += x[i + 1]", IndexError, {}),
    (nested, "s += x[i + j]", IndexError, {}),
    # NaN and infinity stopped by ag.config.check_numerics (Python: under np.errstate)
    (nan_by_check_numerics, "s += np.log(3.0 - x[i])", ag.errors.NonFiniteError, "numerics"),
    (inf_by_check_numerics, "s = s + x[j] / (x[j] - 2.0)", ag.errors.NonFiniteError,
     "numerics"),
]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def loop_lines(fn):
    """The lines of `fn`'s loops, innermost first (the samples nest at most two)."""
    lines, start = inspect.getsourcelines(fn)
    found = [start + k for k, line in enumerate(lines)
             if line.strip().startswith(("for ", "while "))]
    return found[::-1]


def python_failure(fn, args, errstate):
    """(error type, the failing frame's locals, {loop line: the locals when its last
    iteration began}) of `fn` run as plain Python (a trace function snapshots the locals
    at each pass of a loop's header line)."""
    headers = set(loop_lines(fn))
    began = {}

    def trace(frame, event, arg):
        if frame.f_code is not fn.__code__:
            return None
        if event == "line" and frame.f_lineno in headers:
            began[frame.f_lineno] = dict(frame.f_locals)
        return trace

    with np.errstate(**errstate):
        sys.settrace(trace)
        try:
            fn(*args)
        except Exception as exc:
            tb = exc.__traceback__
            while tb.tb_frame.f_code is not fn.__code__:
                tb = tb.tb_next
            return type(exc), dict(tb.tb_frame.f_locals), began
        finally:
            sys.settrace(None)
    raise AssertionError(f"{fn.__name__} did not fail in Python")


def message_of(exc):
    return str(exc) + "\n" + "\n".join(getattr(exc, "__notes__", []))


def _pairs(text):
    return dict(pair.split(" = ") for pair in text.split(", ")) if text else {}


def loop_reports(message):
    """[(line, iteration, {name: value it began with}, {name: value now}, file)] of the
    message's loop lines, innermost first."""
    found = []
    for m in re.finditer(r"in the loop at (\S+?):(\d+) \(.*?\), iteration (\d+)"
                         r"(?:, which began with ([^;\n]*))?(?:; now ([^\n]*))?", message):
        found.append((int(m.group(2)), int(m.group(3)), _pairs(m.group(4)),
                      _pairs(m.group(5)), m.group(1)))
    return found


def user_scalars(values):
    return {k for k, v in values.items()
            if k not in ("n", "x") and k.isidentifier() and np.ndim(v) == 0 and not isinstance(v, range)}


def check_report(exc, fn, text, python_locals, python_began):
    message = message_of(exc)
    assert f"{__file__}:{line_of(fn, text)}" in message, message
    assert text in message, message
    reports = loop_reports(message)
    loops = loop_lines(fn)
    assert [r[0] for r in reports] == loops, message
    assert all(r[4] == __file__ for r in reports), message
    # the iteration of each loop is the Python counter's value there (`i`, then `j` inside)
    counters = (["i"] if "i" in python_locals else ["j"]) if len(loops) == 1 else ["j", "i"]
    for (line, iteration, began, now, _), counter in zip(reports, counters):
        assert iteration == python_locals[counter], (message, python_locals)
        # values the iteration began with are Python's when its header line last ran;
        # values "now" are Python's locals where it failed
        for name, value in began.items():
            assert np.isclose(float(value), float(python_began[line][name])), (name, message)
        for name, value in now.items():
            assert np.isclose(float(value), float(python_locals[name])), (name, message)
    # the innermost loop shows every scalar of the user's (the counter `i` of a counted
    # for loop is its iteration, and not a loop variable)
    began, now = reports[0][2], reports[0][3]
    assert not set(began) & set(now), message
    expected = user_scalars(python_began[loops[0]]) - ({"i"} if loops[0] != loops[-1] or
                                                        "for " in message else set())
    assert set(began) | set(now) <= user_scalars(python_locals), message
    return expected, set(began) | set(now)


@pytest.mark.parametrize("fn, text, error, errstate", CASES, ids=[c[0].__name__ for c in CASES])
def test_error_names_line_loop_iteration_and_values(fn, text, error, errstate):
    numerics = errstate == "numerics"
    n = 5 if numerics else 6     # (past 5 the index fails: the unchecked run must not)
    args = (X5.copy(), np.int64(n))
    if numerics:   # graphs: ag.config.check_numerics; Python: every NumPy warning raises
        errstate = {"all": "raise"}
    python_error, python_locals, python_began = python_failure(fn, (X5.copy(), n), errstate)
    assert issubclass(python_error, FloatingPointError if numerics else error)
    f = ag.function(fn)
    if numerics:
        with np.errstate(all="ignore"):
            assert not np.isfinite(f(*args))     # unchecked: the NaN or inf comes out
            with ag.config.check_numerics(True), pytest.raises(error) as info:
                f(*args)
        check_report(info.value, fn, text, python_locals, python_began)
        assert "check_numerics: " in str(info.value), str(info.value)
        return           # (the interpreter, the reference executor, checks nothing)
    with np.errstate(**errstate), pytest.raises(error) as info:
        f(*args)
    check_report(info.value, fn, text, python_locals, python_began)
    graph = f.get_concrete_function(*args).graph
    with np.errstate(**errstate), pytest.raises(error) as info:
        interpreter.run(graph, list(args))
    # the interpreter holds each iteration's values until its end: all "began with"
    expected, shown = check_report(info.value, fn, text, python_locals, python_began)
    assert expected <= shown, (expected, message_of(info.value))


def test_twenty_kinds():
    assert len(CASES) >= 20


def test_while_loop_of_unknown_length_counts_its_iterations():
    def halve(n, x):
        steps = 0
        while n > 1:
            n = n // 2
            steps += 1
            x = x[1:]
            total = x[0]
        return total, steps
    f = ag.function(halve)
    with pytest.raises(IndexError) as info:
        f(np.int64(1000), np.arange(4.0))
    message = message_of(info.value)
    (line, iteration, began, now, _), = loop_reports(message)
    # x has 4 elements: the 4th iteration (number 3) slices it empty and reads x[0], when
    # n and steps hold their new values already (as Python's locals would)
    assert iteration == 3 and now == {"n": "62", "steps": "4"}, message


def test_invented_loop_variables_are_not_shown():
    def with_break(x, n):
        s = 0.0
        for i in range(n):
            if s > 100.0:
                break
            s += x[i]
        return s
    f = ag.function(with_break)
    with pytest.raises(IndexError) as info:
        f(np.ones(3), np.int64(6))
    message = message_of(info.value)
    assert "break_" not in message and "<loop counter>" not in message, message
    (_, iteration, began, now, _), = loop_reports(message)
    assert iteration == 3 and began == {"s": "3.0"} and not now, message


def test_generated_code_keeps_a_counter_only_where_nothing_counts():
    """A counted for loop keeps no counter of its own (its iteration is read from its
    counter), nor does a while loop with a variable stepped by a constant (collatz's
    `steps`); a while loop with neither counts with one Python int."""
    from autograph.runtime.exec import codegen

    def source(fn, *args):
        return codegen.source_of(ag.function(fn).get_concrete_function(*args).graph)

    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps

    def growth(x, limit):
        while x < limit:
            x = x * 1.5 + 0.1
        return x
    assert "_iteration" not in source(index_for, X5, np.int64(5))
    assert "_iteration" not in source(collatz, np.int64(27))
    text = source(growth, np.float64(1.0), np.float64(10.0))
    assert text.count("while_loop_iteration += 1") == 1, text
    # and the iterations they report agree: x passes 10 in the 5th iteration (number 4)
    def growth_fails(x, limit, v):
        while x < limit:
            x = x * 1.5 + 0.1
            v = v[1:]
            last = v[0]
        return x + last
    with pytest.raises(IndexError) as info:
        ag.function(growth_fails)(np.float64(1.0), np.float64(100.0), np.arange(4.0))
    (_, iteration, began, now, _), = loop_reports(message_of(info.value))
    assert iteration == 3, message_of(info.value)


def test_a_stepped_variable_counts_before_and_after_its_step():
    def stepped(x, k):
        total = 0.0
        while k < 100:
            total += x[k]
            k += 3
            total += x[k - 1]
        return total
    f = ag.function(stepped)
    x = np.arange(10.0)
    for k0, fails_at, expected in ((1, "total += x[k]", 3), (3, "total += x[k - 1]", 2)):
        with pytest.raises(IndexError) as info:
            f(x, np.int64(k0))
        message = message_of(info.value)
        assert f":{line_of(stepped, fails_at)}" in message, message
        (_, iteration, began, now, _), = loop_reports(message)
        # from k = 1, x[k] reads past 9 when k = 10 (iteration 3, before the step); from
        # k = 3, x[k - 1] does when k = 9 (iteration 2, after the step: k is 12 there)
        assert iteration == expected, message
