"""A loop's stacks are preallocated when its trip count is known before it starts (range
loops, counter loops, maximum_iterations) and grow otherwise: counted, not timed."""

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff import stacks


class _CountingList(list):
    appends = 0

    def append(self, v):
        type(self).appends += 1
        super().append(v)


@pytest.fixture
def counted(monkeypatch):
    """Every stack made while running: [capacity]; and how many pushes appended."""
    made = []

    class Counting(stacks.Stack):
        __slots__ = ()

        def __init__(self, items):
            made.append(len(items))
            super().__init__(_CountingList(items))

    _CountingList.appends = 0
    monkeypatch.setattr(stacks, "Stack", Counting)
    return made


def _range_loop(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * x
    return np.sum(y)


def _range_step(x, n):
    y = x
    for i in range(2, n, 3):
        y = np.sin(y) * x + 0.1
    return np.sum(y)


def _range_break(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * x * 1.5
        if np.sum(y) > 100.0:
            break
    return np.sum(y)


def _counter_loop(x, n):
    y = x
    i = 0
    while i < n:
        y = np.tanh(y + x)
        i += 1
    return np.sum(y)


def _countdown(x, n):
    y = x
    i = n
    while i > 0:
        y = np.tanh(y * x)
        i -= 1
    return np.sum(y)


@pytest.mark.parametrize("f, trips", [(_range_loop, 40), (_range_step, 13),
                                      (_range_break, 40), (_counter_loop, 40),
                                      # the rules read y and tanh(y * x), its next value:
                                      # one stack of the 41 states y0 ... y40
                                      (_countdown, 41)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_known_trip_count_preallocates(counted, f, trips):
    x, n = np.array([0.3, 0.2]), np.int64(40)
    vg = ag.value_and_grad(f)
    value, g = vg(x, n)
    assert counted, "the loop kept no stack"
    assert all(c == trips for c in counted), counted
    assert _CountingList.appends == 0
    # same numbers as eager
    with ag.GradientTape() as tape:
        xw = tape.watch(x)
        y = f(xw, int(n))
    np.testing.assert_allclose(tape.gradient(y, xw), g, rtol=1e-12)


def test_data_dependent_loop_grows(counted):
    def f(x):
        y = x
        while np.sum(y) < 100.0:
            y = np.sin(y) + y * 1.5
        return np.sum(y)
    ag.grad(f)(np.array([0.3, 0.2]))
    assert counted and all(c == 0 for c in counted)
    assert _CountingList.appends > 10


def test_zero_trips_and_negative_ranges(counted):
    g = ag.grad(_range_loop)
    np.testing.assert_allclose(g(np.array([0.3, 0.2]), np.int64(0)), [1.0, 1.0])
    np.testing.assert_allclose(g(np.array([0.3, 0.2]), np.int64(-5)), [1.0, 1.0])
    assert all(c == 0 for c in counted) and _CountingList.appends == 0
