"""List pops and inserts in a staged loop (operators/tensor_list.py) under the transforms
built beside them: forward mode (`ag.jvp`, `ag.hessian`) and `ag.vmap`. References: central
differences, jacrev, and the per-element results."""

import numpy as np
import pytest

import autograph as ag


def stack_machine(x, n):
    stack = [x, x * 2.0]
    total = x * 0.0
    for i in ag.range(n):
        stack.append(np.sin(stack[-1]) + x)
        top = stack.pop()
        stack.insert(0, top * 0.5)
        total = total + stack.pop() * top
    return total + len(stack)


def _central(f, x, eps=1e-6):
    return (f(np.float64(x + eps)) - f(np.float64(x - eps))) / (2 * eps)


@pytest.mark.parametrize("x", [0.3, -1.1])
def test_forward_mode_through_pops_and_inserts(x):
    f = lambda v: stack_machine(v, 4)                      # noqa: E731
    primal, tangent = ag.jvp(f, (np.float64(x),), (np.float64(1.0),))
    assert primal == pytest.approx(f(np.float64(x)), rel=1e-12)
    assert tangent == pytest.approx(_central(f, x), rel=1e-6)
    assert tangent == pytest.approx(ag.grad(f)(np.float64(x)), rel=1e-10)
    hess = ag.hessian(f)(np.float64(x))
    assert hess == pytest.approx(_central(ag.grad(f), x), rel=1e-5)


def test_vmap_of_pops_and_inserts_equals_each_element():
    xs = np.array([0.3, -1.1, 2.0])
    got = ag.vmap(stack_machine, in_axes=(0, None))(xs, 4)
    expected = [stack_machine(x, 4) for x in xs]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    grads = ag.vmap(ag.grad(stack_machine), in_axes=(0, None))(xs, 4)
    np.testing.assert_allclose(grads, [ag.grad(stack_machine)(x, 4) for x in xs], rtol=1e-12)
