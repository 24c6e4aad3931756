"""Graphs to the saved format: the writing half of graphs.py (which reads them back).

Every graph (a function's graph and, depth first, the branch and body graphs its nodes
hold) gets an index in one flat table; a node refers to its inputs as [node index, output
index] pairs of its own graph, and to its subgraphs, Variables and constant arrays by
reference. Apart from the reader so that a process that only loads never compiles it.
"""

import weakref

import numpy as np

from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph
from autograph.saved_model import format as fmt
from autograph.saved_model.format import SavedModelError
from autograph.saved_model.graphs import INLINE_ELEMENTS, _Fixed


class Writer:
    """Collects graphs, constant arrays and Variables while a model is written."""

    def __init__(self):
        self.graphs = []          # JSON records
        self.constants = {}       # npz key -> array
        self.variables = []       # Variable objects, in table order
        self._var_index = {}      # id(Variable) -> index
        self._graph_index = {}    # id(Graph) -> index
        self._index = None        # the node indices of the graph being written

    def variable(self, var):
        i = self._var_index.get(id(var))
        if i is None:
            i = self._var_index[id(var)] = len(self.variables)
            self.variables.append(var)
        return i

    def graph(self, graph, parent=None, parent_index=None):
        """The index of `graph` in the table (written on first use). `parent_index` maps
        the enclosing graph's nodes to their indices, for the captures."""
        i = self._graph_index.get(id(graph))
        if i is not None:
            return i
        i = self._graph_index[id(graph)] = len(self.graphs)
        record = {"name": graph.name, "parent": parent}
        self.graphs.append(record)
        index = {}
        nodes = []
        outer_index = self._index
        for n, node in enumerate(graph.nodes):
            index[id(node)] = n
            nodes.append(self._node(node, index, i))
        self._index = outer_index
        record["nodes"] = nodes
        record["inputs"] = [index[id(t.node)] for t in graph.inputs]
        record["outputs"] = [[index[id(t.node)], t.index] for t in graph.outputs]
        if parent_index is not None and graph.captures:
            # [outer tensor in the parent, inner placeholder]: how a graph that uses values
            # of its parent sees them (a custom gradient's graph reads the forward pass)
            record["captures"] = [[[parent_index[id(o.node)], o.index], index[id(inner.node)]]
                                  for o, inner in graph.captures.values()
                                  if id(o.node) in parent_index and id(inner.node) in index]
        return i

    def _node(self, node, index, graph_i):
        try:
            inputs = [[index[id(t.node)], t.index] for t in node.inputs]
        except KeyError:
            raise SavedModelError(f"node {node.name!r} of graph {node.graph.name!r} reads a "
                                  "tensor of another graph; it cannot be saved") from None
        if node.op not in primitives.PRIMITIVES:
            raise SavedModelError(f"node {node.name!r}: op {node.op!r} is not a primitive")
        if node.op == "Placeholder":   # (its dtype and shape are its output's spec)
            attrs = {}
        else:
            self._index = index
            attrs = {k: self._value(v, node, k, graph_i) for k, v in node.attrs.items()}
        rec = {"name": node.name, "op": node.op, "inputs": inputs, "attrs": attrs,
               "outputs": [[fmt.dtype_name(t.dtype), fmt.encode_shape(t.shape), bool(t.weak)]
                           for t in node.outputs]}
        return rec

    def _value(self, v, node, attr, graph_i, depth=0):
        """The JSON of one attribute value (see format.decode for the tags)."""
        t = type(v)
        if v is None or t in (bool, int, str):
            return v
        if t is float:
            return fmt.encode_float(v)
        if t is complex:
            return {"$complex": [fmt.encode_float(v.real), fmt.encode_float(v.imag)]}
        if isinstance(v, np.dtype):
            return {"$dtype": fmt.dtype_name(v)}
        if isinstance(v, np.generic):
            return self._value(v.item(), node, attr, graph_i, depth)
        if isinstance(v, Graph):
            return {"$graph": self.graph(v, graph_i, self._index)}
        if isinstance(v, weakref.ref):
            var = v()
            if var is None:
                raise SavedModelError(f"node {node.name!r} uses a Variable that was deleted")
            return {"$variable": self.variable(var)}
        if isinstance(v, np.ndarray):
            if v.dtype.kind not in "biufc":
                raise SavedModelError(f"node {node.name!r}: a constant of dtype {v.dtype} "
                                      "cannot be saved (numbers and booleans only)")
            if v.size <= INLINE_ELEMENTS:     # small: in the JSON, no archive member
                return {"$ndarray": fmt.encode_array(v)}
            key = f"c{len(self.constants)}"
            self.constants[key] = v
            return {"$array": key}
        if t is tuple or t is list:
            items = [self._value(x, node, attr, graph_i, depth + 1) for x in v]
            return {"$tuple": items} if t is tuple else items
        if t is dict:
            if not all(type(k) is str for k in v):
                raise SavedModelError(f"node {node.name!r}: attribute {attr!r} holds a dict "
                                      "with non-string keys, which cannot be saved")
            return {"$dict": [[k, self._value(x, node, attr, graph_i, depth + 1)]
                              for k, x in v.items()]}
        from autograph.runtime import formatting
        from autograph.runtime import ops as rt_ops
        fixed = _Fixed.get()
        if id(v) in fixed.slot_names:
            return {"$slot": fixed.slot_names[id(v)]}
        if id(v) in fixed.function_names:
            return fixed.function_names[id(v)]
        if t is rt_ops._Text or t is formatting._Sub:
            kind = "$text" if t is rt_ops._Text else "$sub"
            return {kind: [self._value(x, node, attr, graph_i, depth + 1) for x in v.parts]}
        if t is formatting.Field:
            return {"$field": [self._value(x, node, attr, graph_i, depth + 1)
                               for x in (v.value, v.conversion, v.spec, v.style)]}
        raise SavedModelError(_unsaveable(node, attr, v))


def _unsaveable(node, attr, v):
    from autograph import errors
    where = errors.describe_origin(node.origin) if node.origin is not None else ""
    what = f"{type(v).__module__}.{type(v).__name__}"
    hint = ""
    if node.op.startswith("data_"):
        hint = (" A dataset read from host data (from_generator, Python lists) lives in "
                "this process only; save a function that takes the batches as arguments.")
    if node.op == "random":
        hint = (" A draw from a generator made outside the function depends on that "
                "object's state; make the generator inside the function "
                "(rng = np.random.default_rng(seed)) to save it.")
    return (f"node {node.name!r} ({node.op}" + (f", made at {where}" if where else "") +
            f") holds a {what} in attribute {attr!r}, which the saved-model format cannot "
            f"hold (it stores numbers, strings, dtypes, arrays, graphs and Variables only)."
            + hint)
