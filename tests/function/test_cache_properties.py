"""Property test of the trace cache: any sequence of calls (arrays of several dtypes and
shapes, Python values, keywords, structures) gives the eager Python answer, and traces exactly
once per distinct trace key (computed independently here)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograph as ag


def model(x, n=2, scale=1.0, extra=None):
    y = x * n + scale
    if extra is not None:
        y = y + extra[0] - extra[1]
    return y


def expected_key(x, n, scale, extra):
    """The trace key the rules promise: dtype and shape of arrays, type and value of Python
    values, structure (with leaf keys) of lists."""
    def leaf(v):
        if isinstance(v, (np.ndarray, np.generic)):
            return ("array", np.dtype(v.dtype), np.shape(v))
        return ("py", type(v), v)
    extra_key = None if extra is None else tuple(leaf(v) for v in extra)
    return (leaf(x), leaf(n), leaf(scale), extra_key)


arrays = st.builds(
    lambda dtype, shape, seed: np.random.default_rng(seed).integers(0, 5, shape).astype(dtype),
    st.sampled_from([np.int64, np.float64, np.float32]),
    st.sampled_from([(), (2,), (3,), (2, 2)]),
    st.integers(0, 100))
pythons = st.sampled_from([1, 2, 3, 0.5, True])
calls = st.tuples(
    arrays,
    st.one_of(pythons, arrays.filter(lambda a: a.shape == ())),
    st.sampled_from([1.0, 2.0]),
    st.one_of(st.none(), st.tuples(pythons, pythons).map(list)),
    st.sampled_from(["positional", "keywords", "mixed"]))


@pytest.mark.filterwarnings("ignore::autograph.function.RetracingWarning")
@settings(max_examples=15, deadline=None)
@given(st.lists(calls, min_size=1, max_size=12))
def test_any_call_sequence_matches_python_and_traces_once_per_key(sequence):
    f = ag.function(model)
    keys = set()
    for x, n, scale, extra, style in sequence:
        if style == "positional":
            out = f(x, n, scale, extra)
        elif style == "keywords":
            out = f(x=x, n=n, scale=scale, extra=extra)
        else:
            out = f(x, n, extra=extra, scale=scale)
        reference = model(x, n, scale, extra)
        np.testing.assert_allclose(out, reference, rtol=1e-6)
        assert np.asarray(out).dtype == np.asarray(reference).dtype
        keys.add(expected_key(x, n, scale, extra))
        assert f.experimental_get_tracing_count() == len(keys)
