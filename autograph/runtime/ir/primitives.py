"""The primitive table: one entry per operation the graph can hold.

A primitive is a name. Its entry says how to infer the dtype and static shape of its
outputs (`infer`), which kernel runs it (`kernel`: the name of a function in the device's
array namespace, or a function `kernel(xp, *arrays, **attrs)` built from namespace calls),
and whether it has side effects (effectful nodes are never folded, merged or dropped).
Entries are registered next to the code that defines the primitive; executors and
optimisations only read this table.

Gradients are a third interpretation, registered next to the other two:

- `defvjp(name, rule)`: `rule(cts, node)` returns one input cotangent per input of `node`
  (a Tensor of the input's shape and dtype, or None for a zero). `cts` holds one output
  cotangent per output (None where that output is not connected to the target).
  `node.inputs[i]`, `node.outputs[j]` and `node.attrs` give the primal values *as tensors of
  the graph being built* (the reverse-mode transform resolves them lazily, so it stores only
  what a rule reads). A rule stages primitives, usually through NumPy calls on Tensors.
- `nondifferentiable(name, ...)`: every input gets a zero cotangent (integer, boolean,
  comparison ops, argmax, floor, ...).

A floating-point primitive with neither is an error at differentiation time naming the
primitive and the user's line; a test audits the table.
"""

import numpy as np

from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor


class Primitive:
    """One entry of the table, immutable (`replace` makes a changed copy):
    - name: str
    - infer(*inputs: Tensor, **attrs) -> [(dtype, shape, weak)], one per output
    - kernel: an attribute name of the device's array namespace, or
      kernel(xp, *arrays, **attrs), or None (executors handle it themselves)
    - effectful: bool; doc: str or None
    - vjp(cts, node) -> [input cotangent or None], or None
    - nondiff: zero cotangents for every input
    (A plain class, not a dataclass: the table is built while `import autograph` runs.)"""

    __slots__ = ("name", "infer", "kernel", "effectful", "doc", "vjp", "nondiff")

    def __init__(self, name, infer, kernel, effectful=False, doc=None, vjp=None, nondiff=False):
        # (written out: the table's ~150 primitives are made while a first call imports)
        init = object.__setattr__
        init(self, "name", name)
        init(self, "infer", infer)
        init(self, "kernel", kernel)
        init(self, "effectful", effectful)
        init(self, "doc", doc)
        init(self, "vjp", vjp)
        init(self, "nondiff", nondiff)

    def __setattr__(self, name, value):
        raise AttributeError(f"Primitive is immutable: use primitives.replace(prim, {name}=...)")

    def _fields(self):
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other):
        return type(other) is Primitive and self._fields() == other._fields()

    def __hash__(self):
        return hash(self._fields())

    def __repr__(self):
        return "Primitive(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__slots__) + ")"


def replace(prim, **changes):
    """A copy of `prim` with some fields changed (like dataclasses.replace)."""
    unknown = set(changes) - set(Primitive.__slots__)
    if unknown:
        raise TypeError(f"Primitive has no field {sorted(unknown)[0]!r}")
    return Primitive(**{f: changes.get(f, getattr(prim, f)) for f in Primitive.__slots__})


PRIMITIVES = {}


def register(name, infer, kernel=None, effectful=False, doc=None, vjp=None, nondiff=False):
    """Add a primitive to the table (re-registering a name replaces it, keeping a
    gradient rule registered earlier unless a new one is given)."""
    old = PRIMITIVES.get(name)
    if old is not None and vjp is None and not nondiff:
        vjp, nondiff = old.vjp, old.nondiff
    prim = Primitive(name, infer, name if kernel is None else kernel, effectful, doc,
                     vjp, nondiff)
    PRIMITIVES[name] = prim
    return prim


def defvjp(name, rule):
    """Register `rule(cts, node)` as the reverse-mode rule of primitive `name`."""
    p = lookup(name)
    PRIMITIVES[name] = Primitive(p.name, p.infer, p.kernel, p.effectful, p.doc, rule, False)
    return rule


def nondifferentiable(*names):
    """Mark primitives whose inputs always get zero cotangents."""
    for name in names:
        p = lookup(name)
        PRIMITIVES[name] = Primitive(p.name, p.infer, p.kernel, p.effectful, p.doc, None, True)


def lookup(name):
    try:
        return PRIMITIVES[name]
    except KeyError:
        pass
    # the NumPy surface registers its families' primitives when first used, control flow
    # (Cast, cond, while_loop) when first staged: a graph read back (a saved model) or a
    # gradient, JVP or batching rule may name one before any was
    import autograph.runtime.numpy.dispatch  # noqa: F401
    import autograph.runtime.control_flow  # noqa: F401
    if name.startswith("special_"):   # SciPy's ufuncs: registered apart (no SciPy import)
        import autograph.runtime.numpy.scipy_special  # noqa: F401
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise NotImplementedError(f"autograph has no primitive named {name!r}") from None


def current_graph(inputs=()):
    """The graph new nodes go into: the default graph while tracing."""
    graph = get_default_graph()
    if graph is None:
        for t in inputs:
            if isinstance(t, Tensor):
                from autograph.runtime.ir.graph import leak_message
                raise ValueError(leak_message(t))
        raise RuntimeError("no graph is being built (not inside a trace)")
    return graph


def bind(name, inputs=(), attrs=None, graph=None, node_name=None):
    """Stage primitive `name` on tensor `inputs`; returns the new Node."""
    prim = PRIMITIVES.get(name) or lookup(name)
    attrs = attrs or {}
    graph = graph or current_graph(inputs)
    inputs = [t if t.node.graph is graph else graph.capture(t) for t in inputs]
    specs = prim.infer(*inputs, **attrs) if attrs else prim.infer(*inputs)
    return graph.add_node(name, inputs, attrs, specs, name=node_name)


def bind1(name, inputs=(), attrs=None, graph=None, node_name=None):
    """`bind` for a primitive with exactly one output: returns that output Tensor."""
    return bind(name, inputs, attrs, graph, node_name).outputs[0]


# -- the primitives every graph needs -------------------------------------------------------

def _no_infer(*_, **__):
    raise TypeError("placeholders are made with Graph.placeholder")


register("Placeholder", _no_infer, kernel=None)


def _identity_infer(x):
    return [(x.dtype, x.shape, x.weak)]


register("Identity", _identity_infer, kernel=lambda xp, x: x,
         vjp=lambda cts, node: [cts[0]])


def _const_infer(*, value, weak=False):
    return [(value.dtype, value.shape, weak)]


register("Const", _const_infer, kernel=None)  # executors bind the value, moved to the device
nondifferentiable("Placeholder", "Const")   # (no inputs: nothing flows through them)


_PY_SCALARS = (bool, int, float, complex)


def const(value, weak=False, graph=None, name="Const", dtype=None, handle=False):
    """A Const node holding a snapshot of `value`. Only `handle=True` (a placeholder for
    a TensorArray's, a list's or a stack's handle) may hold Python objects.

    The graph keeps its own read-only copy: a global or captured array that the user
    changes after tracing does not change the traced function (values are read at trace
    time), and nothing that runs the graph can change the constant in place."""
    array = np.array(value, dtype=dtype, copy=True)
    if array.dtype.kind == "O" and not handle:
        from autograph.runtime.ir import tensor
        raise TypeError(not_a_value(value) + tensor.where(" At "))
    array.flags.writeable = False
    # bind1("Const", ...) without its generic steps: no inputs, and _const_infer's answer
    graph = graph or current_graph(())
    return graph.add_node("Const", (), {"value": array, "weak": weak},
                          ((array.dtype, array.shape, weak),), name).outputs[0]


def not_a_value(value):
    """Why `value` (NumPy makes it an object array) cannot be a constant of a graph."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()          # (np.asarray(None): say None)
    if value is None:
        return ("None cannot be a value in a graph while tracing. If it is a dimension of "
                "x.shape, that dimension is unknown (the signature leaves it None): use "
                "len(x) or np.size(x, axis), which are tensors then (docs/limitations.md).")
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return (f"{type(value).__name__} value {text} cannot be a value in a graph: only numbers, "
            "booleans, strings and arrays of them can (an object array has no graph dtype).")


def constant(value, dtype=None, graph=None, name="Const", handle=False):
    """A Const node for a Python or NumPy value. A bare Python scalar (no dtype asked for)
    makes a weak tensor that adopts the dtype of whatever array it meets (NEP 50)."""
    weak = dtype is None and type(value) in _PY_SCALARS
    return const(value, weak, graph, name, dtype, handle)


def convert(x, dtype=None, graph=None):
    """`x` as a Tensor of the current graph: tensors pass through (captured if outer),
    Python and NumPy values become Const nodes."""
    if isinstance(x, Tensor):
        return (graph or current_graph((x,))).capture(x)
    return constant(x, dtype=dtype, graph=graph)
