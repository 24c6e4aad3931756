"""ag.vmap with what other wings added the same day: forward mode (`ag.jvp`, `ag.custom_jvp`)
and progress bars. Each batched result equals the per-element one."""

import numpy as np
import pytest

import autograph as ag


def stop_by_value(x):
    while x < 10.0:
        x = x * 1.5 + np.sin(x)
    return x


@ag.custom_jvp
def square(x):
    return x * x


@square.defjvp
def _square_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * x, 2.0 * x * t


XS = np.array([1.0, 3.0, 20.0, 0.5])
TS = np.array([1.0, -2.0, 0.5, 3.0])


def _per_element(fn, *columns):
    outs = [fn(*row) for row in zip(*columns)]
    return tuple(np.array([o[k] for o in outs]) for k in range(len(outs[0])))


@pytest.mark.parametrize("order", ["jvp of vmap", "vmap of jvp"])
def test_jvp_and_vmap_compose_through_a_per_element_loop(order):
    expected = _per_element(lambda x, t: ag.jvp(stop_by_value, (x,), (t,)), XS, TS)
    if order == "jvp of vmap":
        got = ag.jvp(ag.vmap(stop_by_value), (XS,), (TS,))
    else:
        got = ag.vmap(lambda x, t: ag.jvp(stop_by_value, (x,), (t,)))(XS, TS)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_a_custom_jvp_function_batches_and_differentiates_per_element():
    np.testing.assert_allclose(ag.vmap(square)(XS), XS * XS)
    np.testing.assert_allclose(ag.vmap(ag.grad(square))(XS), 2.0 * XS)
    primal, tangent = ag.jvp(ag.vmap(square), (XS,), (TS,))
    np.testing.assert_allclose(primal, XS * XS)
    np.testing.assert_allclose(tangent, 2.0 * XS * TS)


def test_a_progress_bar_in_a_loop_whose_length_differs_per_element(capsys):
    def doubling(x, n):
        for i in ag.range(n, progress=True):
            x = x * 2.0
        return x

    ns = np.array([1, 2, 3, 0])
    got = ag.vmap(ag.function(doubling))(XS, ns)
    np.testing.assert_allclose(got, XS * 2.0 ** ns)
    assert "3/3" in capsys.readouterr().err          # the bar follows the longest lane
