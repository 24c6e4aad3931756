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

from autograph.runtime.ir.primitives import bind1, defvjp, register
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


# -- gathers and scatters: the transposes of indexing (what gradient rules use) ----------------

def _advanced_shape(shape, index, dynamic):
    """The shape of x[key] with index arrays (NumPy's rule: the broadcast shape of the
    arrays replaces the axes they index, in place when they are adjacent, else first; a
    boolean array counts its true elements, unknown while tracing)."""
    if shape is None or any(dynamic[it[1]].shape is None for it in index if it[0] == "t"):
        return None

    def width(it):
        if it[0] == "t":
            t = dynamic[it[1]]
            return len(t.shape) if t.dtype.kind == "b" else 1
        return 1 if it[0] in "ids" else 0
    rest = len(shape) - sum(width(it) for it in index)
    out, arrays, where, axis = [], [], [], 0
    for k, it in enumerate(index):
        tag = it[0]
        if tag == "t":
            t = dynamic[it[1]]
            arrays.append((None,) if t.dtype.kind == "b" else t.shape)
            where.append(k)
            if not out or out[-1] != "A":
                out.append("A")
            axis += width(it)
        elif tag == "e":
            out.extend(shape[axis:axis + rest])
            axis += rest
        elif tag == "n":
            out.append(1)
        elif tag == "s":
            d = shape[axis]
            static = not any(isinstance(b, tuple) for b in it[1:])
            out.append(len(range(*slice(*it[1:]).indices(d))) if d is not None and static
                       else None)
            axis += 1
        else:
            where.append(k)
            axis += 1
    out.extend(shape[axis:])
    try:
        adv = np.broadcast_shapes(*[tuple(1 if d is None else d for d in s) for s in arrays])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together")
    adv = tuple(None if any(len(s) >= len(adv) - i and s[i - len(adv)] is None
                            for s in arrays) else d for i, d in enumerate(adv))
    adjacent = where == list(range(where[0], where[-1] + 1))
    parts = [d for d in out if d != "A"]
    if adjacent:
        at = out.index("A")
        return tuple(out[:at]) + adv + tuple(d for d in out[at + 1:] if d != "A")
    return adv + tuple(parts)


def _index_get_infer(x, *dynamic, index):
    if any(item[0] == "t" for item in index):
        return [(x.dtype, _advanced_shape(x.shape, index, dynamic), False)]
    return [(x.dtype, _index_shape(x.shape, index), False)]


def _index_get_kernel(xp, x, *dynamic, index):
    return x[_key(index, dynamic)]


register("index_get", _index_get_infer, _index_get_kernel,
         doc="x[key] for any key setitem takes (advanced indices included)")


def index_get(x, index, dynamic):
    return bind1("index_get", [x] + list(dynamic), {"index": index})


def scatter(ct, x, index, dynamic, accumulate=True):
    """Zeros of x's shape and dtype with `ct` added at x[key] (`accumulate`: repeated
    positions sum, as np.add.at; else stored, for keys that select each element once)."""
    from autograph.runtime.numpy.adjoint import zeros
    base = zeros(x, ct.dtype)
    if accumulate:
        return bind1("ufunc_at", [base, ct] + list(dynamic), {"index": index, "ufunc": "add"})
    return bind1("setitem", [base, ct] + list(dynamic), {"index": index})


# -- reverse-mode rules ------------------------------------------------------------------------

def _setitem_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, differentiable, fit, ins
    g, (x, v, *dynamic), index = cts[0], ins(node), node.attrs["index"]
    dynamic = [d.value for d in dynamic]
    if not differentiable(x):
        return [None] * len(node.inputs)
    zero = bind1("zeros", (), {"shape": (), "dtype": g.dtype})
    gx = bind1("setitem", [g, zero] + dynamic, {"index": index})
    gv = fit(index_get(g, index, dynamic), v)
    return [cast_like(gx, x), gv] + [None] * len(dynamic)


def _ufunc_at_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, differentiable, fit, ins
    g, (x, v, *dynamic), index = cts[0], ins(node), node.attrs["index"]
    dynamic = [d.value for d in dynamic]
    name = node.attrs["ufunc"]
    if not differentiable(x):
        return [None] * len(node.inputs)
    if name not in ("add", "subtract"):
        raise NotImplementedError(f"autograph cannot differentiate numpy.{name}.at yet "
                                  "(add.at and subtract.at have gradients); write the update "
                                  "as x[key] = numpy." + name + "(x[key], v) when keys repeat "
                                  "no element")
    gv = fit(index_get(g, index, dynamic), v)
    if name == "subtract" and gv is not None:
        gv = -gv
    return [cast_like(g, x), gv] + [None] * len(dynamic)


def _index_get_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import differentiable, ins
    x, *dynamic = ins(node)
    if not differentiable(x):
        return [None] * len(node.inputs)
    dynamic = [d.value for d in dynamic]
    return [scatter(cts[0], x, node.attrs["index"], dynamic)] + [None] * len(dynamic)


defvjp("setitem", _setitem_vjp)
defvjp("ufunc_at", _ufunc_at_vjp)
defvjp("index_get", _index_get_vjp)
