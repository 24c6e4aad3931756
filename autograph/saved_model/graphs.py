"""Graphs to the saved format and back: nodes, attributes, nested cond/while_loop graphs.

Writing (graph_writer.py): every graph (a function's graph and, depth first, the branch and
body graphs its nodes hold) gets an index in one flat table; a node refers to its inputs as
[node index, output index] pairs of its own graph, and to its subgraphs, Variables and
constant arrays by reference. Reading (here): the table is checked (known ops, attributes
against the schema, specs, references in range, inputs earlier in the same graph) and
rebuilt into Graph objects of the same IR, with each subgraph's captures restored from its
node's inputs.
"""

import weakref

import numpy as np

from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, Node
from autograph.saved_model import checks, loop_limit, op_modules
from autograph.saved_model import format as fmt
from autograph.saved_model.format import Composite, Marker, Ref, SavedModelError
from autograph.saved_model.schema import check_attrs

_SCALARS = (type(None), bool, int)     # JSON values that decode to themselves
_PLAIN = (type(None), bool, int, float, str, np.dtype, np.ndarray)   # attrs used as read
INLINE_ELEMENTS = 64      # constants up to this size are written into the JSON
_NAMED_FUNCTIONS = {"random": ("source",), "random_seed": ("fn",), "rng_new": ("factory",)}


class _Fixed:
    """The fixed stand-ins a template may hold (`slots`) and the fixed functions an
    attribute may name (`functions`), by their names in the file and back. Made on first
    use: they live in the formatting, print and random modules (the last imports NumPy's
    random package), which a model without such nodes never needs."""

    _made = None

    @classmethod
    def get(cls):
        if cls._made is None:
            from autograph.runtime import formatting
            from autograph.runtime import ops as rt_ops
            from autograph.runtime.numpy import random as rt_random
            made = cls()
            made.slots = {"print": rt_ops._SLOT, "random": rt_random._SLOT,
                          "text": formatting.SLOT}
            made.functions = {"numpy.random.seed": np.random.seed,
                              "numpy.random.default_rng": np.random.default_rng,
                              "numpy.random": np.random.mtrand._rand}
            made.slot_names = {id(v): k for k, v in made.slots.items()}
            made.function_names = {id(v): k for k, v in made.functions.items()}
            cls._made = made
        return cls._made


# -- reading -------------------------------------------------------------------------------------

class Reader:
    """Rebuilds the graph table of a checked description."""

    def __init__(self, records, constants, variables, limits):
        self.records = records
        self.constants = constants     # npz key -> array (read-only)
        self.variables = variables     # Variable objects, in table order
        self.limits = limits
        self.graphs = [None] * len(records)
        self._building = set()
        self._subgraphs = set()     # graphs a node holds: each belongs to one node alone
        self._numbered = {}         # id(Graph) -> its nodes in the file's order

    def graph(self, i, parent=None, depth=0):
        if type(i) is not int or not 0 <= i < len(self.records):
            raise SavedModelError(f"graph reference {i!r} is out of range")
        if parent is not None:
            # a branch or body graph is its node's own: one shared between nodes (or a
            # function's graph used as a branch) is refused, never run under two parents
            if i in self._subgraphs or self.graphs[i] is not None:
                raise SavedModelError(f"graph {i} is held by more than one node (or is also "
                                      "a function's graph): each subgraph belongs to one node")
            self._subgraphs.add(i)
        elif i in self._subgraphs:
            raise SavedModelError(f"graph {i} is a node's subgraph and a function's graph")
        if self.graphs[i] is not None:
            return self.graphs[i]
        if i in self._building or depth > self.limits.max_nesting:
            raise SavedModelError(f"graph {i} refers to itself (or nests more than "
                                  f"{self.limits.max_nesting} deep)")
        self._building.add(i)
        rec = self.records[i]
        where = f"graph {i}"
        _need(rec, dict, where)
        graph = Graph(_str(rec.get("name", f"graph_{i}"), where), parent=parent, origin=None)
        # the file's node numbers (a bounded loop's counter adds nodes the file lacks)
        nodes = self._numbered[id(graph)] = []
        for n, nrec in enumerate(_need(rec.get("nodes"), list, f"{where}.nodes")):
            self._node(graph, nrec, f"{where} node {n}", depth)
        graph.inputs = [_placeholder(nodes, j, where) for j in
                        _need(rec.get("inputs"), list, f"{where}.inputs")]
        if len(set(map(id, graph.inputs))) != len(graph.inputs):
            raise SavedModelError(f"{where}.inputs: a placeholder is listed twice")
        graph.outputs = [_tensor(nodes, ref, len(nodes), f"{where}.outputs")
                         for ref in _need(rec.get("outputs"), list, f"{where}.outputs")]
        for item in _need(rec.get("captures", []), list, f"{where}.captures"):
            if parent is None or type(item) is not list or len(item) != 2:
                raise SavedModelError(f"{where}.captures: [[parent node, output], "
                                      "placeholder] pairs of a nested graph")
            numbered = self._numbered[id(parent)]
            outer = _tensor(numbered, item[0], len(numbered), f"{where}.captures")
            inner = _placeholder(nodes, item[1], where)
            if id(outer) in graph.captures or any(inner is x for _, x in graph.captures.values()):
                raise SavedModelError(f"{where}.captures: a tensor is captured twice")
            graph.captures[id(outer)] = (outer, inner)
        self._building.discard(i)
        self.graphs[i] = graph
        return graph

    def _node(self, graph, rec, where, depth):
        _need(rec, dict, where)
        op = rec.get("op")
        if type(op) is str and op not in primitives.PRIMITIVES:
            # registered by importing its module, named by autograph's own table (never by
            # the file): a model imports the families it uses, not all of them
            module = op_modules.module_of(op)
            if module is not None:
                __import__(module)
        if type(op) is not str or op not in primitives.PRIMITIVES:
            raise SavedModelError(f"{where}: unknown op {fmt._show(op)} (only autograph's "
                                  "primitives can be loaded)")
        name = _str(rec.get("name", op), where)
        where = f"{where} ({name!r}, {op})"
        raw = rec.get("attrs")
        if raw:
            _need(raw, dict, f"{where}.attrs")
            attrs = {_str(k, where): v if type(v) in _SCALARS else
                     fmt.decode(v, f"{where}.{k}", self.limits) for k, v in raw.items()}
        else:
            attrs = {}
        check_attrs(op, attrs, where)
        numbered = self._numbered[id(graph)]
        n = len(numbered)
        inputs = [_tensor(numbered, ref, n, f"{where}.inputs")
                  for ref in _need(rec.get("inputs"), list, f"{where}.inputs")]
        specs = [self._spec(s, f"{where}.outputs") for s in
                 _need(rec.get("outputs"), list, f"{where}.outputs")]
        if attrs:
            attrs = {k: v if type(v) in _PLAIN else self._resolve(v, graph, depth, where)
                     for k, v in attrs.items()}
        for k in _NAMED_FUNCTIONS.get(op, ()):
            if attrs[k] is not None:     # a name from the schema's fixed set
                attrs[k] = _Fixed.get().functions[attrs[k]]
        if op == "Placeholder":
            if inputs or len(specs) != 1:
                raise SavedModelError(f"{where}: a placeholder has no inputs and one output")
            attrs = {"dtype": specs[0][0], "shape": specs[0][1]}
        checks.outputs(op, inputs, attrs, specs, where)
        if op == "while_loop" and self.limits.max_loop_iterations is not None:
            inputs, specs = loop_limit.bound(graph, inputs, attrs, specs,
                                             self.limits.max_loop_iterations,
                                             f"{name!r} of graph {graph.name!r}")
        node = Node(graph, name, op, inputs, attrs, specs)
        graph.nodes.append(node)
        numbered.append(node)
        graph._used_names.add(name)
        if op in ("cond", "while_loop"):
            record_captures(node)

    def _spec(self, s, where):
        if type(s) is not list or len(s) != 3 or type(s[2]) is not bool:
            raise SavedModelError(f"{where}: an output spec is [dtype, shape, weak]")
        return (fmt.parse_dtype(s[0], where, handle_ok=True),
                fmt.parse_shape(s[1], where, self.limits), s[2])

    def _resolve(self, v, graph, depth, where):
        t = type(v)
        if t is Ref:
            if v.kind == "graph":
                return self.graph(v.target, graph, depth + 1)
            if v.kind == "variable":
                if v.target >= len(self.variables):
                    raise SavedModelError(f"{where}: Variable reference {v.target} is out "
                                          "of range")
                return weakref.ref(self.variables[v.target])
            if v.kind == "array":
                if v.target not in self.constants:
                    raise SavedModelError(f"{where}: constant {v.target!r} is not in "
                                          f"{fmt.CONSTANTS_FILE}")
                return self.constants[v.target]
        if t is Marker:
            return _Fixed.get().slots[v.name]
        if t is Composite:
            from autograph.runtime import formatting
            from autograph.runtime import ops as rt_ops
            items = [self._resolve(x, graph, depth, where) for x in v.items]
            if v.kind == "field":
                if len(items) != 4:
                    raise SavedModelError(f"{where}: a $field has 4 items")
                return formatting.Field(*items)
            return (rt_ops._Text if v.kind == "text" else formatting._Sub)(tuple(items))
        if t is tuple:
            return tuple(self._resolve(x, graph, depth, where) for x in v)
        if t is list:
            return [self._resolve(x, graph, depth, where) for x in v]
        if t is dict:
            return {k: self._resolve(x, graph, depth, where) for k, x in v.items()}
        return v


def copy_graph(graph, parent, outer=None):
    """A fresh copy of branch/body graph `graph` (and of the graphs nested in it) under
    `parent`: transformations that extend a graph in place (the reverse-mode transform
    adds loop variables to a loop body) must never change a loaded model's graphs.
    `outer` maps the original parent's tensors (by id) to `parent`'s, for the captures."""
    new = Graph(graph.name, parent=parent, origin=graph.origin)
    env = {}
    for node in graph.nodes:
        attrs = {k: copy_graph(v, new, env) if isinstance(v, Graph) else v
                 for k, v in node.attrs.items()}
        copy = Node(new, node.name, node.op, [env[id(t)] for t in node.inputs], attrs,
                    [(t.dtype, t.shape, t.weak) for t in node.outputs], node.origin)
        new.nodes.append(copy)
        new._used_names.add(node.name)
        env.update(zip(map(id, node.outputs), copy.outputs))
        if node.op in ("cond", "while_loop"):
            record_captures(copy)
    new.inputs = [env[id(t)] for t in graph.inputs]
    new.outputs = [env[id(t)] for t in graph.outputs]
    for o, inner in graph.captures.values():
        o = (outer or {}).get(id(o))
        if o is not None:
            new.captures[id(o)] = (o, env[id(inner)])
    return new


def record_captures(node):
    """Fill each subgraph's `captures` from the node's inputs (loop variables first for a
    while_loop, the predicate first for a cond), as tracing leaves them."""
    ins = node.inputs
    if node.op == "cond":
        outer, skip = ins[1:], 0
    else:
        n = len(node.outputs)
        outer = ins[n:len(ins) - (node.attrs.get("maximum_iterations") == "input")]
        skip = n
    for sub in node.attrs.values():
        if isinstance(sub, Graph):
            for o, inner in zip(outer, sub.inputs[skip:]):
                sub.captures[id(o)] = (o, inner)


def _need(value, kind, where):
    if type(value) is not kind:
        raise SavedModelError(f"{where}: expected a {kind.__name__}, got {fmt._show(value)}")
    return value


def _str(value, where):
    if type(value) is not str or len(value) > 1000:
        raise SavedModelError(f"{where}: a name must be a string, got {fmt._show(value)}")
    if not value.isprintable():    # a NUL, a newline: names end up in file names and text
        raise SavedModelError(f"{where}: a name holds control characters: {fmt._show(value)}")
    return value


def _tensor(nodes, ref, n, where):
    """The tensor [node, output] of an earlier node of the same graph."""
    if type(ref) is not list or len(ref) != 2 or type(ref[0]) is not int or \
            type(ref[1]) is not int or not 0 <= ref[0] < n:
        raise SavedModelError(f"{where}: {fmt._show(ref)} is not [earlier node, output]")
    outs = nodes[ref[0]].outputs
    if not 0 <= ref[1] < len(outs):
        raise SavedModelError(f"{where}: node {ref[0]} has no output {ref[1]}")
    return outs[ref[1]]


def _placeholder(nodes, j, where):
    if type(j) is not int or not 0 <= j < len(nodes) or nodes[j].op != "Placeholder":
        raise SavedModelError(f"{where}.inputs: {fmt._show(j)} is not a placeholder node")
    return nodes[j].outputs[0]
