"""NumPy's functions that write into their first argument, as functional updates:
fill_diagonal, put, place, put_along_axis (and copyto, putmask). NumPy returns None and changes
the array; a symbolic tensor cannot change, so the converter rewrites the statement
`np.put(x, i, v)` into `x = ag__.inplace_call(np.put, x, i, v)` (see
autograph.converters.item_updates), which lands here with a tensor and rebinds the name
to the updated copy. Each is one `setitem` on the flattened array.

Called on a tensor any other way (not as a statement on a local name), they raise: the
caller would keep the old value where NumPy changes it.
"""

import numpy as np

from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.updates import setitem


def _cycled(values, n, dtype):
    """`values` flattened and repeated to length n (NumPy's rule for put/place/fill)."""
    v = np.ravel(as_tensor(values)).astype(dtype)
    k = v.shape[0]
    if k is None:
        raise NotImplementedError("the values' length must be known while tracing")
    if k == 0:
        raise ValueError("cannot place or put an empty set of values")
    return v if k == n else np.resize(v, (n,))


def _flat_update(x, index, values):
    flat = np.ravel(x)
    return np.reshape(setitem(flat, index, values), x.shape)


def fill_diagonal(a, val, wrap=False):
    x = as_tensor(a)
    shape = x.shape
    if shape is None or None in shape or len(shape) < 2:
        raise ValueError("numpy.fill_diagonal needs an array of at least 2 dimensions and a "
                         "known shape while tracing")
    if len(shape) == 2:
        step = shape[1] + 1
        end = None if wrap else shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.sum(np.cumprod(shape[:-1])))
        end = None
    positions = np.arange(int(np.prod(shape)))[:end:step]
    return _flat_update(x, positions, _cycled(val, len(positions), x.dtype))


def put(a, ind, v, mode="raise"):
    x = as_tensor(a)
    i = np.ravel(as_tensor(ind)).astype(np.int64)
    n = x.shape and int(np.prod(x.shape)) if x.shape is not None and None not in x.shape \
        else np.size(x)
    if mode == "clip":
        i = np.clip(i, 0, n - 1)
    elif mode == "wrap":
        i = np.mod(i, n)
    k = i.shape[0]
    if k is None:
        raise NotImplementedError("numpy.put: the number of indices must be known while "
                                  "tracing")
    return _flat_update(x, i, _cycled(v, k, x.dtype))


def place(arr, mask, vals):
    """arr[mask] = vals cycled: the j-th True element gets vals[j % len(vals)]."""
    x = as_tensor(arr)
    m = np.ravel(as_tensor(mask)).astype(bool)
    v = np.ravel(as_tensor(vals)).astype(x.dtype)
    k = v.shape[0]
    if k is None:
        raise NotImplementedError("numpy.place: the values' length must be known")
    if k == 0:
        return x
    rank = np.cumsum(m) - 1
    chosen = np.take(v, np.mod(np.maximum(rank, 0), k))
    return np.reshape(np.where(m, chosen, np.ravel(x)), x.shape)


def put_along_axis(arr, indices, values, axis):
    x = as_tensor(arr)
    idx = as_tensor(indices).astype(np.int64)
    if axis is None:
        return put(x, idx, values)
    shape = x.shape
    if shape is None or None in shape:
        raise NotImplementedError("numpy.put_along_axis needs the shape known while tracing")
    ndim = len(shape)
    ax = axis + ndim if axis < 0 else axis
    idx = np.where(idx < 0, idx + shape[ax], idx)
    strides = np.cumprod((shape[1:] + (1,))[::-1])[::-1]
    flat = None
    for d in range(ndim):
        if d == ax:
            part = idx
        else:
            grid = [1] * ndim
            grid[d] = idx.shape[d]
            part = np.reshape(np.arange(idx.shape[d]), grid)
        term = part * int(strides[d])
        flat = term if flat is None else flat + term
    flat = np.broadcast_to(flat, np.broadcast_shapes(flat.shape, idx.shape))
    vals = np.broadcast_to(as_tensor(values).astype(x.dtype), flat.shape)
    return _flat_update(x, np.ravel(flat), np.ravel(vals))


def putmask(a, mask, values):
    """a[mask] = values, where the value at flat position i is values[i % len(values)]."""
    x = as_tensor(a)
    shape = x.shape
    if shape is None or None in shape:
        raise NotImplementedError("numpy.putmask needs the shape known while tracing")
    v = np.reshape(_cycled(values, int(np.prod(shape)), x.dtype), shape)
    return np.where(as_tensor(mask).astype(bool), v, x)


def copyto(dst, src, casting="same_kind", where=True):
    x = as_tensor(dst)
    s = as_tensor(src)
    if not np.can_cast(s.dtype if not s.weak else np.asarray(0, s.dtype).dtype, x.dtype,
                       casting) and not s.weak:
        raise TypeError(f"Cannot cast array data from {s.dtype} to {x.dtype} according to "
                        f"the rule '{casting}'")
    return np.where(where, np.broadcast_to(s.astype(x.dtype), x.shape), x)


INPLACE = {np.fill_diagonal: fill_diagonal, np.put: put, np.place: place,
           np.put_along_axis: put_along_axis, np.copyto: copyto, np.putmask: putmask}


def refuse(name):
    def fn(*args, **kwargs):
        raise TypeError(
            f"numpy.{name} writes into its first argument, and a symbolic tensor cannot "
            "change: write it as a statement on a variable of the function "
            f"(`np.{name}(x, ...)`), which autograph turns into `x = <the updated copy>`")
    return fn


REFUSE = {f: refuse(f.__name__) for f in INPLACE}
