"""Programs of the running-context matrix (tests/running/test_matrix.py) beside the
shared samples and the differential generator's programs: long loop bodies (50+ lines: jumps
that need EXTENDED_ARG), deep nesting, methods, closures, lambdas, and the wrappers people
put around functions (functools.wraps decorators, functools.partial, staticmethod,
classmethod, dataclass methods, callable objects).

This file is read as text and concatenated into one corpus module, which each context of
the matrix runs its own way: it must stay self-contained (NumPy and autograph only).
CASES holds (label, callable, argument tuples, static parameter names, traced): the
matrix compares the callable converted (`ag.to_graph`) and, when `traced`, traced
(`ag.function`, non-static arguments as NumPy values) with plain Python.
"""

import dataclasses
import functools

import numpy as np

import autograph as ag


def run_long_body(x, k):
    for i in ag.range(k):
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
        x = np.tanh(x) * 0.9 + 0.4
        x = np.tanh(x) * 0.9 + 0.5
        x = np.tanh(x) * 0.9 + 0.6
        if x > 0.6:
            x = x - 2 * 0.01
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
        x = np.tanh(x) * 0.9 + 0.4
        x = np.tanh(x) * 0.9 + 0.5
        x = np.tanh(x) * 0.9 + 0.6
        x = np.tanh(x) * 0.9 + 0.7
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
        x = np.tanh(x) * 0.9 + 0.4
        x = np.tanh(x) * 0.9 + 0.5
        if x > 1.9:
            x = x - 5 * 0.01
        x = np.tanh(x) * 0.9 + 0.7
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
        x = np.tanh(x) * 0.9 + 0.4
        x = np.tanh(x) * 0.9 + 0.5
        x = np.tanh(x) * 0.9 + 0.6
        x = np.tanh(x) * 0.9 + 0.7
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
        x = np.tanh(x) * 0.9 + 0.4
        if x > 3.2:
            x = x - 3 * 0.01
        x = np.tanh(x) * 0.9 + 0.6
        x = np.tanh(x) * 0.9 + 0.7
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
        x = np.tanh(x) * 0.9 + 0.4
        x = np.tanh(x) * 0.9 + 0.5
        x = np.tanh(x) * 0.9 + 0.6
        x = np.tanh(x) * 0.9 + 0.7
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
        if x > 4.5:
            x = x - 1 * 0.01
        x = np.tanh(x) * 0.9 + 0.5
        x = np.tanh(x) * 0.9 + 0.6
        x = np.tanh(x) * 0.9 + 0.7
        x = np.tanh(x) * 0.9 + 0.1
        x = np.tanh(x) * 0.9 + 0.2
        x = np.tanh(x) * 0.9 + 0.3
    return x


def run_long_while(acc, n):
    i = 0
    while i < n:
        acc = acc + np.sin(acc * 1) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 3) * 0.01 + 1 * 0.001
        acc = acc + np.sin(acc * 4) * 0.01 + 2 * 0.001
        acc = acc + np.sin(acc * 1) * 0.01 + 0 * 0.001
        acc = acc + np.sin(acc * 2) * 0.01 + 1 * 0.001
        i += 1
    return acc


def issue27_reproducer(x, k):
    for i in ag.range(k):
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
        x = np.tanh(x) + 0.5
    return x


def run_deep_nesting(x, n):
    total = 0
    for i in range(n):
        if i % 2 == 0:
            j = 0
            while j < i:
                if x > j:
                    for k in range(2):
                        if k == 1:
                            if total > 40:
                                break
                            total += k + j
                        else:
                            total -= 1
                else:
                    total += 3
                j += 1
        elif x > 5:
            total += i
        else:
            continue
    return total


class Accumulator:
    def __init__(self, scale):
        self.scale = scale

    def run(self, x, n):
        total = x * 0
        for i in range(n):
            if total < 10 * self.scale:
                total = total + x * self.scale
            else:
                total = total - 1
        return total

    def _private_step(self, x):
        return x * 2 if x > 0 else -x

    def uses_private(self, x):
        return self._private_step(x) + 1


def make_scaler(k):
    offset = k + 1

    def scaled(x, n):
        out = x
        while n > 0:
            out = out * k + offset if out < 100 else out - offset
            n -= 1
        return out
    return scaled


run_closure = make_scaler(2)
run_lambda = lambda x: x * x if x > 1 else -x + 1   # noqa: E731


def run_lambdas_in_loop(x, n):
    fs = []
    for i in range(3):
        fs.append(lambda v, i=i: v * i)
    total = 0.0
    for i in range(n):
        total = total + sum(f(x) for f in fs)
    return total


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@logged
def run_wrapped(x, n):
    while n > 0:
        x = x + n if x < 10 else x - 1
        n -= 1
    return x


def power_loop(x, k):
    out = x * 0 + 1
    for _ in range(k):
        out = out * x
    return out


run_partial = functools.partial(power_loop, k=3)


class Ops:
    factor = 3

    @staticmethod
    def static_clip(x):
        if x > 5:
            return 5 + 0 * x
        return x

    @classmethod
    def class_scale(cls, x, n):
        i = 0
        while i < n:
            x = x * cls.factor if x < 50 else x
            i += 1
        return x


@dataclasses.dataclass
class Params:
    rate: float
    steps: int

    def apply(self, x):
        for i in range(self.steps):
            if x > 1:
                x = x * self.rate
            else:
                x = x + self.rate
        return x


class Stepper:
    def __init__(self, step):
        self.step = step

    def __call__(self, x, n):
        count = 0
        while x < n:
            x = x + self.step
            count += 1
        return count


def edited_later(x):
    """The reload context edits this function's file after import (no case converts it
    before): converting the function object from before the edit must be refused."""
    if x > 0:
        return x + 1
    return -x


CASES = [
    ("issue 27's reproducer (a nine-line body)", issue27_reproducer, [(0.1, 3)], (), True),
    ("long loop body", run_long_body, [(0.1, 3), (0.7, 0)], (), True),
    ("long while body", run_long_while, [(0.2, 4), (1.5, 1)], (), True),
    ("deep nesting", run_deep_nesting, [(3, 6), (7, 5), (0, 4)], (), True),
    ("method", Accumulator(2.0).run, [(1.5, 12), (0.0, 3)], (), True),
    ("private method", Accumulator(1.0).uses_private, [(2.0,), (-3.0,)], (), True),
    ("closure", run_closure, [(1.0, 5), (3.0, 2)], (), True),
    ("lambda", run_lambda, [(3.0,), (0.5,)], (), True),
    ("lambdas in a loop", run_lambdas_in_loop, [(2.0, 3), (1.0, 0)], (), True),
    ("functools.wraps decorator", run_wrapped, [(1, 5), (12, 3)], (), True),
    ("functools.partial", run_partial, [(2.0,), (-1.5,)], (), True),
    ("staticmethod", Ops.static_clip, [(7.0,), (2.0,)], (), True),
    ("classmethod", Ops.class_scale, [(2.0, 4), (60.0, 2)], (), True),
    ("dataclass method", Params(0.5, 4).apply, [(3.0,), (0.5,)], (), True),
    ("callable object", Stepper(1.5), [(0.0, 10.0), (12.0, 3.0)], (), True),
]
