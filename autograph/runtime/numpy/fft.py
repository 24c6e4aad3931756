"""numpy.fft on symbolic tensors, through the array API's fft extension (`xp.fft`).

NumPy's dtypes: real input is transformed as complex of the same precision (float32 ->
complex64, integers and bools -> complex128); the real-output transforms (irfft, hfft) give
the matching real dtype. The array API wants complex input for the complex transforms and
real floating input for rfft/ihfft, so inputs are cast first. fftshift/ifftshift are rolls."""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.dtypes import FLOAT64
from autograph.runtime.ir.primitives import bind1, defvjp, register
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import as_tensor, cast
from autograph.runtime.numpy.shape_ops import need_rank, roll

_COMPLEX = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64):
            np.dtype(np.complex128)}
_REAL = {v: k for k, v in _COMPLEX.items()}


def _complex_of(dtype):
    if dtype.kind == "c":
        return dtype
    return _COMPLEX.get(dtype, np.dtype(np.complex128))


def _real_of(dtype):
    if dtype.kind == "c":
        return _REAL[dtype]
    return dtype if dtype.kind == "f" and dtype in _COMPLEX else FLOAT64


# kind: what the transform takes and gives, and the output length from n along an axis
_KINDS = {
    "fft": ("c", "c", lambda n: n), "ifft": ("c", "c", lambda n: n),
    "rfft": ("r", "c", lambda n: n // 2 + 1), "ihfft": ("r", "c", lambda n: n // 2 + 1),
    "irfft": ("c", "r", lambda n: n), "hfft": ("c", "r", lambda n: n),
}


def _fft_infer(x, *, name, n, axes, norm):
    _, out, length = _KINDS[name.rstrip("n")]
    dtype = _complex_of(x.dtype) if out == "c" else _real_of(x.dtype)
    shape = list(x.shape)
    for ax, size in zip(axes, n):
        shape[ax] = None if size is None else length(size)
    if name.endswith("n"):   # the n-d real transforms halve only the last axis
        for ax, size in zip(axes[:-1], n[:-1]):
            shape[ax] = size
    return [(dtype, tuple(shape), False)]


def _fft_kernel(xp, x, *, name, n, axes, norm):
    fn = getattr(xp.fft, name)
    if name.endswith("n"):
        return fn(x, s=tuple(n), axes=tuple(axes), norm=norm)
    return fn(x, n=n[0], axis=axes[0], norm=norm)


register("fft", _fft_infer, _fft_kernel, doc="numpy.fft transforms (name in the attrs)")


def _prepare(a, name):
    x = as_tensor(a)
    need_rank(x, f"numpy.fft.{name}")
    if _KINDS[name.rstrip("n")][0] == "c":
        return cast(x, _complex_of(x.dtype))
    if x.dtype.kind == "c":
        raise TypeError(f"numpy.fft.{name} needs real input, got {x!r}")
    return cast(x, _real_of(x.dtype))


def _default_n(name, m):
    """The transform length NumPy takes when n is not given, from the input length m."""
    if m is None:
        return None
    return 2 * (m - 1) if name.rstrip("n") in ("irfft", "hfft") else m


def _norm(norm):
    if norm not in (None, "backward", "ortho", "forward"):
        raise ValueError(f"Invalid norm value {norm}; should be 'backward', 'ortho' or "
                         "'forward'.")
    return norm or "backward"


def _one_d(name):
    def fn(a, n=None, axis=-1, norm=None, out=None):
        if out is not None:
            raise TypeError(f"numpy.fft.{name}(..., out=...) cannot write into a tensor")
        if isinstance(n, Tensor):
            raise NotImplementedError(f"numpy.fft.{name}: n must be a Python int while "
                                      "tracing")
        x = _prepare(a, name)
        ax = shapes.normalize_axis(axis, len(x.shape))
        size = _default_n(name, x.shape[ax]) if n is None else int(n)
        if size is None:
            raise NotImplementedError(f"numpy.fft.{name} needs the length of axis {axis} "
                                      "known while tracing, or n=")
        return bind1("fft", (x,), {"name": name, "n": (size,), "axes": (ax,),
                                   "norm": _norm(norm)})
    fn.__name__ = name
    return fn


def _n_d(name, two=False):
    base = name[:-1]

    def fn(a, s=None, axes=(-2, -1) if two else None, norm=None, out=None):
        if out is not None:
            raise TypeError(f"numpy.fft.{name}(..., out=...) cannot write into a tensor")
        x = _prepare(a, base + "n")
        ndim = len(x.shape)
        if axes is None:
            axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
        axes = tuple(shapes.normalize_axis(ax, ndim) for ax in axes)
        if s is None:
            s = [x.shape[ax] for ax in axes]
            s[-1] = _default_n(base + "n", s[-1])
        s = tuple(s)
        if None in s:
            raise NotImplementedError(f"numpy.fft.{name} needs the transformed lengths "
                                      "known while tracing, or s=")
        return bind1("fft", (x,), {"name": base + "n", "n": tuple(int(d) for d in s),
                                   "axes": axes, "norm": _norm(norm)})
    fn.__name__ = name
    return fn


fft, ifft, rfft, irfft, hfft, ihfft = (_one_d(n) for n in
                                       ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = (_n_d(n) for n in ("fftn", "ifftn", "rfftn", "irfftn"))
fft2, ifft2, rfft2, irfft2 = (_n_d(n + "n", two=True) for n in ("fft", "ifft", "rfft", "irfft"))


def _shift(x, axes, sign):
    x = as_tensor(x)
    ndim = need_rank(x, "numpy.fft.fftshift")
    axes = tuple(range(ndim)) if axes is None else shapes.normalize_axes(axes, ndim)
    if any(x.shape[a] is None for a in axes):
        raise NotImplementedError("numpy.fft.fftshift needs the shifted lengths known "
                                  "while tracing")
    shifts = tuple(sign * (x.shape[a] // 2) if sign > 0 else -(x.shape[a] // 2)
                   for a in axes)
    return roll(x, shifts, axes)


def fftshift(x, axes=None):
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    return _shift(x, axes, -1)


FUNCTIONS = {
    np.fft.fft: fft, np.fft.ifft: ifft, np.fft.rfft: rfft, np.fft.irfft: irfft,
    np.fft.hfft: hfft, np.fft.ihfft: ihfft,
    np.fft.fftn: fftn, np.fft.ifftn: ifftn, np.fft.rfftn: rfftn, np.fft.irfftn: irfftn,
    np.fft.fft2: fft2, np.fft.ifft2: ifft2, np.fft.rfft2: rfft2, np.fft.irfft2: irfft2,
    np.fft.fftshift: fftshift, np.fft.ifftshift: ifftshift,
}


# -- reverse-mode rules ------------------------------------------------------------------------
# Every transform is linear. Under the real pairing Re(sum(a * b)) (adjoint.py) the DFT
# matrix is its own transpose, so fft/ifft transpose to themselves; a length change (n)
# transposes to the opposite cut or zero padding; the half-spectrum transforms transpose
# to a full transform of the zero-padded spectrum (rfft) or to weights 1, 2, ..., 2, 1 on
# the half spectrum (irfft, which reads only the real part of its end bins).

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _fit_length(x, axis, length):
    """x cut or zero-padded along `axis` to `length` (known while tracing)."""
    from autograph.runtime.numpy.array_ops import zeros
    from autograph.runtime.numpy.indexing import getitem
    from autograph.runtime.numpy.joins import concatenate
    have = x.shape[axis]
    if have is None or length is None:
        raise NotImplementedError("the gradient of a numpy.fft transform needs the "
                                  "transform lengths known while tracing")
    if have == length:
        return x
    if have > length:
        return getitem(x, (slice(None),) * axis + (slice(0, length),))
    pad = list(x.shape)
    pad[axis] = length - have
    return concatenate([x, zeros(tuple(pad), dtype=x.dtype)], axis=axis)


def _transform(x, name, n, axis, norm):
    return bind1("fft", (x,), {"name": name, "n": (n,), "axes": (axis,), "norm": norm})


def _irfft_transpose(g, n, axis, norm, k_in):
    """The transpose of irfft (length n output from a half spectrum of k_in bins)."""
    from autograph.runtime.numpy.elementwise import ufunc
    k = n // 2 + 1
    spec = ufunc(np.conjugate, _transform(g, "rfft", n, axis, "backward"))
    weights = np.full(k, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    scale = {None: 1.0 / n, "backward": 1.0 / n, "ortho": 1.0 / np.sqrt(n), "forward": 1.0}
    weights = weights * scale[norm]
    shape = [1] * len(g.shape)
    shape[axis] = k
    spec = ufunc(np.multiply, spec, weights.reshape(shape).astype(_real_of(spec.dtype)))
    return _fit_length(spec, axis, k_in)


def _fft_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, ins
    from autograph.runtime.numpy.elementwise import ufunc
    x = ins(node)[0]
    name, n, axes, norm = (node.attrs[k] for k in ("name", "n", "axes", "norm"))
    g = cts[0]
    if name in ("fftn", "ifftn"):
        out = bind1("fft", (g,), node.attrs)
        for ax in axes:
            out = _fit_length(out, ax, x.shape[ax])
        return [out]
    if name == "rfftn":    # rfft along the last axis, then fft along the others
        for ax, size in zip(axes[:-1], n[:-1]):
            g = _fit_length(_transform(g, "fft", size, ax, norm), ax, x.shape[ax])
        full = _fit_length(g, axes[-1], n[-1])
        return [cast_like(_fit_length(_transform(full, "fft", n[-1], axes[-1], norm),
                                      axes[-1], x.shape[axes[-1]]), x)]
    if name == "irfftn":   # ifft along the others, then irfft along the last axis
        g = _irfft_transpose(g, n[-1], axes[-1], norm, x.shape[axes[-1]])
        for ax, size in zip(axes[:-1], n[:-1]):
            g = _fit_length(_transform(g, "ifft", size, ax, norm), ax, x.shape[ax])
        return [g]
    if name.endswith("n"):
        raise NotImplementedError(f"autograph has no gradient of numpy.fft.{name} yet; use "
                                  "the one-axis transforms")
    axis, size = axes[0], n[0]
    if name in ("fft", "ifft"):
        return [_fit_length(_transform(g, name, size, axis, norm), axis, x.shape[axis])]
    if name == "rfft":
        full = _fit_length(cast(g, _complex_of(g.dtype)), axis, size)
        return [cast_like(_fit_length(_transform(full, "fft", size, axis, norm), axis,
                                      x.shape[axis]), x)]
    if name == "ihfft":   # conj(rfft(x, norm swapped))
        full = _fit_length(ufunc(np.conjugate, g), axis, size)
        return [cast_like(_fit_length(_transform(full, "fft", size, axis, _SWAP[norm]), axis,
                                      x.shape[axis]), x)]
    if name == "irfft":
        return [_irfft_transpose(g, size, axis, norm, x.shape[axis])]
    # hfft(x) = irfft(conj(x), norm swapped)
    return [ufunc(np.conjugate, _irfft_transpose(g, size, axis, _SWAP[norm], x.shape[axis]))]


defvjp("fft", _fft_vjp)
