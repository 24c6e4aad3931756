"""Functions whose output shape is counted from tensor values while the graph runs:
`np.repeat` with a tensor count (one count, or one per element), `np.where(condition)` with
one argument, and `np.zeros`/`np.ones`/`np.full` given the whole shape as a 1-D tensor (a
rank known only when the graph runs: TensorFlow's `tf.zeros(tf.range(k))`).

A counted repeat gathers (`take`, which has a gradient rule: the copies are summed back) at
the source index of each output element, which the primitive `repeat_index` counts from the
counts with NumPy's own repeat (negative counts raise its ValueError). The fills from a shape
tensor are one primitive, `full_of_shape`, whose output rank is unknown (None) while tracing
unless the shape vector's length is known.
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.primitives import bind1, nondifferentiable, register
from autograph.runtime.numpy.elementwise import as_tensor, cast
from autograph.runtime.numpy.indexing import take
from autograph.runtime.numpy.shape_ops import broadcast_to, dim, need_rank, ravel
from autograph.runtime.numpy.sorting import nonzero


# -- np.repeat with tensor counts ----------------------------------------------------------

def _repeat_index_infer(counts):
    return [(np.dtype(np.int64), (None,), False)]


def _repeat_index_kernel(xp, counts):
    # NumPy's own repeat: negative counts raise its ValueError, as np.repeat(x, counts) does
    return xp.repeat(xp.arange(counts.shape[0], dtype=xp.int64), counts)


register("repeat_index", _repeat_index_infer, _repeat_index_kernel,
         doc="the source index of each element of np.repeat(x, counts) along its axis")
nondifferentiable("repeat_index")


def counted_repeat(x, repeats, axis=None):
    """np.repeat(x, repeats, axis) where `repeats` is a tensor (a scalar, or one count per
    element along `axis`) or a NumPy array of counts: the output length along `axis` is
    their sum, known when the graph runs. The elements are gathered (`take`) at the source
    indices `repeat_index` counts, so the gradient sums the copies back."""
    x = as_tensor(x)
    if axis is None:
        x, axis = ravel(x), 0
    axis = shapes.normalize_axis(axis, need_rank(x, "numpy.repeat"))
    counts = as_tensor(repeats)
    if counts.dtype.kind not in "iub":
        raise TypeError(f"numpy.repeat: the counts must be integers, got {counts!r}")
    if counts.shape is not None and len(counts.shape) > 1:
        raise ValueError(f"numpy.repeat: the counts must be a scalar or 1-D, got {counts!r}")
    counts = broadcast_to(cast(counts, np.dtype(np.int64)), (dim(x, axis),))
    return take(x, bind1("repeat_index", (counts,)), axis=axis)


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
