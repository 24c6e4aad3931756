"""Eager `tape.watch` on NumPy values: the returned tensor is tracked; using the array
itself (TF's habit with tf.Tensors) is a clear error, never a silent None or zero."""

import numpy as np
import pytest

import autograph as ag


def test_watch_returns_the_tracked_value():
    x0 = np.array([0.5, -1.0])
    with ag.GradientTape() as tape:
        x = tape.watch(x0)
        y = np.sum(np.sin(x) * x)
    np.testing.assert_allclose(tape.gradient(y, x), np.cos(x0) * x0 + np.sin(x0))


def test_gradient_wrt_the_array_passed_to_watch_says_what_to_do():
    x = np.array([0.5, -1.0])
    with ag.GradientTape() as tape:
        tape.watch(x)
        y = np.sum(np.sin(x))
    with pytest.raises(ValueError, match=r"x = tape.watch\(x\)"):
        tape.gradient(y, x)


def test_target_computed_from_the_array_instead_of_the_tensor_is_an_error():
    x0 = np.array([0.5, -1.0])
    with ag.GradientTape() as tape:
        x = tape.watch(x0)
        y = np.sum(np.sin(x0))
    with pytest.raises(ValueError, match="did not record"):
        tape.gradient(y, x)


def test_unwatched_array_source_is_none_as_in_tf():
    w = ag.Variable(np.array([1.0, 2.0]))
    c = np.array([3.0, 4.0])
    with ag.GradientTape() as tape:
        y = np.sum(w * c)
    gw, gc = tape.gradient(y, [w, c])
    np.testing.assert_allclose(gw, c)
    assert gc is None
