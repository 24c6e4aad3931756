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
from autograph.runtime.ir.tensor import LIBRARIES, SymbolicTensorError, Tensor  # noqa: F401


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
    else:
        why = view_problem(graph, x)
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


# NumPy operations whose result is a view of their first input: a write into the result
# changes the input, and a write into the input changes results made before it
VIEW_OPS = frozenset(("getitem", "reshape", "permute_dims", "squeeze", "expand_dims",
                      "broadcast_to", "flip", "diagonal", "real", "imag"))


def _is_view(node):
    if node.op not in VIEW_OPS:
        return False
    if node.op == "getitem":   # basic indexing makes a view; an index array, a copy
        index = node.attrs.get("index", ())
        if any(item[0] == "t" for item in index):
            return False
        # integers only down to a 0-d result (x[1], x[()]): NumPy gives a scalar, a copy
        return node.outputs[0].shape != () or any(item[0] in "sne" for item in index)
    return True


def view_problem(graph, x):
    """Why an in-place write into `x` cannot be followed (None when it can): NumPy would
    change another array through a view, which a graph value has no way to."""
    if _is_view(x.node):
        return (f"the array is a view ({x.node.op}) of another array, which NumPy would "
                "change too")
    for n in graph.nodes:
        if _is_view(n) and n.inputs and n.inputs[0] is x and _held(n.outputs[0], graph):
            return (f"a view of the array was taken before ({n.op}) and is still in use, "
                    "and NumPy would change it too")
    return None


def _held(t, graph):
    """Whether anything besides the graph's own tuples refers to tensor `t` (a library
    variable that may read it later). `x[i] *= 2` reads the view `x[i]` into a temporary
    that is gone by the time `x[i]` is written: only the graph holds it then."""
    in_graph = 1 + sum(1 for n in graph.nodes for i in n.inputs if i is t)   # + outputs
    in_graph += sum(1 for o in (graph.outputs or ()) if o is t)
    return sys.getrefcount(t) - 2 > in_graph   # (getrefcount's argument, this frame's `t`)


def _stores_back(frame):
    """Whether the caller's augmented assignment stores into a subscript (`x[i] *= 2`):
    the new value then goes back into `x` through __setitem__."""
    import dis
    after = False
    for ins in dis.get_instructions(frame.f_code):
        if ins.offset == frame.f_lasti:
            after = True
        elif after and ins.opname not in ("CACHE", "SWAP", "ROT_TWO", "ROT_THREE", "COPY",
                                          "EXTENDED_ARG", "NOP"):
            return ins.opname == "STORE_SUBSCR"
    return False


def check_inplace(x, symbol):
    """Before a library's `x <symbol>= other` (Tensor.__iadd__ and friends) makes a new
    tensor, as Python's fallback to `x = x + other` does: refuse the update of a view, whose
    NumPy answer changes another array (never silently not propagated)."""
    # (called for library frames only: tensor._inplace checked)
    graph = get_default_graph()
    why = view_problem(graph, x) if graph is not None and x.node.graph is graph else None
    if why is not None and _is_view(x.node) and _stores_back(sys._getframe(3)):
        why = None   # `x[i] op= y`: the result is written back into x, checked there
    if why is not None:
        from autograph.runtime.numpy import library_calls
        name = library_calls.caller_name() or "a library function"
        raise SymbolicTensorError(
            f"{name} updates the symbolic tensor {x!r} in place (`{symbol}=`), which "
            f"autograph cannot follow: {why}. Call {name} outside the traced function.")


def _repoint(graph, x, old):
    """Every reference the graph holds to the object `x` now goes to `old`: node inputs,
    outputs, and the captures of the branch and loop graphs nested in its nodes (which
    name the outer tensor they read: `captured_inputs()` must agree with the node)."""
    for n in graph.nodes:
        if any(t is x for t in n.inputs):
            n.inputs = tuple(old if t is x else t for t in n.inputs)
        _repoint_captures(n, x, old)
    graph.outputs = [old if t is x else t for t in (graph.outputs or ())]


def _repoint_captures(node, x, old):
    from autograph.runtime.ir.graph import Graph
    for sub in node.attrs.values():
        if isinstance(sub, Graph):
            for k, (outer, inner) in list(sub.captures.items()):
                if outer is x:
                    sub.captures[k] = (old, inner)
            for n in sub.nodes:
                _repoint_captures(n, x, old)
