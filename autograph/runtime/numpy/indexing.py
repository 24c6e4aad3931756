"""Indexing symbolic tensors: `x[i]`, `x[1:, None, ..., -1]`, `x[t]` with an index tensor,
`x[mask]`, and np.take. Assignment is not here: tensors are immutable (see Tensor)."""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.ir.dtypes import BOOL
from autograph.runtime.numpy.elementwise import as_tensor, describe
from autograph.runtime.ir.primitives import bind1, defvjp, register
from autograph.runtime.numpy.shape_ops import need_rank, reshape
from autograph.runtime.ir.tensor import Tensor


# -- indexing --------------------------------------------------------------------------------
# A basic index (ints, slices, None, ...) is kept in the node's attrs as a hashable tuple of
# items: ("i", k) an int, ("s", start, stop, step) a slice, ("n",) None, ("e",) Ellipsis,
# ("d", j) an int known only at run time: the node's (j+1)-th input. Slice bounds may be
# ("d", j) too. Updates (updates.py) also take ("t", j): an index array. `encode_index`
# parses a key into these items for both. An index tensor alone selects along the first axis (`take`); a boolean
# tensor alone is a mask.

def _index_shape(shape, index):
    consumed = sum(1 for item in index if item[0] in "ids")
    if sum(1 for item in index if item[0] == "e") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if shape is None:
        return None
    if consumed > len(shape):
        raise IndexError(f"too many indices for a tensor of rank {len(shape)}: "
                         f"{consumed} were given")
    out, axis = [], 0
    for item in index:
        tag = item[0]
        if tag == "n":
            out.append(1)
        elif tag == "e":
            n = len(shape) - consumed
            out.extend(shape[axis:axis + n])
            axis += n
        elif tag == "i":
            d = shape[axis]
            if d is not None and not -d <= item[1] < d:
                raise IndexError(f"index {item[1]} is out of bounds for axis {axis} "
                                 f"with size {d}")
            axis += 1
        elif tag == "d":
            axis += 1
        else:  # slice
            d = shape[axis]
            bounds = item[1:]
            static = not any(isinstance(b, tuple) for b in bounds)
            out.append(len(range(*slice(*bounds).indices(d))) if d is not None and static
                       else None)
            axis += 1
    out.extend(shape[axis:])
    return tuple(out)


def _getitem_infer(x, *dynamic, index):
    return [(x.dtype, _index_shape(x.shape, index), False)]


def _clamped(bounds, n):
    """Slice bounds NumPy clamps to the axis length (the array API leaves out-of-range
    bounds unspecified), as a slice every namespace reads the same way, and whether it
    runs backwards. A backward slice is given as the forward slice of the flipped axis
    (torch and others have no negative steps): element i is element n-1-i there."""
    start, stop, step = slice(*bounds).indices(n)
    if len(range(start, stop, step)) == 0:
        return slice(0, 0, 1), False
    if step > 0:
        return slice(start, stop, step), False
    return slice(n - 1 - start, n - 1 - stop, -step), True


def _getitem_kernel(xp, x, *dynamic, index):
    def value(v):
        return int(dynamic[v[1]]) if isinstance(v, tuple) else v
    consumed = sum(1 for item in index if item[0] in "ids")
    key, axis, flips = [], 0, []
    for item in index:
        tag = item[0]
        if tag == "n":
            key.append(None)
            continue
        if tag == "e":
            key.append(Ellipsis)
            axis += len(x.shape) - consumed
            continue
        if tag == "i":
            key.append(item[1])
        elif tag == "d":
            key.append(int(dynamic[item[1]]))
        else:
            piece, backwards = _clamped([value(b) for b in item[1:]], x.shape[axis])
            key.append(piece)
            if backwards:
                flips.append(axis)
        axis += 1
    if flips:
        x = xp.flip(x, axis=tuple(flips))
    if not any(k is Ellipsis for k in key):
        key.append(Ellipsis)   # the array API wants every axis indexed, or an ellipsis
    return x[tuple(key)]


def _take_infer(x, i, *, axis):
    if x.shape is None or i.shape is None:
        return [(x.dtype, None, False)]
    return [(x.dtype, x.shape[:axis] + i.shape + x.shape[axis + 1:], False)]


def _take_kernel(xp, x, i, *, axis):
    if xp is np:   # NumPy takes negative and n-d indices itself (a dataset batch's gather)
        return np.take(x, i, axis=axis)
    flat = xp.reshape(i, (-1,))
    flat = xp.where(flat < 0, flat + x.shape[axis], flat)   # NumPy's negative indices
    out = xp.take(x, flat, axis=axis)
    return xp.reshape(out, tuple(x.shape[:axis]) + tuple(i.shape) + tuple(x.shape[axis + 1:]))


def _mask_infer(x, mask):
    if x.shape is None or mask.shape is None:
        return [(x.dtype, None, False)]
    k = len(mask.shape)
    if k > len(x.shape) or not all(a is None or b is None or a == b
                                   for a, b in zip(x.shape, mask.shape)):
        raise IndexError(f"the boolean mask {mask!r} does not match the shape of {x!r}")
    return [(x.dtype, (None,) + x.shape[k:], False)]


def _mask_kernel(xp, x, mask):
    return x[mask]


register("getitem", _getitem_infer, _getitem_kernel, doc="x[ints, slices, None, ...]")
register("take", _take_infer, _take_kernel, doc="x[index tensor], numpy.take")
register("boolean_mask", _mask_infer, _mask_kernel, doc="x[boolean mask]")


def _is_array_index(k):
    return isinstance(k, (Tensor, np.ndarray, list)) and not (
        isinstance(k, Tensor) and k.shape == () and k.dtype.kind in "iu")


def take(a, indices, axis=None):
    x = as_tensor(a)
    if axis is None or shapes.names_the_element(axis, None if x.shape is None else len(x.shape)):
        x, axis = reshape(x, (-1,)), 0   # (NumPy: axis 0 of a 0-d input is its flattening)
    else:
        axis = shapes.normalize_axis(axis, need_rank(x, "take"))
    i = as_tensor(indices)
    if i.dtype.kind not in "iu":
        raise IndexError(f"indices must be integers, got {i!r}")
    return bind1("take", (x, i), {"axis": axis})


def _take_along_one_axis(x, key):
    """x[:, idx] (one integer array, every other index a full slice `:` or `...`) is
    np.take(x, idx, axis); anything else is left to basic indexing (None)."""
    arrays = [i for i, k in enumerate(key) if _is_array_index(k)]
    if len(arrays) != 1 or x.shape is None:
        return None
    full = slice(None)
    rest = [k for i, k in enumerate(key) if i != arrays[0]]
    if not all(k is Ellipsis or (isinstance(k, slice) and k == full) for k in rest) \
            or sum(k is Ellipsis for k in rest) > 1:
        return None
    idx = as_tensor(key[arrays[0]])
    if idx.dtype.kind not in "iu":
        return None
    before = key[:arrays[0]]
    if Ellipsis in before:   # the axes an ellipsis stands for come before the array
        axis = len(x.shape) - (len(key) - arrays[0])
    else:
        axis = len(before)
    return take(x, idx, axis=axis)


def getitem(x, key):
    """x[key] for the indices NumPy's basic indexing knows, plus an index tensor or a
    boolean mask used alone."""
    x = as_tensor(x)
    # a 0-d index is basic indexing (a view); `take` would copy all of a non-contiguous x
    if isinstance(key, Tensor) and key.dtype.kind in "iu" and key.shape != ():
        return take(x, key, axis=0)
    if not isinstance(key, tuple):
        if _is_array_index(key):
            if not isinstance(key, Tensor) and np.asarray(key).dtype == BOOL \
                    and np.ndim(key) == 1:   # a mask known now: its true indices
                key = np.flatnonzero(key)
            mask = as_tensor(key)
            if mask.dtype == BOOL:
                return bind1("boolean_mask", (x, mask))
            return take(x, mask, axis=0)
        key = (key,)
    gathered = _take_along_one_axis(x, key)
    if gathered is not None:
        return gathered
    def mixed(k):
        raise NotImplementedError(
            f"indexing {x!r} with an array together with other indices ({describe([k])}) "
            "is not supported while tracing; index one axis at a time, e.g. with "
            "numpy.take(x, indices, axis=...)")
    index, dynamic = encode_index(key, on_array=mixed)
    return bind1("getitem", [x] + dynamic, {"index": index})


def encode_index(key, on_array=None):
    """(index items, dynamic input tensors) for `key` as `x[key]` reads or writes it: the
    items described at the top of this module; ("t", j) an index array (integer or
    boolean) when `on_array` is None (updates take them), else `on_array(k)` raises."""
    if not isinstance(key, tuple):
        key = (key,)
    dynamic = []

    def bound(v):
        if v is None:
            return None
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            return int(v)
        if isinstance(v, Tensor) and v.shape == () and v.dtype.kind in "iu":
            dynamic.append(v)
            return ("d", len(dynamic) - 1)
        raise IndexError(f"indices and slice bounds must be ints, None or integer scalar "
                         f"tensors, got {describe([v])}")

    index = []
    for k in key:
        if k is None:
            index.append(("n",))
        elif k is Ellipsis:
            index.append(("e",))
        elif isinstance(k, slice):
            index.append(("s", bound(k.start), bound(k.stop), bound(k.step)))
        elif _is_array_index(k) or isinstance(k, (bool, np.bool_)):
            if on_array is not None:
                on_array(k)
            if isinstance(k, (bool, np.bool_)):
                raise NotImplementedError("a Python bool as an index is not supported while "
                                          "tracing; use a boolean array")
            arr = as_tensor(k)
            if arr.dtype.kind not in "iub":
                raise IndexError(f"arrays used as indices must be of integer or boolean "
                                 f"type, got {describe([k])}")
            dynamic.append(arr)
            index.append(("t", len(dynamic) - 1))
        else:
            b = bound(k)
            index.append(("i", b) if isinstance(b, int) else b)
    if sum(1 for item in index if item[0] == "e") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return tuple(index), dynamic


# -- reverse-mode rules: scatters of the cotangent into zeros of x's shape ---------------------

def _getitem_vjp(cts, node):
    """Basic indexing selects each element at most once: the cotangent is stored into
    zeros of x's shape at the same index."""
    from autograph.runtime.numpy.adjoint import differentiable, ins
    from autograph.runtime.numpy.updates import scatter
    x, *dynamic = ins(node)
    if not differentiable(x):
        return [None] * len(node.inputs)
    dynamic = [d.value for d in dynamic]
    return [scatter(cts[0], x, node.attrs["index"], dynamic, accumulate=False)] + \
        [None] * len(dynamic)


def _take_vjp(cts, node):
    """Repeated indices add up (np.add.at)."""
    from autograph.runtime.numpy.adjoint import differentiable, ins
    from autograph.runtime.numpy.updates import scatter
    x, i = ins(node)
    if not differentiable(x):
        return [None, None]
    index = (("s", None, None, None),) * node.attrs["axis"] + (("t", 0),)
    return [scatter(cts[0], x, index, [i.value]), None]


def _mask_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import differentiable, ins
    from autograph.runtime.numpy.updates import scatter
    x, mask = ins(node)
    if not differentiable(x):
        return [None, None]
    return [scatter(cts[0], x, (("t", 0),), [mask.value], accumulate=False), None]


defvjp("getitem", _getitem_vjp)
defvjp("take", _take_vjp)
defvjp("boolean_mask", _mask_vjp)
