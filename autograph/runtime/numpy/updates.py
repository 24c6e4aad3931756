"""Functional updates of symbolic tensors: what `x[key] = v`, `x[key] += v` and
`np.add.at(x, key, v)` become while tracing.

Tensors are immutable, so an update is a new tensor: the converter rewrites the statement
`x[i] = v` into `x = ag__.setitem(x, i, v)` (autograph.operators.updates), which lands
here on a tensor. The kernels copy `x` and then assign into the copy with the array
library's own indexing, so the result is NumPy's, index kind by index kind (ints, slices,
None, Ellipsis, boolean masks, integer arrays, tuples of them); `ufunc_at` accumulates
repeated indices as `ufunc.at` does.

An index is kept in the node's attrs as a hashable tuple of items, as getitem's
(indexing.py): ("i", k) an int, ("s", start, stop, step) a slice whose bounds are ints,
None or ("d", j), ("n",) None, ("e",) Ellipsis, ("d", j) an int known at run time and
("t", j) an index array (integer or boolean): j is its position among the node's inputs
after `x` and the value.
"""

import numpy as np

from autograph.runtime.ir.primitives import bind1, register
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import as_tensor, cast, describe
from autograph.runtime.numpy.indexing import _index_shape, encode_index


def _key(index, dynamic):
    """The index as the array library reads it, from the node's attrs and inputs."""
    def value(v):
        return int(dynamic[v[1]]) if isinstance(v, tuple) else v
    key = []
    for item in index:
        tag = item[0]
        if tag == "n":
            key.append(None)
        elif tag == "e":
            key.append(Ellipsis)
        elif tag == "i":
            key.append(item[1])
        elif tag == "d":
            key.append(int(dynamic[item[1]]))
        elif tag == "t":
            key.append(dynamic[item[1]])
        else:
            key.append(slice(*[value(b) for b in item[1:]]))
    return tuple(key)


def _check_target(x, v, index):
    """Refuse, while tracing, a value that cannot broadcast to a basic index's target (the
    other index kinds are checked by the kernel, as NumPy checks them)."""
    if x.shape is None or v.shape is None or any(item[0] == "t" for item in index):
        return
    target = _index_shape(x.shape, index)
    if target is None or None in target or None in v.shape:
        return
    vshape = tuple(v.shape)
    while len(vshape) > len(target) and vshape[0] == 1:   # NumPy drops leading 1s
        vshape = vshape[1:]
    try:
        ok = np.broadcast_shapes(vshape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"could not broadcast the value {v!r} into the shape {target} "
                         f"that the index selects in {x!r}")


def _setitem_infer(x, v, *dynamic, index):
    return [(x.dtype, x.shape, x.weak)]


def _setitem_kernel(xp, x, v, *dynamic, index):
    out = xp.asarray(x, copy=True)   # never write into an input: it may be the caller's
    out[_key(index, dynamic)] = v
    return out


def _ufunc_at_infer(x, v, *dynamic, index, ufunc):
    return [(x.dtype, x.shape, x.weak)]


def _ufunc_at_kernel(xp, x, v, *dynamic, index, ufunc):
    out = xp.asarray(x, copy=True)
    getattr(xp, ufunc).at(out, _key(index, dynamic), v)
    return out


register("setitem", _setitem_infer, _setitem_kernel,
         doc="x[key] = v as a new tensor (a copy of x with the update)")
register("ufunc_at", _ufunc_at_infer, _ufunc_at_kernel,
         doc="numpy.<ufunc>.at(x, key, v) as a new tensor (repeated indices accumulate)")


def setitem(x, key, value):
    """`x[key] = value` on a copy of `x`: the value is cast to x's dtype (NumPy's unsafe
    casting of assignment) and broadcast to the selected elements."""
    x = as_tensor(x)
    index, dynamic = encode_index(key)
    if x.shape is not None and not any(item[0] == "t" for item in index):
        _index_shape(x.shape, index)   # out-of-range ints and too many indices, now
    v = cast(as_tensor(value), x.dtype)
    _check_target(x, v, index)
    return bind1("setitem", [x, v] + dynamic, {"index": index})


# ufuncs whose .at staging is offered (binary ones; the kernel is the namespace's ufunc.at)
UFUNCS_AT = ("add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
             "maximum", "minimum", "fmax", "fmin", "power", "bitwise_and", "bitwise_or",
             "bitwise_xor", "logical_and", "logical_or")


def ufunc_at(uf, x, key, value):
    """`uf.at(x, key, value)` on a copy of `x`. Casting follows ufunc.at (the result must
    cast to x's dtype under 'same_kind'), checked now on a one-element probe."""
    name = uf.__name__
    if name not in UFUNCS_AT:
        raise NotImplementedError(f"numpy.{name}.at is not supported while tracing; "
                                  f"supported: {', '.join(UFUNCS_AT)}")
    x = as_tensor(x)
    index, dynamic = encode_index(key)
    v = as_tensor(value)
    probe_v = value if not isinstance(value, (Tensor, np.ndarray)) else np.zeros(1, v.dtype)
    try:
        uf.at(np.ones(1, x.dtype), [0], probe_v)
    except (TypeError, np.exceptions.DTypePromotionError) as exc:
        raise TypeError(f"numpy.{name}.at({x!r}, ..., {describe([value])}): {exc}") from None
    v = cast(v, np.result_type(x.dtype, v.dtype) if not v.weak else x.dtype)
    return bind1("ufunc_at", [x, v] + dynamic, {"index": index, "ufunc": name})
