"""Sample functions run in every mode: original Python, converted on Python values, and
converted + traced on NumPy arrays. All three must agree.

Each entry of SAMPLES is (function, list of argument tuples, static): `static` names the
arguments that stay Python values when tracing (everything else becomes a NumPy scalar,
hence a placeholder tensor of the traced graph).
"""

import numpy as np


def break_in_while(n):
    i = 0
    s = 0
    while i < n:
        if s > 20:
            break
        s += i
        i += 1
    return s


def continue_in_for(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        s += i
    return s


def return_in_while(n):
    i = 0
    while i < n:
        if i * i > n:
            return i
        i += 1
    return -1


def return_in_for(n):
    for i in range(1, n):
        if (i * 7) % 5 == 3:
            return i * 10
    return 0


def return_tuple_in_loop(n):
    a, b = 0, 1
    for i in range(n):
        if a > 10:
            return a, b
        a, b = b, a + b
    return -a, -b


def nested_ifs_in_loop(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            if i % 3 == 0:
                s += 3
            else:
                s += 2
        elif i % 5 == 0:
            s -= 1
    return s


def loops_in_if(n):
    s = 0
    if n > 5:
        for i in range(n):
            s += i
    else:
        while n > 0:
            s += n * 2
            n -= 1
    return s


def while_else(n):
    i = 0
    found = 0
    while i < n:
        if i == 7:
            found = 1
            break
        i += 1
    else:
        found = -1
    return found * 100 + i


def for_else(n):
    total = 0
    for i in range(n):
        total += i
        if total > 10:
            break
    else:
        total = -total
    return total


def early_returns(x):
    if x < 0:
        return -x
    if x > 10:
        return 10
    y = x * 2
    return y


def nested_early_return(x):
    if x > 0:
        if x > 100:
            return 100
        x = x + 1
    else:
        x = x - 1
    return x * 3


def clamp_no_else(x):
    if x > 5:
        x = 5
    return x


def elif_chain(x):
    if x < -10:
        r = -2
    elif x < 0:
        r = -1
    elif x == 0:
        r = 0
    elif x < 10:
        r = 1
    else:
        r = 2
    return r


def conditional_expression(x):
    y = x * 2 if x > 3 else x - 1
    return y + (1 if y % 2 == 0 else 0)


def logical_ops(x):
    a = x > 0 and x < 10
    b = x < -5 or x > 5
    c = not (x == 3)
    return (1 if a else 0) + (2 if b else 0) + (4 if c else 0)


def chained_comparison(x):
    return 1 if 0 < x < 10 else 0


def nested_break(n):
    count = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            count += 1
    return count


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def newton_sqrt(x):
    g = x / 2 + 1.0
    while abs(g * g - x) > 1e-9:
        g = (g + x / g) / 2
    return g


def closure(n):
    k = 3

    def add_k(v):
        return v + k if v > 0 else v - k

    return add_k(n) * 2


class Counter:
    def __init__(self, step):
        self.step = step

    def run(self, n):
        total = 0
        i = 0
        while i < n:
            total += self.step
            i += 1
        return total


def method_call(n):
    return Counter(2).run(n)


def fact(k):
    return 1 if k <= 1 else k * fact(k - 1)


def recursion_on_python_values(x, k):
    return x * fact(k)


def helper_with_loop(v):
    while v > 10:
        v = v - 7
    return v


def calls_helper(x):
    return helper_with_loop(x) + helper_with_loop(x + 20)


def unrolled_python_list(x):
    s = x
    for w in [1, 2, 3]:
        s = s * w + 1
    return s


def python_while_then_tensor(x):
    # the condition starts as a Python bool and becomes a tensor after one iteration
    i = 0
    while i < 3:
        i = i + x
    return i


def lambda_call(x):
    f = lambda v: v * 2 if v > 0 else -v  # noqa: E731
    return f(x) + f(x - 5)


def float_loop(x):
    y = x
    steps = 0
    while y > 1.0:
        y = y / 3.0
        steps += 1
    return steps


SAMPLES = [
    (break_in_while, [(0,), (3,), (10,), (40,)], ()),
    (continue_in_for, [(0,), (5,), (10,)], ()),
    (return_in_while, [(0,), (5,), (30,)], ()),
    (return_in_for, [(1,), (2,), (5,), (20,)], ()),
    (return_tuple_in_loop, [(0,), (3,), (12,)], ()),
    (nested_ifs_in_loop, [(0,), (7,), (31,)], ()),
    (loops_in_if, [(0,), (3,), (8,)], ()),
    (while_else, [(0,), (5,), (12,)], ()),
    (for_else, [(0,), (3,), (8,)], ()),
    (early_returns, [(-4,), (0,), (7,), (50,)], ()),
    (nested_early_return, [(-3,), (5,), (500,)], ()),
    (clamp_no_else, [(2,), (9,)], ()),
    (elif_chain, [(-20,), (-3,), (0,), (4,), (40,)], ()),
    (conditional_expression, [(1,), (4,), (5,)], ()),
    (logical_ops, [(-7,), (0,), (3,), (7,), (12,)], ()),
    (chained_comparison, [(-1,), (5,), (10,)], ()),
    (nested_break, [(0,), (3,), (6,)], ()),
    (collatz, [(1,), (6,), (27,)], ()),
    (newton_sqrt, [(2.0,), (9.0,), (0.5,)], ()),
    (closure, [(-2,), (4,)], ()),
    (method_call, [(0,), (5,)], ()),
    (recursion_on_python_values, [(2, 5), (3, 1)], ("k",)),
    (calls_helper, [(3,), (30,)], ()),
    (unrolled_python_list, [(1,), (4,)], ()),
    (python_while_then_tensor, [(1,), (2,), (5,)], ()),
    (lambda_call, [(3,), (-2,), (8,)], ()),
    (float_loop, [(0.5,), (10.0,), (100.0,)], ()),
]


def short_circuit_side_effects(x):
    """Python-only sample: side effects show which operands were evaluated."""
    log = []

    def check(v, tag):
        log.append(tag)
        return v

    a = check(x > 0, "a") and check(x < 10, "b")
    b = check(x > 5, "c") or check(x < -5, "d")
    c = check(x, "e") and check(0, "f") and check(1, "g")
    return a, b, c, tuple(log)


def maybe_unbound(x):
    """Python-only sample: reading a variable assigned in one branch only."""
    if x > 0:
        y = 1
    return y  # noqa: F821 - unbound when x <= 0, on purpose


def generator_user(n):
    """Python-only sample: generators run as Python."""
    def gen():
        for i in range(n):
            yield i * i
    return sum(gen())


PYTHON_ONLY = [
    (short_circuit_side_effects, [(-7,), (3,), (7,), (20,)]),
    (generator_user, [(0,), (4,)]),
]


def as_array(value):
    """The NumPy scalar a Python value becomes for tracing."""
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    return value
