"""Functions whose output shape is counted from tensor values while the graph runs:
`np.repeat` with a tensor count (one count, or one per element), `np.where(condition)` with
one argument, and `np.zeros`/`np.ones`/`np.full` given the whole shape as a 1-D tensor (a
rank known only when the graph runs: TensorFlow's `tf.zeros(tf.range(k))`).

A counted repeat is composed of primitives that already have kernels and gradient rules: the
source index of each output element is `searchsorted(cumsum(counts), arange(total),
side="right")` and the output gathers those elements (`take`), so `np.repeat(x, counts)` is
differentiable in `x` (the gradient sums the copies back). The fills from a shape tensor are
one primitive, `full_of_shape`, whose output rank is unknown (None) while tracing unless the
shape vector's length is known.
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.primitives import bind1, nondifferentiable, register
from autograph.runtime.numpy.array_ops import arange
from autograph.runtime.numpy.elementwise import as_tensor, cast
from autograph.runtime.numpy.indexing import take
from autograph.runtime.numpy.shape_ops import broadcast_to, dim, need_rank, ravel
from autograph.runtime.numpy.sorting import nonzero


# -- np.repeat with tensor counts ----------------------------------------------------------

def counted_repeat(x, repeats, axis=None):
    """np.repeat(x, repeats, axis) where `repeats` is a tensor (a scalar, or one count per
    element along `axis`) or a NumPy array of counts: the output length along `axis` is
    their sum, known when the graph runs."""
    x = as_tensor(x)
    if axis is None:
        x, axis = ravel(x), 0
    axis = shapes.normalize_axis(axis, need_rank(x, "numpy.repeat"))
    counts = as_tensor(repeats)
    if counts.dtype.kind not in "iub":
        raise TypeError(f"numpy.repeat: the counts must be integers, got {counts!r}")
    counts = cast(counts, np.dtype(np.int64))
    if counts.shape is not None and len(counts.shape) > 1:
        raise ValueError(f"numpy.repeat: the counts must be a scalar or 1-D, got {counts!r}")
    counts = broadcast_to(counts, (dim(x, axis),))
    ends = np.cumsum(counts)
    total = np.sum(counts)
    source = np.searchsorted(ends, arange(total), side="right")
    return take(x, source, axis=axis)


# -- np.where(condition): the indices where it holds -----------------------------------------

def where_indices(condition):
    """np.where with one argument: np.nonzero(condition) (a tuple of index vectors whose
    length is known when the graph runs)."""
    return nonzero(condition)


# -- fills whose shape is a 1-D tensor (a rank known only when the graph runs) ---------------

def _full_of_shape_infer(shape, *, dtype, fill_value):
    k = None if shape.shape is None else shape.shape[0]
    return [(dtype, None if k is None else (None,) * k, False)]


def _full_of_shape_kernel(xp, shape, *, dtype, fill_value):
    dims = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    return xp.full(dims, fill_value, dtype=dtype)


register("full_of_shape", _full_of_shape_infer, _full_of_shape_kernel,
         doc="numpy.full (zeros, ones) with the shape given as a 1-D integer tensor")
nondifferentiable("full_of_shape")


def full_of_shape(shape, fill_value, dtype):
    """np.full(shape, fill_value, dtype) for a 1-D integer tensor `shape`."""
    if shape.dtype.kind not in "iu":
        raise TypeError(f"a shape must hold integers, got {shape!r}")
    dtype = np.dtype(dtype)
    fill = np.asarray(fill_value).astype(dtype).item()
    return bind1("full_of_shape", (shape,), {"dtype": dtype, "fill_value": fill})
