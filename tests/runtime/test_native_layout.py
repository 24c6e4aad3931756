"""`jit_compile=True` leaves out `np.ascontiguousarray` on arrays Numba already types
C-ordered (native/layout.py): a fused kernel's output, a matmul's result, a reshape, a
fill, a row of a gradient stack. The call returned its argument unchanged, so the values
must stay those of the interpreter (to rounding: the fused tanh is native/vector_math's), and the generated source is
counted: no `ascontiguousarray` of such a name; arguments (whose layout Numba learns only
from the call) keep it, and a non-contiguous argument still gives the interpreter's
values."""

import re

import numpy as np
import pytest

import autograph as ag

pytest.importorskip("numba")

from autograph.runtime.exec import native  # noqa: E402


def _main_source(f, *args):
    """The main function's lines of `f`'s generated module (kernels left out)."""
    src = native.source_of(f.get_concrete_function(*args)._graph_to_run())
    return src[src.rindex("\ndef native_"):]


def _contiguous_args(src):
    """Names passed to np.ascontiguousarray (or the library's wrapper of it)."""
    return re.findall(r"(?:np\.ascontiguousarray|np_ascontiguousarray_1)\((\w+)\)", src)


def _bound(src, pattern):
    """Names bound by lines whose expression matches `pattern`."""
    return set(re.findall(r"^\s*(\w+) = " + pattern, src, re.M))


def _check(fn, *args):
    f = ag.function(fn, jit_compile=True)
    got, want = f(*args), ag.function(fn)(*args)
    for g, w in zip(np.atleast_1d(got) if not isinstance(got, tuple) else got,
                    np.atleast_1d(want) if not isinstance(want, tuple) else want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-14)
    return _main_source(f, *args)


def rnn_loss(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def test_rnn_gradient_makes_no_c_ordered_value_contiguous_again():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((8, 8)) / 3
    xs, h0 = rng.standard_normal((6, 4, 8)), rng.standard_normal((4, 8))
    # (the source only: test_native_grad compares this gradient with the interpreter's)
    f = ag.function(ag.value_and_grad(rnn_loss), jit_compile=True)
    src = _main_source(f, W, xs, h0)
    made_c = _bound(src, r"(?:fused\w*|matmul|np_empty_2|np_full_2)\(") | \
        _bound(src, r"stack\d+_buf\[") | _bound(src, r"\w+\.reshape\(")
    assert made_c, src
    assert not set(_contiguous_args(src)) & made_c, src
    # the backward products read the stack's rows and the kernels' outputs as they are
    backward = [ln for ln in src.splitlines() if "matmul(" in ln][1:]
    assert len(backward) == 2 and not any("ascontiguousarray" in ln for ln in backward), src
    # and the C-ordered copy of W.T is made contiguous once, not twice
    assert sum("reshape(" in ln and "ascontiguousarray" in ln.split("=", 1)[1]
               for ln in src.splitlines()) == 1, src


def chain(x, w1, w2):
    h = np.tanh(x @ w1)                 # a kernel's output into matmul
    y = (h @ w2) @ w2.T                 # a matmul's result into matmul, a transpose
    z = np.reshape(y, (-1,))            # a matmul's result reshaped
    return np.sum(np.reshape(z, y.shape) @ w1) + np.sum(z)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed"])
def test_products_of_made_arrays_read_them_as_they_are(layout):
    rng = np.random.default_rng(1)
    x, w1, w2 = (rng.standard_normal(s) for s in ((5, 6), (6, 6), (6, 6)))
    if layout == "strided":       # arguments Numba types "A": still made contiguous
        x = rng.standard_normal((5, 12))[:, ::2]
    elif layout == "transposed":  # an F-ordered argument
        w1 = np.asfortranarray(w1)
    src = _check(chain, x, w1, w2)
    args = set(_contiguous_args(src))
    assert "x" in args and "w1" in args, src       # arguments keep the call
    made = _bound(src, r"(?:fused\w*|matmul)\(")
    assert made and not args & made, src


def spread(x, s):
    b = np.broadcast_to(np.reshape(s, (1, 1)), (3, 4))    # a scalar made (1, 1), broadcast
    return b @ x, b


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_broadcast_scalar_is_one_full_array(dtype):
    x = np.arange(8, dtype=dtype).reshape(4, 2)
    s = dtype(1.5)
    f = ag.function(spread, jit_compile=True)
    got, want = f(x, s), ag.function(spread)(x, s)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    src = _main_source(f, x, s)
    assert "np_full_2((int(3), int(4))" in src and "put_set" not in src, src
    assert not set(_contiguous_args(src)) & _bound(src, r"np_full_2\("), src
    # the gradient of a sum broadcasts its scalar cotangent the same way
    rng = np.random.default_rng(0)
    W, xs, h0 = rng.standard_normal((8, 8)), rng.standard_normal((6, 4, 8)), np.zeros((4, 8))
    grad = _main_source(ag.function(ag.value_and_grad(rnn_loss), jit_compile=True), W, xs, h0)
    assert re.search(r"= np_full_2\(\(int\(4\), int\(8\)\)", grad), grad
