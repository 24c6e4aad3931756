"""In-place writes by array API libraries: `x[idx] = v` inside SciPy or array-api-extra.

The array API standard's arrays are mutable, and libraries written against it write into
arrays they made (array-api-extra's `at(x)[i].set(v)` does `x = xp.asarray(x, copy=True);
x[i] = v`, or writes `x` directly when it believes `x` writeable, as it believes every
array type it does not know). A graph's values are immutable, so a write is a new node
(`updates.setitem`, the node converted code makes for `x[i] = v`), and the Python object
`x` is rebound to it, the way the library's later reads of `x` expect:

- the node that made `x` gets a fresh output object for the old value, and every node,
  graph input, output and capture of the graph that held `x` is pointed at that object,
  so what was computed from `x` before the write keeps reading the old value;
- `x` becomes the output of the new node.

Only writes from library code are taken (the caller's module belongs to one of
`LIBRARIES`): the user's own unconverted code keeps the clear error, because a graph value
has no views, so NumPy's aliasing (`y = x[1:]; x[1] = 5` changes `y`) cannot be kept, and
converted code never writes in place (its `x[i] = v` is a functional update). Libraries
written for the array API do not rely on views (the standard leaves them unspecified).
Writes into a function's inputs (placeholders), into a value of an enclosing graph (from a
branch or loop body) or on an eager GradientTape are refused with a message naming the
library function.
"""

import sys

from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import SymbolicTensorError, Tensor

LIBRARIES = ("scipy", "sklearn", "array_api_extra", "array_api_compat")


def _library_module(name):
    return isinstance(name, str) and name.partition(".")[0] in LIBRARIES


def from_library(depth=2):
    """Whether the frame `depth` levels up (Tensor.__setitem__'s caller) is library code."""
    return _library_module(sys._getframe(depth).f_globals.get("__name__"))


def setitem(x, key, value):
    """`x[key] = value` by a library: rebind the object `x` to the updated value."""
    from autograph.runtime.numpy import library_calls, updates
    graph = get_default_graph()
    why = None
    if graph is None or x.node.graph is not graph:
        why = "the array was made outside the graph now being traced (a branch or loop body)"
    elif graph.live:
        why = "the eager GradientTape records values as they are computed"
    elif x.node.op == "Placeholder":
        why = "the array is an input of the traced function"
    if why is not None:
        name = library_calls.caller_name() or "a library function"
        raise SymbolicTensorError(
            f"{name} writes into the symbolic tensor {x!r} in place, which autograph can "
            f"only follow for arrays the library made itself while tracing: {why}. Call "
            f"{name} outside the traced function, or on a copy (np.copy(x)).")
    node, index = x.node, x.index
    old = Tensor(node, index, x.dtype, x.shape, x.weak)
    outputs = list(node.outputs)
    outputs[index] = old
    node.outputs = tuple(outputs)
    _repoint(graph, x, old)
    new = updates.setitem(old, key, value)
    if new.dtype != x.dtype or new.shape != x.shape:   # (setitem keeps both; checked anyway)
        raise TypeError(f"writing into {x!r} changed its type to {new!r}")
    new_node = new.node
    outputs = list(new_node.outputs)
    outputs[new.index] = x
    new_node.outputs = tuple(outputs)
    x.node, x.index, x.weak = new_node, new.index, new.weak


def _repoint(graph, x, old):
    """Every reference the graph holds to the object `x` now goes to `old`."""
    for n in graph.nodes:
        if any(t is x for t in n.inputs):
            n.inputs = tuple(old if t is x else t for t in n.inputs)
    graph.outputs = [old if t is x else t for t in (graph.outputs or ())]
    for k, (outer, inner) in list(graph.captures.items()):
        if inner is x:
            graph.captures[k] = (outer, old)
