"""JVP rules of the NumPy primitives (runtime/numpy/), by family.

Elementwise ufuncs reuse the derivative formulas their VJP rules are built from
(`elementwise._UNARY_RULES` / `_BINARY_RULES`: `d(g, x, y)` is `g * f'(x)`, linear in `g`,
so the same formula applied to a tangent is the JVP); the result is broadcast to the
output's shape, since a tangent of a broadcast operand has the operand's shape.
Structural and indexing primitives are linear in their data inputs; products are
bilinear; what is left (piecewise selections, linear algebra, SciPy's special functions)
is the transpose of its VJP rule (jvp_transpose.py).
"""

import numpy as np

from autograph.autodiff.jvp_table import (defjvp, deflinear, deftransposed, differentiable,
                                          instantiate)
from autograph.runtime.ir import primitives
from autograph.runtime.numpy import elementwise, scipy_special  # noqa: F401 (registers)
from autograph.runtime.numpy import (array_ops, fft, joins, linalg, linalg_eig,  # noqa: F401
                                     reductions, shape_ops, sorting, statistics, updates)


def _fit_out(t, y):
    """Tangent `t` (of a broadcast operand's shape, or a weak dtype) as `y`'s tangent."""
    if t.dtype != y.dtype:
        t = t.astype(y.dtype)
    if t.shape == y.shape and y.shape is not None and None not in y.shape:
        return t
    if y.shape is not None and None not in y.shape:
        return np.broadcast_to(t, y.shape)
    return t + np.zeros_like(y)


def _unary(d):
    def rule(tangents, node):
        x, y = node.inputs[0], node.outputs[0]
        if not differentiable(y):
            return [None]
        return [_fit_out(d(tangents[0], x, y), y)]
    return rule


def _abs(tangents, node):
    x, y, t = node.inputs[0], node.outputs[0], tangents[0]
    if x.dtype.kind == "c":   # d|z| = Re(conj(z) dz) / |z|
        safe = np.where(y == 0, 1.0, y)
        return [_fit_out(np.where(y == 0, 0.0 * y, np.real(np.conjugate(x) * t) / safe), y)]
    return [_fit_out(t * np.sign(x), y)]


def _binary(da, db):
    def rule(tangents, node):
        (a, b), y = node.inputs, node.outputs[0]
        if not differentiable(y):
            return [None]
        ta, tb = tangents
        terms = []
        if ta is not None and da is not None:
            terms.append(da(ta, a, b, y))
        if tb is not None:
            if db is None:
                raise NotImplementedError(f"{node.op} has no derivative in its second argument")
            terms.append(db(tb, a, b, y))
        if not terms:
            return [None]
        t = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        return [_fit_out(t, y)]
    return rule


for _name, (_d, _reads) in elementwise._UNARY_RULES.items():
    defjvp(_name, _unary(_d))
defjvp("abs", _abs)
for _name, (_da, _db, _reads) in elementwise._BINARY_RULES.items():
    defjvp(_name, _binary(_da, _db))


def _bilinear(tangents, node):
    """matmul, tensordot: d(a . b) = da . b + a . db."""
    (a, b), y = node.inputs, node.outputs[0]
    ta, tb = tangents
    terms = []
    if ta is not None:
        terms.append(primitives.bind1(node.op, [ta, b], dict(node.attrs)))
    if tb is not None:
        terms.append(primitives.bind1(node.op, [a, tb], dict(node.attrs)))
    t = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    return [t if t.dtype == y.dtype else t.astype(y.dtype)]


defjvp("matmul", _bilinear)
defjvp("tensordot", _bilinear)


def _ufunc_at(tangents, node):
    if node.attrs["ufunc"] in ("add", "subtract"):
        return _LINEAR_UPDATE(tangents, node)
    from autograph.autodiff.jvp_transpose import transposed_rule
    return transposed_rule(tangents, node)


_LINEAR_UPDATE = deflinear("setitem", (0, 1))
defjvp("ufunc_at", _ufunc_at)

# linear in the data input (indices, shapes, masks, counts pass through)
for _name in ("astype", "reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to",
              "flip", "roll", "sum_to_shape", "getitem", "take", "boolean_mask", "index_get",
              "take_along_axis", "add_along_axis", "real", "imag", "repeat", "tile", "sum",
              "mean", "cumulative_sum", "diagonal", "tril", "triu", "fft"):
    deflinear(_name, (0,))
deflinear("where", (1, 2))
deflinear("concat", None)
deflinear("stack", None)

# piecewise selections, products and linear algebra: the transpose of the VJP rule
for _name in ("max", "min", "sort", "clip", "prod", "cumulative_prod", "unique", "polymul",
              "bincount", "inv", "det", "solve", "cholesky", "eigh", "eigvalsh", "qr", "svd",
              "svdvals", "slogdet", "pinv", "lstsq", "eig"):
    deftransposed(_name)
for _name, _prim in list(primitives.PRIMITIVES.items()):
    if _name.startswith("special_") and _prim.vjp is not None:
        deftransposed(_name)

_ = instantiate
