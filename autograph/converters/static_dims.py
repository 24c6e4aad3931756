"""Static lengths put straight where None means something else -> checked reads.

    y[:x.shape[0]]                 ->  y[:ag__.known_dim(x.shape[0])]
    n, m = x.shape; y[:n]          ->  n, m = x.shape; y[:ag__.known_dim(n)]
    y[x.shape[0] - 1, x.shape[1]]  ->  y[x.shape[0] - 1, ag__.known_dim(x.shape[1])]
    np.clip(v, 0, x.shape[0])      ->  np.clip(v, 0, ag__.known_dim(x.shape[0]))
    np.random.normal(size=(x.shape[0], 3))  (the items of a tuple or list argument too)

While tracing, a dimension the signature leaves unknown reads as None (as in TensorFlow).
As an index None is np.newaxis, as a slice bound "to the end", as a NumPy argument often
"the default" (np.clip's bound, a random draw's size): the function would give a wrong
answer without an error. `ag__.known_dim` (autograph.operators.static_dims) refuses the None
while tracing and passes every other value through, so code run eagerly is unchanged.

A name every binding of which reads a static dimension (`n = x.shape[0]`, `n, m = x.shape`)
counts as one, unless some code tests it for None or for truth: after
`if n is None: n = len(x)` (TensorFlow's idiom) or `n = x.shape[0] or len(x)`, `y[:n]` stays
as written. A slice of x that ends at x's own length (`x[:, :x.shape[1]]`, `x[:n]`, no
negative step) is left alone too: there None means the same thing. A dimension handed to a
function as its parameter is not seen here. Arithmetic on the None (`x.shape[0] - 1`)
already fails by itself; NumPy's creation functions check their lengths at run time
(runtime.numpy.none_operands).
"""

import sys

import gast

from autograph.converters import base
from autograph.source import templates, traversal


_NO_OWNER = (None, None)   # (a read whose array or axis cannot be named)


def _is_static_dim(node):
    """`<expr>.shape[k]` read as a value (k not a slice: `x.shape[1:]` is a tuple)."""
    return isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load) and \
        isinstance(node.value, gast.Attribute) and node.value.attr == "shape" and \
        not isinstance(node.slice, gast.Slice)


def _owner(shape_attr, axis):
    """(array name, axis) of `x.shape` read at `axis`, or _NO_OWNER."""
    array = shape_attr.value
    if isinstance(array, gast.Name) and isinstance(axis, int) and axis >= 0:
        return array.id, axis
    return _NO_OWNER


def _is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def _dim_names(nodes):
    """{name: (array, axis)} for the names every binding of which reads a static dimension
    (`n = x.shape[0]`, `n, m = x.shape`) and which no code tests for None or for truth
    (`if n is None: n = len(x)`, `n or len(x)` keep their meaning)."""
    found, bad, bindings = {}, set(), set()

    def bind(target, owner):
        bindings.add(id(target))
        found[target.id] = owner if found.get(target.id, owner) == owner else _NO_OWNER

    for n in nodes:
        if isinstance(n, gast.Assign) and len(n.targets) == 1:
            target, value = n.targets[0], n.value
            if isinstance(target, gast.Name) and _is_static_dim(value):
                k = value.slice
                bind(target, _owner(value.value, k.value if isinstance(k, gast.Constant)
                                    else None))
            elif isinstance(target, gast.Tuple) and isinstance(value, gast.Attribute) and \
                    value.attr == "shape" and all(isinstance(e, gast.Name) for e in target.elts):
                for axis, e in enumerate(target.elts):
                    bind(e, _owner(value, axis))
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            bad.update(n.names)
    if not found:
        return found
    for n in nodes:
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            if id(n) not in bindings:      # a parameter, a loop variable, `n += 1`, ...
                bad.add(n.id)
        elif isinstance(n, gast.Compare) and any(map(_is_none, [n.left] + n.comparators)):
            bad.update(o.id for o in [n.left] + n.comparators if isinstance(o, gast.Name))
        elif isinstance(n, gast.BoolOp):
            bad.update(v.id for v in n.values if isinstance(v, gast.Name))
        elif isinstance(n, (gast.If, gast.While, gast.IfExp, gast.Assert)) and \
                isinstance(n.test, gast.Name):
            bad.add(n.test.id)
        elif isinstance(n, gast.UnaryOp) and isinstance(n.operand, gast.Name):
            bad.add(n.operand.id)
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                n.func.id in ("bool", "isinstance", "type"):
            bad.update(a.id for a in n.args if isinstance(a, gast.Name))
    return {name: owner for name, owner in found.items() if name not in bad}


class _Wrapper:
    """Wraps the static dimensions (reads of .shape[k], names bound only to them) that sit
    in an index, a slice bound or a NumPy call's argument."""

    def __init__(self, names):
        self.names = names

    def dim(self, node):
        """(array, axis) when `node` is a static dimension, else None."""
        if _is_static_dim(node):
            k = node.slice
            return _owner(node.value, k.value if isinstance(k, gast.Constant) else None)
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            return self.names.get(node.id)
        return None

    def check_slots(self, owner, fields, exempt=None):
        """Wrap the static dimensions held directly in `owner`'s `fields` (lists too), but
        for a read of `exempt` (array, axis)."""
        for field in fields:
            value = getattr(owner, field, None)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if self.dim(item) is not None:
                        value[i] = _checked(item)
            else:
                found = self.dim(value)
                if found is not None and (exempt is None or found != exempt):
                    setattr(owner, field, _checked(value))

    def check_slice(self, target, axis, piece):
        """A slice at `axis` of `target[...]` that ends at target's own length on that axis
        (`x[:, :x.shape[1]]`, a step absent or a positive number) is right as it stands:
        None there means the same thing."""
        step = piece.step
        own = isinstance(target, gast.Name) and axis >= 0 and (step is None or (
            isinstance(step, gast.Constant) and isinstance(step.value, int) and
            step.value > 0))
        self.check_slots(piece, ("lower", "step"))
        self.check_slots(piece, ("upper",), exempt=(target.id, axis) if own else None)

    def check_key(self, target, key):
        if isinstance(key, gast.Slice):
            self.check_slice(target, 0, key)
        elif isinstance(key, gast.Tuple):
            plain = True   # (an axis number holds until an Ellipsis or a new axis)
            for axis, item in enumerate(key.elts):
                if isinstance(item, gast.Slice):
                    self.check_slice(target, axis if plain else -1, item)
                elif isinstance(item, gast.Constant) and item.value in (None, Ellipsis):
                    plain = False
            self.check_slots(key, ("elts",))


def _checked(node):
    return templates.replace_as_expression("ag__.known_dim(dim)", origin=node,
                                          dim=templates.moved(node))


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
    nodes = list(traversal.walk(node, leaves=False))
    wrap = _Wrapper(_dim_names(nodes))
    for n in nodes:
        if isinstance(n, gast.Subscript) and not _is_static_dim(n):
            wrap.check_key(n.value, n.slice)
            wrap.check_slots(n, ("slice",))
        elif isinstance(n, gast.Call) and _is_numpy(n.func, ctx):
            for arg in n.args + [k.value for k in n.keywords]:
                if isinstance(arg, (gast.Tuple, gast.List)):
                    wrap.check_slots(arg, ("elts",))
            wrap.check_slots(n, ("args",))
            for k in n.keywords:
                wrap.check_slots(k, ("value",))
    return node
