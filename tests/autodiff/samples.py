"""Differentiable sample functions (Tangent-style), shared by the gradient tests.

Each takes a float64 vector `x` (and sometimes a matrix `w`) and returns a scalar. They
use Python control flow, converted by autograph when traced, and run as plain Python on
the values of an eager GradientTape."""

import numpy as np

import autograph as ag


def iterated_power(x):
    y = x
    for _ in range(3):
        y = y * x
    return np.sum(y)


def serial_for(x):
    y = x
    for _ in range(4):
        y = np.sin(y) + x
    return np.sum(y)


def cond_in_loop(x):
    s = x
    for _ in range(3):
        if np.sum(s) > 0.5:
            s = s * 0.7
        else:
            s = np.sin(s) + x
    return np.sum(s * s)


def loop_in_cond(x):
    y = x
    if np.sum(x) > 0.0:
        while np.sum(y) < 20.0:
            y = y * 1.5 + np.tanh(x)
    else:
        y = np.sin(x)
    return np.sum(y)


def three_nested_loops(x):
    # ag.range: staged loops (a Python range of a static length unrolls while tracing)
    s = x
    for _ in ag.range(2):
        for _ in ag.range(2):
            for _ in ag.range(2):
                s = np.sin(s) * x + 0.1
    return np.sum(s)


def nested_loops_with_cond(x):
    y = x
    for i in ag.range(3):
        for j in ag.range(2):
            if np.sum(y) > 0.4:
                y = np.sin(y) * x
            else:
                y = y * 1.5 + x
    return np.sum(y * y)


def break_in_loop(x):
    y = x
    for _ in range(10):
        y = y * 1.3
        if np.sum(y) > 5.0:
            break
    return np.sum(y * y)


def continue_in_loop(x):
    y = x
    for i in range(6):
        if i % 2 == 0:
            continue
        y = np.sin(y) * x
    return np.sum(y)


def early_return(x):
    # at the tests' x (sum 0.9) the early return fires on the 5th iteration
    y = x
    for _ in range(8):
        y = y * 1.2
        if np.sum(y) > 2.0:
            return np.sum(np.tanh(y))
    return np.sum(y)


def tanh_loop(x):
    h = x
    for _ in range(5):
        h = np.tanh(h * 0.9 + x)
    return np.sum(h)


def data_dependent_while(x):
    y = x
    while np.sum(y) < 100.0:
        y = y * 1.5
    return np.sum(y * x)


def tensor_array_rnn(x, w):
    h = np.reshape(x, (1, 3))
    ta = ag.TensorArray(np.float64, size=4)
    for t in ag.range(4):                  # staged: a TensorArray written in a loop
        h = np.tanh(h @ w + 0.1)
        ta = ta.write(t, h)
    return np.sum(ta.stack() * ta.stack())


def dynamic_rnn(x, w):
    inputs = ag.TensorArray(np.float64, size=3)
    inputs = inputs.unstack(np.reshape(np.sin(x), (3, 1, 1)) * np.ones((3, 1, 3)))
    h = np.zeros((1, 3))
    outs = ag.TensorArray(np.float64, size=3)
    for t in ag.range(3):
        h = np.tanh(h @ w + inputs.read(t))
        outs = outs.write(t, h)
    return np.sum(outs.stack())


VECTOR = [iterated_power, serial_for, cond_in_loop, loop_in_cond, three_nested_loops,
          nested_loops_with_cond,
          break_in_loop, continue_in_loop, early_return, tanh_loop, data_dependent_while]
MATRIX = [tensor_array_rnn, dynamic_rnn]
