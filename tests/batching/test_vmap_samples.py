"""Differential: vmap of every shared sample program equals the stacked results of the
program run on one element at a time (ag.function per element: the converted program
traced and compiled alone). Batches vary every argument a sample takes (so loop counts
and branches differ from lane to lane); where batching an argument is refused, the
refusal is the documented one (a ragged result) and batching the others still works.

The shared samples: tests/runtime/samples.py (explicit ag.cond / ag.while_loop /
TensorArray / ag.print) and tests/autodiff/samples.py (converted Python control flow)."""

import itertools

import numpy as np
import pytest

import autograph as ag
from autograph.batching.transform import BatchingError
from tests.autodiff import samples as grad_samples
from tests.runtime.samples import SAMPLES

LANES = 5


def variants(value, rng):
    """LANES values like `value` (ints stay >= 1 and near it; floats move a little)."""
    a = np.asarray(value)
    if a.dtype.kind in "iu":
        return np.stack([np.maximum(a + rng.integers(0, 4, a.shape), 1) for _ in range(LANES)])
    return np.stack([a + 0.3 * rng.standard_normal(a.shape).astype(a.dtype)
                     for _ in range(LANES)]).astype(a.dtype)


def per_element(fn, columns, axes):
    f = ag.function(fn)
    outs = []
    for k in range(LANES):
        args = [c[k] if ax == 0 else c for c, ax in zip(columns, axes)]
        outs.append(f(*args))
    return outs


def assert_stacked(got, outs):
    flat_got = got if isinstance(got, (tuple, list)) else [got]
    flat_want = [o if isinstance(o, (tuple, list)) else [o] for o in outs]
    for j, g in enumerate(flat_got):
        want = np.stack([np.asarray(w[j]) for w in flat_want])
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-9)
        assert np.asarray(g).dtype == want.dtype


# a sample whose batched arguments make a ragged result refuses (with the reason);
# every other combination must batch
RAGGED = {("doubling", 1), ("fizzbuzz_codes", 0)}


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_runtime_samples(sample, capsys):
    rng = np.random.default_rng(7)
    n = len(sample.args)
    for axes in itertools.product([0, None], repeat=n):
        if not any(a == 0 for a in axes):
            continue
        columns = [variants(a, rng) if ax == 0 else a for a, ax in zip(sample.args, axes)]
        ragged = any(ax == 0 and (sample.name, k) in RAGGED for k, ax in enumerate(axes))
        if ragged:
            with pytest.raises(BatchingError, match="ragged"):
                ag.vmap(sample.fn, in_axes=axes)(*columns)
            continue
        want = per_element(sample.fn, columns, axes)
        got = ag.vmap(sample.fn, in_axes=tuple(axes))(*columns)
        assert_stacked(got, want)


@pytest.mark.parametrize("fn", grad_samples.VECTOR + grad_samples.MATRIX,
                         ids=lambda f: f.__name__)
def test_autodiff_samples_values_and_per_example_gradients(fn):
    rng = np.random.default_rng(3)
    xs = rng.uniform(0.2, 0.9, (LANES, 3))
    args = [xs] + ([rng.standard_normal((3, 3)) * 0.5] if fn in grad_samples.MATRIX else [])
    axes = (0,) + (None,) * (len(args) - 1)
    assert_stacked(ag.vmap(fn, in_axes=axes)(*args), per_element(fn, args, axes))
    grads = ag.vmap(ag.grad(fn), in_axes=axes)(*args)
    g = ag.grad(fn)
    for k in range(LANES):
        one = g(*[a[k] if ax == 0 else a for a, ax in zip(args, axes)])
        np.testing.assert_allclose(grads[k], one, rtol=1e-9, atol=1e-12)
