"""Variables bound on every path Python takes, though not on every branch (issue 31, item 4).

`for ... : if c: result = d; break` / `else: result = n` always binds `result` in Python:
the break path carries the value out of the loop and the else clause binds it on the other.
Under a tensor condition the `if` gives `result` a placeholder plus a flag on the branch that
does not bind it, and reads through `ag__.ld` check the flag: each program below gives
Python's answer traced (ag.function) and converted on Python values, and where Python raises
UnboundLocalError so does the graph.
"""

import numpy as np
import pytest

import autograph as ag
from autograph import api


def smallest_factor(n):
    for d in range(2, n):
        if n % d == 0:
            result = d
            break
    else:
        result = n
    return result


def smallest_factor_while(n):
    d = 2
    while d < n:
        if n % d == 0:
            result = d
            break
        d += 1
    else:
        result = n
    return result


def factor_and_cofactor(n):
    for d in range(2, n):
        if n % d == 0:
            a = d
            b = n // d
            break
    else:
        a = n
        b = 1
    return a * 100 + b


def uses_bound_value_after_break(n):
    total = 0
    for d in range(2, n):
        if n % d == 0:
            found = d * 3
            break
    else:
        found = -1
    total += found
    found += 1
    return total + found


def nested_inner_break(n):
    count = 0
    for i in range(1, n):
        for j in range(1, n):
            if i * j > n:
                hit = j
                break
        else:
            hit = 0
        count += hit
    return count


def break_in_outer_from_else_of_inner(n):
    for i in range(2, n):
        for j in range(2, i):
            if i % j == 0:
                break
        else:
            last_prime = i
            if i * i > n:
                answer = i
                break
    else:
        answer = -1
    return answer


def return_inside_loop(n):
    for d in range(2, n):
        if n % d == 0:
            q = n // d
            if q > 3:
                return q
            r = d
            break
    else:
        r = 0
    return r + 1000


def continue_and_break(n):
    for d in range(1, n):
        if d % 2 == 0:
            continue
        if d * d > n:
            odd = d
            break
    else:
        odd = 99
    return odd


def float_value_bound_on_break(x, n):
    for i in range(n):
        x = x * 0.5
        if x < 1.0:
            small = x + i
            break
    else:
        small = x
    return small


PROGRAMS = [smallest_factor, smallest_factor_while, factor_and_cofactor,
            uses_bound_value_after_break, nested_inner_break,
            break_in_outer_from_else_of_inner, return_inside_loop, continue_and_break]
INPUTS = [2, 3, 4, 9, 12, 13, 25, 30]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_traced_and_converted_give_pythons_answer(fn):
    traced = ag.function(fn)
    converted = api.to_graph(fn)
    for n in INPUTS:
        want = fn(n)
        assert converted(n) == want, n
        assert traced(np.int64(n)) == want, n


def test_float_value_carried_out_by_break():
    traced = ag.function(float_value_bound_on_break)
    for x, n in [(10.0, 2), (10.0, 8), (0.5, 3), (100.0, 0)]:
        got = traced(np.float64(x), np.int64(n))
        assert np.isclose(got, float_value_bound_on_break(x, n)), (x, n)


def test_to_code_shows_no_extra_machinery():
    code = ag.to_code(smallest_factor)
    assert "ag__.ld(result)" in code and "Undefined('result')" in code
    assert "placeholder" not in code and "flag" not in code


# -- where Python raises, the graph raises ---------------------------------------------------

def break_without_else(n):
    for d in range(2, n):
        if n % d == 0:
            result = d
            break
    return result  # noqa: F821


def bound_when_no_break(n):
    for d in range(2, n):
        if n % d == 0:
            break
    else:
        result = n
    return result  # noqa: F821


def read_before_bound_in_loop(n):
    for d in range(2, n):
        if d > 3:
            seen = d
        if n % d == 0:
            return seen  # noqa: F821
    return 0


@pytest.mark.parametrize("fn", [break_without_else, bound_when_no_break,
                                read_before_bound_in_loop], ids=lambda f: f.__name__)
def test_unbound_paths_raise_like_python(fn):
    traced = ag.function(fn)
    for n in [4, 7, 9, 10, 13, 25]:
        try:
            want = fn(n)
        except UnboundLocalError:
            with pytest.raises(UnboundLocalError, match="'(result|seen)'"):
                traced(np.int64(n))
        else:
            assert traced(np.int64(n)) == want, n


def test_augmented_assignment_checks_the_flag():
    def f(x):
        if x > 0:
            y = x
        y += 1
        return y

    traced = ag.function(f)
    assert traced(np.int64(3)) == f(3) == 4
    with pytest.raises(UnboundLocalError, match="'y'"):
        traced(np.int64(-3))


def test_native_loop_gives_pythons_answer():
    native = ag.function(smallest_factor, jit_compile=True)
    for n in INPUTS:
        assert native(np.int64(n)) == smallest_factor(n), n


@pytest.mark.parametrize("n", [0, 2, 8])
def test_gradient_through_value_bound_on_break(n):
    def loss(x):
        return float_value_bound_on_break(x, np.int64(n)) * 2.0

    x, h = np.float64(10.0), 1e-6
    want = (loss(x + h) - loss(x - h)) / (2 * h)
    assert np.isclose(ag.grad(loss)(x), want, atol=1e-6)
