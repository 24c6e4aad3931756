"""The graph IR: a Graph is a list of Nodes; a Node's outputs are symbolic Tensors.

A Node is a small record (name, op, inputs, attrs, outputs) that is never changed after it
is made. Control-flow nodes (`cond`, `while_loop`) keep their branch/body graphs in attrs.
An inner graph (a branch or loop body) has a parent; a tensor of an outer graph used inside
it is *captured*: the inner graph gets a placeholder for it, and the control-flow node
passes the outer tensor in as an input.

Names follow TensorFlow: placeholders are named after the arguments, ops after their kind
(`add`, `add_1`, ...), and the outputs of a function graph pass through `Identity` nodes.
"""

import _thread

from autograph.config import _busy as BUSY
from autograph.frames import user_position
from autograph.runtime.ir.tensor import Tensor


class Node:
    """One operation: `op` applied to `inputs` with `attrs`, producing `outputs`.

    `origin` is where the user's code made it while tracing: (filename, line, function
    name) of the innermost user frame (a generated file's line maps to the user's through
    autograph.source.origin; `autograph.errors.describe_origin` does both), or None."""

    __slots__ = ("graph", "name", "op", "inputs", "attrs", "outputs", "origin")

    def __init__(self, graph, name, op, inputs, attrs, specs, origin=None):
        self.graph = graph
        self.origin = origin
        self.name = name
        self.op = op
        self.inputs = tuple(inputs)
        self.attrs = attrs
        if type(specs) is not list and type(specs) is not tuple:
            specs = tuple(specs)
        if len(specs) == 1:   # the common case, without a generator
            dtype, shape, weak = specs[0]
            self.outputs = (Tensor(self, 0, dtype, shape, weak),)
        else:
            self.outputs = tuple([Tensor(self, i, dtype, shape, weak)
                                  for i, (dtype, shape, weak) in enumerate(specs)])

    def __repr__(self):
        ins = ", ".join(t.name for t in self.inputs)
        return f"<Node {self.name} = {self.op}({ins})>"


class NodeDef:
    """What `as_graph_def().node` lists: a name, an op and input names (TF's format)."""

    __slots__ = ("name", "op", "input", "attr")

    def __init__(self, name, op, input, attr):
        self.name, self.op, self.input, self.attr = name, op, input, attr

    def __repr__(self):
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"


class GraphDef:
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return "GraphDef(\n" + "".join(f"  {n!r}\n" for n in self.node) + ")"


_state = _thread._local()

# The Variable-creation hook: autograph.runtime.variables appends each new Variable to every
# list on this thread's `_creation.stack`. It lives here, with the trace state, so that a
# trace records creations without loading the Variable machinery until a Variable is made.
_creation = _thread._local()


class record_creations:
    """Collect every Variable created on this thread inside the block (nested blocks each
    get them): `with record_creations() as made: ...; made` is a list of Variables."""

    __slots__ = ("made",)

    def __enter__(self):
        stack = _creation.__dict__.get("stack")
        if stack is None:
            stack = _creation.stack = []
        self.made = []
        stack.append(self.made)
        return self.made

    def __exit__(self, *exc):
        _creation.stack.pop()
        return False


def _stack():
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def _origin():
    """The user's place making a node, while tracing (None otherwise: the optimiser's and
    other late rewrites pass the origin of the node they stand for); inside
    `staged_for(origin)`, that origin."""
    state = _state.__dict__
    if not state.get("stack"):
        return None
    fixed = state.get("origin")
    return fixed if fixed is not None else user_position(3)


class GradientOrigin(tuple):
    """The origin of a node a gradient rule staged (autodiff): the forward node's (file,
    line, function), so errors and the explorer name the user's line, marked as
    backward-pass work (`ag.profile` times it apart and counts what it reads of the forward
    pass as stored for it). Everywhere else it is the plain tuple; the trace cache writes
    it as a list (marshal has no tuple subclasses)."""
    __slots__ = ()


def gradient_origin(origin):
    """`origin` marked as the backward pass's (None stays None)."""
    return origin if origin is None or isinstance(origin, GradientOrigin) else \
        GradientOrigin(origin)


class staged_for:
    """`with staged_for(node.origin):` the nodes made inside are the user's line `origin`
    (a gradient rule's nodes are the forward operation's, so errors name the user's line
    rather than the rule's or the API's)."""

    __slots__ = ("origin", "outer")

    def __init__(self, origin):
        self.origin = origin

    def __enter__(self):
        self.outer = _state.__dict__.get("origin")
        if self.origin is not None:
            _state.origin = self.origin

    def __exit__(self, *exc):
        _state.origin = self.outer
        return False


def get_default_graph():
    """The graph being built on this thread, or None when running eagerly."""
    stack = _state.__dict__.get("stack")   # this thread's (no attribute-miss cost)
    return stack[-1] if stack else None


class _DefaultScope:
    """`with graph.as_default():` (a small class: tracing enters many of these, and a
    generator-based context manager costs several times more)."""

    __slots__ = ("graph",)

    def __init__(self, graph):
        self.graph = graph

    def __enter__(self):
        _stack().append(self.graph)
        BUSY.append(None)   # the call fast paths look here first (autograph.config._busy)
        return self.graph

    def __exit__(self, *exc):
        BUSY.pop()
        _stack().pop()   # this thread's stack: a with-statement exits where it entered
        return False


class Graph:
    """A dataflow graph under construction (and, once its outputs are set, a finished one)."""

    live = False   # True for an eager GradientTape's graph, which evaluates nodes as added

    def __init__(self, name="graph", parent=None, origin=None):
        self.name = name
        self.parent = parent
        # a branch or loop body: the user's line of its `if` / `while` (see Node.origin)
        self.origin = origin if origin is not None or parent is None else _origin()
        self.nodes = []
        self.inputs = []        # placeholder tensors: arguments first, then captures
        self.outputs = []       # flat output tensors
        self.captures = {}      # id(outer tensor) -> (outer tensor, inner placeholder)
        self.variables = []     # weak references to the Variables the graph reads or writes
        self._used_names = set()
        self._name_counts = {}

    # -- building -------------------------------------------------------------------------

    def as_default(self):
        """A context in which new nodes go into this graph (the thread's default graph)."""
        return _DefaultScope(self)

    def unique_name(self, base):
        """`base`, or `base_1`, `base_2`, ... the first that is not taken yet."""
        base = base or "node"
        counts, used = self._name_counts, self._used_names
        if base not in counts and base not in used:   # a first use: the name itself
            counts[base] = 1
            used.add(base)
            return base
        count = counts.get(base, 0)
        name = base if count == 0 else f"{base}_{count}"
        while name in self._used_names:
            count += 1
            name = f"{base}_{count}"
        self._name_counts[base] = count + 1
        self._used_names.add(name)
        return name

    def add_node(self, op, inputs=(), attrs=None, specs=(), name=None, origin=None):
        """Append a node; `specs` are (dtype, shape, weak) triples, one per output.
        `origin`: the user's place that made it (default: found on the stack while tracing).

        Inputs from an enclosing graph are captured; inputs from an unrelated graph are an
        error (a tensor leaked out of the trace that made it)."""
        inputs = [t if t.node.graph is self else self.capture(t) for t in inputs]
        base = name or op
        if base and base not in self._name_counts and base not in self._used_names:
            self._name_counts[base] = 1        # unique_name's answer for a first use
            self._used_names.add(base)
        else:
            base = self.unique_name(base)
        node = Node(self, base, op, inputs, attrs or {}, specs,
                    origin if origin is not None else _origin())
        self.nodes.append(node)
        return node

    def _append(self, op, inputs, attrs, specs, name, origin=None):
        """`add_node` for inputs known to be tensors of this graph (the optimiser's copies,
        which keep the origin of the node they copy)."""
        node = Node(self, self.unique_name(name), op, inputs, attrs or {}, specs, origin)
        self.nodes.append(node)
        return node

    def placeholder(self, name, dtype, shape, weak=False):
        node = self.add_node("Placeholder", (), {"dtype": dtype, "shape": shape},
                             [(dtype, shape, weak)], name=name)
        self.inputs.append(node.outputs[0])
        return node.outputs[0]

    def is_ancestor_of(self, graph):
        g = graph
        while g is not None:
            if g is self:
                return True
            g = g.parent
        return False

    def capture(self, tensor):
        """The tensor to use in this graph for `tensor` (made in this graph or an outer one)."""
        graph = tensor.node.graph
        if graph is self:
            return tensor
        if self.parent is None or not graph.is_ancestor_of(self):
            # another eager tape's tensor has a value: the root live graph takes it as one
            # (autodiff/eager.py); anywhere else it leaked
            if not (graph.live and self.parent is not None):
                raise ValueError(leak_message(tensor, self))
        entry = self.captures.get(id(tensor))
        if entry is not None:
            return entry[1]
        outer = self.parent.capture(tensor)   # thread it through every graph in between
        inner = self.placeholder(tensor.node.name, tensor.dtype, tensor.shape, tensor.weak)
        # keyed by the original tensor; `outer` is its stand-in in the parent graph, which is
        # what a control-flow node passes in as the input for this placeholder
        self.captures[id(tensor)] = (outer, inner)
        return inner

    def captured_inputs(self):
        """Outer tensors this graph captured, in the order of their placeholders."""
        return [outer for outer, _ in self.captures.values()]

    def set_outputs(self, tensors, identity=True):
        """Mark the graph's results. A function graph passes them through `Identity` nodes."""
        tensors = [self.capture(t) for t in tensors]
        if identity:
            tensors = [self.add_node("Identity", [t], {}, [(t.dtype, t.shape, t.weak)]).outputs[0]
                       for t in tensors]
        self.outputs = tensors
        return tensors

    # -- looking at it --------------------------------------------------------------------

    def as_graph_def(self):
        """TensorFlow's view: nodes with `name`, `op` and `input` (names, `node:i` for i > 0)."""
        return GraphDef([NodeDef(n.name, n.op, [_input_name(t) for t in n.inputs], dict(n.attrs))
                         for n in self.nodes])

    def subgraphs(self, node):
        """The graphs a control-flow node holds in its attrs, by attr name."""
        return {k: v for k, v in node.attrs.items() if isinstance(v, Graph)}

    def walk(self):
        """Every node of this graph and of the graphs nested in it, outer first."""
        for node in self.nodes:
            yield node
            for sub in self.subgraphs(node).values():
                yield from sub.walk()

    def to_dot(self):
        from autograph.runtime.exec import dot  # drawing is optional; load it only when asked
        return dot.to_dot(self)

    def _repr_svg_(self):
        """Notebooks draw a graph with this (None, so text is shown, without Graphviz)."""
        from autograph.runtime.exec import dot
        return dot.repr_svg(self)

    def __len__(self):
        return len(self.nodes)

    def __repr__(self):
        return f"<Graph {self.name!r}: {len(self.nodes)} nodes>"

    def __str__(self):
        lines = [f"graph {self.name}({', '.join(t.name for t in self.inputs)}):"]
        for n in self.nodes:
            if n.op == "Placeholder":
                continue
            outs = ", ".join(t.name for t in n.outputs) or "()"
            lines.append(f"  {outs} = {n.op}({', '.join(t.name for t in n.inputs)})")
        lines.append(f"  return {', '.join(t.name for t in self.outputs)}")
        return "\n".join(lines)


# -- tensors used outside the graph that made them ---------------------------------------------

def _root(graph):
    while graph.parent is not None:
        graph = graph.parent
    return graph


def _where(origin):
    from autograph import errors   # (lazily: only for messages)
    return errors.describe_origin(origin)


def _assigned_name(source_line):
    """`y` for the user's line `y = x * 2` (the variable a tensor made there is bound to)."""
    import ast
    try:
        body = ast.parse((source_line or "").strip()).body
    except SyntaxError:
        return None
    if len(body) != 1:
        return None
    stmt = body[0]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        target = stmt.target
    else:
        return None
    return ast.unparse(target) if isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)) \
        else None


def describe_tensor(tensor):
    """How the user knows `tensor`: "'mul:0' (`y`, made at f.py:8 (`y = x * 2`))"."""
    node, text = tensor.node, repr(tensor.name)
    name = None
    if node.op == "Placeholder":
        graph = node.graph
        if not any(inner is tensor for _, inner in graph.captures.values()):
            name = node.name          # an argument, or a loop variable of a loop body
    where = ""
    if node.origin is not None:
        from autograph import errors
        loc = errors.origin_location(node.origin)
        if loc is not None:
            where = _where(node.origin)
            if name is None:
                name = _assigned_name(loc[3])
    parts = ([f"`{name}`"] if name else []) + ([f"made at {where}"] if where else [])
    return text + (f" ({', '.join(parts)})" if parts else "")


def _made_inside(graph):
    """'inside the body of the loop at f.py:7 (`while i < n:`)' for a loop body or branch
    graph, or '' for a function's graph."""
    if graph.parent is None:
        return ""
    kind = ("the body of the loop" if graph.name.startswith("while_body") else
            "the condition of the loop" if graph.name.startswith("while_cond") else
            "a branch of the `if`" if graph.name.startswith("cond_") else
            f"graph {graph.name!r}")
    where = _where(graph.origin)
    return f"inside {kind}" + (f" at {where}" if where else "")


def leak_message(tensor, used_in=None):
    """The error message for `tensor` used outside the trace (or the loop body or branch)
    that made it: in graph `used_in`, or eagerly (None)."""
    made_in = tensor.node.graph
    root = _root(made_in)
    what = f"The symbolic tensor {describe_tensor(tensor)}"
    here = ("outside the function trace that made it" if used_in is None
            else f"in `{_root(used_in).name}`")
    if used_in is not None and _root(used_in) is root and made_in.parent is not None:
        inside = _made_inside(made_in)
        if made_in.name.startswith("cond_"):
            fix = ("A Python list, attribute or global that keeps a value made in a branch of "
                   "a tensor `if` holds a placeholder of that branch. Assign it to a variable "
                   "in both branches instead: the `if` then gives its value after it.")
        else:
            fix = ("A value made in a tensor loop's body exists only within one iteration: a "
                   "Python list, attribute or global that keeps it (e.g. `out.append(y)`) "
                   "holds a placeholder, not the values. Collect one value per iteration in "
                   "an ag.TensorArray (`ta = ta.write(i, y)`, after the loop `ta.stack()`), "
                   "or make it a loop variable (assign it before the loop).")
        return f"{what} was made {inside} and is used outside it, {here}. {fix}"
    inside = _made_inside(made_in)
    return (f"{what} was made while tracing `{root.name}`" + (f", {inside}," if inside else "")
            + f" and is used {here}: a tensor made while tracing a function leaked out of "
            "the trace (kept in a global, an attribute or a list?). Its value exists only when "
            "that graph runs: return it from the traced function (or pass it in as an "
            "argument) instead.")


def _input_name(t):
    return t.node.name if t.index == 0 else f"{t.node.name}:{t.index}"
