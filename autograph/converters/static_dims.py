"""Static lengths put straight where None means something else -> checked reads.

    y[:x.shape[0]]                 ->  y[:ag__.known_dim(x.shape[0])]
    y[x.shape[0] - 1, x.shape[1]]  ->  y[x.shape[0] - 1, ag__.known_dim(x.shape[1])]
    np.clip(v, 0, x.shape[0])      ->  np.clip(v, 0, ag__.known_dim(x.shape[0]))
    np.random.normal(size=(x.shape[0], 3))  (the items of a tuple or list argument too)

While tracing, a dimension the signature leaves unknown reads as None (as in TensorFlow).
As an index None is np.newaxis, as a slice bound "to the end", as a NumPy argument often
"the default" (np.clip's bound, a random draw's size): the function would give a wrong
answer without an error. `ag__.known_dim` (autograph.operators.static_dims) refuses the None
while tracing and passes every other value through, so code run eagerly is unchanged.

A slice of x that ends at x's own length (`x[:, :x.shape[1]]`, no negative step) is left
alone: there None means the same thing. Only a read written in place is wrapped: `n = x.shape[0]` stays as it is, so
`if n is None: n = len(x)` keeps working (and `y[:n]` is then not checked; docs/limitations.md).
Arithmetic on the None (`x.shape[0] - 1`) already fails by itself; NumPy's creation
functions check their lengths at run time (runtime.numpy.none_operands).
"""

import sys

import gast

from autograph.converters import base
from autograph.source import templates, traversal


def _is_static_dim(node):
    """`<expr>.shape[k]` read as a value (k not a slice: `x.shape[1:]` is a tuple)."""
    return isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load) and \
        isinstance(node.value, gast.Attribute) and node.value.attr == "shape" and \
        not isinstance(node.slice, gast.Slice)


def _checked(node):
    return templates.replace_as_expression("ag__.known_dim(dim)", origin=node,
                                          dim=templates.moved(node))


def _check_slots(owner, fields):
    """Wrap the static dimensions held directly in `owner`'s `fields` (lists too)."""
    for field in fields:
        value = getattr(owner, field, None)
        if isinstance(value, list):
            for i, item in enumerate(value):
                if _is_static_dim(item):
                    value[i] = _checked(item)
        elif _is_static_dim(value):
            setattr(owner, field, _checked(value))


def _own_length(target, axis, piece):
    """Whether `piece` (a slice at `axis` of `target[...]`) ends at `target`'s own length on
    that axis, `x[:, :x.shape[1]]`: with a step that is absent or a positive number, None
    there means the same thing, so the slice is right as it stands."""
    upper = piece.upper
    step = piece.step
    if step is not None and not (isinstance(step, gast.Constant) and
                                 isinstance(step.value, int) and step.value > 0):
        return False
    index = upper.slice
    return isinstance(index, gast.Constant) and index.value == axis and \
        isinstance(target, gast.Name) and isinstance(upper.value.value, gast.Name) and \
        upper.value.value.id == target.id


def _check_slice(target, axis, piece):
    fields = ("lower", "upper", "step")
    if _is_static_dim(piece.upper) and _own_length(target, axis, piece):
        fields = ("lower", "step")
    _check_slots(piece, fields)


def _check_key(target, key):
    if isinstance(key, gast.Slice):
        _check_slice(target, 0, key)
    elif isinstance(key, gast.Tuple):
        plain = True   # (an axis number holds until an Ellipsis or a new axis)
        for axis, item in enumerate(key.elts):
            if isinstance(item, gast.Slice):
                _check_slice(target, axis if plain else -1, item)
            elif isinstance(item, gast.Constant) and item.value in (None, Ellipsis):
                plain = False
        _check_slots(key, ("elts",))


def _is_numpy(func, ctx):
    """Whether `func` is an attribute of the numpy module (np.clip, np.random.normal) or a
    method of a NumPy object (a global Generator's rng.normal), looked up in the function's
    globals (a local or closure name may be anything)."""
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not parts or not isinstance(func, gast.Name) or func.id not in ctx.namespace:
        return False
    code = getattr(ctx.fn, "__code__", None)
    if code is not None and func.id in code.co_varnames + code.co_freevars:
        return False
    root = ctx.namespace[func.id]
    if isinstance(root, type(sys)):
        return root.__name__.split(".")[0] == "numpy"
    return (type(root).__module__ or "").split(".")[0] == "numpy"   # a Generator, an array


def transform(node, ctx):
    """Wrap the static dimensions of subscripts and NumPy calls under `node`."""
    if not base.may_contain(ctx, "shape"):
        return node
    for n in list(traversal.walk(node, leaves=False)):
        if isinstance(n, gast.Subscript) and not _is_static_dim(n):
            _check_key(n.value, n.slice)
            _check_slots(n, ("slice",))
        elif isinstance(n, gast.Call) and _is_numpy(n.func, ctx):
            for arg in n.args + [k.value for k in n.keywords]:
                if isinstance(arg, (gast.Tuple, gast.List)):
                    _check_slots(arg, ("elts",))
            _check_slots(n, ("args",))
            for k in n.keywords:
                _check_slots(k, ("value",))
    return node
