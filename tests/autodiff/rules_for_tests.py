"""A minimal set of VJP rules the core tests need until the per-family rules (branch
h13-ad-rules, in runtime/numpy/*.py) are merged. Each is registered only where the table
has no rule yet, so the real rules win once they exist."""

import numpy as np

import autograph.runtime.numpy.dispatch  # noqa: F401 (registers the NumPy primitives)
from autograph.runtime.ir import primitives


def _unbroadcast(ct, shape):
    """Sum `ct` down to `shape` (undoing broadcasting)."""
    if ct is None or tuple(ct.shape) == tuple(shape):
        return ct
    extra = len(ct.shape) - len(shape)
    if extra:
        ct = np.sum(ct, axis=tuple(range(extra)))
    axes = tuple(i for i, (a, b) in enumerate(zip(ct.shape, shape)) if b == 1 and a != 1)
    if axes:
        ct = np.sum(ct, axis=axes, keepdims=True)
    return ct


def _shape(node, i):
    return node.node.inputs[i].shape


def _binary(fa, fb):
    def rule(cts, node):
        ct = cts[0]
        return [_unbroadcast(fa(ct, node), _shape(node, 0)),
                _unbroadcast(fb(ct, node), _shape(node, 1))]
    return rule


def _x(node):
    return node.inputs[0]


_RULES = {
    "add": _binary(lambda c, n: c, lambda c, n: c),
    "subtract": _binary(lambda c, n: c, lambda c, n: -c),
    "multiply": _binary(lambda c, n: c * n.inputs[1], lambda c, n: c * n.inputs[0]),
    "divide": _binary(lambda c, n: c / n.inputs[1],
                      lambda c, n: -c * n.inputs[0] / (n.inputs[1] * n.inputs[1])),
    "negative": lambda cts, n: [-cts[0]],
    "sin": lambda cts, n: [cts[0] * np.cos(_x(n))],
    "cos": lambda cts, n: [-cts[0] * np.sin(_x(n))],
    "exp": lambda cts, n: [cts[0] * n.outputs[0]],
    "log": lambda cts, n: [cts[0] / _x(n)],
    "tanh": lambda cts, n: [cts[0] * (1.0 - n.outputs[0] * n.outputs[0])],
    "square": lambda cts, n: [cts[0] * 2.0 * _x(n)],
    "sum": lambda cts, n: [np.broadcast_to(
        cts[0] if n.attrs.get("keepdims") or n.attrs.get("axis") is None
        else np.expand_dims(cts[0], n.attrs["axis"]), _shape(n, 0))],
    "matmul": lambda cts, n: [cts[0] @ np.swapaxes(n.inputs[1], -1, -2),
                              np.swapaxes(n.inputs[0], -1, -2) @ cts[0]],
    "permute_dims": lambda cts, n: [np.transpose(cts[0], np.argsort(n.attrs["axes"]))],
    "broadcast_to": lambda cts, n: [_unbroadcast(cts[0], _shape(n, 0))],
    "reshape": lambda cts, n: [np.reshape(cts[0], _shape(n, 0))],
    "maximum": _binary(lambda c, n: np.where(n.inputs[0] >= n.inputs[1], c, 0.0),
                       lambda c, n: np.where(n.inputs[0] >= n.inputs[1], 0.0, c)),
    "where": lambda cts, n: [None, _unbroadcast(np.where(n.inputs[0], cts[0], 0.0), _shape(n, 1)),
                             _unbroadcast(np.where(n.inputs[0], 0.0, cts[0]), _shape(n, 2))],
    "astype": lambda cts, n: [None if n.node.inputs[0].dtype.kind not in "fc"
                              else cts[0].astype(n.node.inputs[0].dtype)],
}


def install():
    for name, rule in _RULES.items():
        prim = primitives.PRIMITIVES.get(name)
        if prim is not None and prim.vjp is None and not prim.nondiff:
            primitives.defvjp(name, rule)
    for name in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                 "floor_divide", "remainder", "ones_like", "zeros_like", "full_like", "zeros",
                 "ones", "full", "arange", "shape_of", "size_of", "logical_and", "logical_or",
                 "logical_not", "sign", "floor"):
        prim = primitives.PRIMITIVES.get(name)
        if prim is not None and prim.vjp is None and not prim.nondiff:
            primitives.nondifferentiable(name)


install()
