"""Graph -> ONNX GraphProto: one walk over the nodes, subgraphs lowered where they sit.

Names: every ONNX value gets a fresh name from one counter for the whole model, because
ONNX subgraphs (an If's branches, a Loop's body) read outer values by name.

Control flow:
- `cond(pred, *captures)` -> `If(pred)`: a branch graph's placeholders stand for the
  cond's captured inputs, which the ONNX branch reads from the outer scope by name.
- `while_loop(*loop_vars, *captures)` -> the condition graph lowered once before the loop
  (the first test), then `Loop(M, first_test, *loop_vars)`, whose body runs the body
  graph and then the condition graph on the new values (the next test). A static
  `maximum_iterations` becomes `M`.
- A TensorArray that a loop fills in order (written once per iteration at a counter from
  0 by 1, only stacked afterwards: what `for t in ag.range(n): ta = ta.write(t, v)`
  traces to) becomes a scan output of the Loop: ONNX stacks the per-iteration values.
- Other TensorArray handles are ONNX sequences: write(i) replaces element i or appends at
  the end (a write past the end is an error in onnxruntime, as in autograph), read is
  SequenceAt, stack is ConcatFromSequence on a new axis.
"""

import itertools

import numpy as np

from autograph.onnx import ops
from autograph.onnx import selections  # noqa: F401  (registers its rules in ops.RULES)
from autograph.onnx.values import Unsupported, onnx_dtype, value_info


class Model:
    """What is shared by all graphs of one model: fresh names, Variable initializers and
    the element dtype of each TensorArray handle."""

    def __init__(self, opset, handle_dtypes):
        self.opset = opset
        self.counter = itertools.count()
        self.initializers = []
        self.variables = {}          # id(Variable) -> initializer name
        self.handle_dtypes = handle_dtypes
        self._fills = {}
        self.stacked = _Identities()  # loop results that are already stacked scan outputs

    def fills_of(self, node):
        """_fills(node), worked out once per loop node."""
        found = self._fills.get(id(node))
        if found is None:
            found = self._fills[id(node)] = _fills(node)
        return found

    def fresh(self, base):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "v"
        return f"{base}_{next(self.counter)}"


class _Identities:
    """A set of tensors by identity (a Tensor's == stages a comparison)."""

    def __init__(self):
        self._ids = {}

    def add(self, t):
        self._ids[id(t)] = t

    def __contains__(self, t):
        return id(t) in self._ids


class Builder:
    """Emits the ONNX nodes of one graph (the root, a branch or a loop body)."""

    def __init__(self, model, env=None):
        self.model = model
        self.env = dict(env or {})   # Tensor -> ONNX value name
        self.nodes = []
        self.skip = ()               # ids of nodes lowered by their loop (TensorArray fills)

    # -- emitting --------------------------------------------------------------------------

    def emit(self, op_type, inputs, n_out=1, base=None, **attrs):
        from onnx import helper
        outs = [self.model.fresh(base or op_type) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, dtype=None):
        from onnx import helper, numpy_helper
        array = np.asarray(value, dtype=dtype)
        name = self.model.fresh("const")
        self.nodes.append(helper.make_node(
            "Constant", [], [name], value=numpy_helper.from_array(array, name)))
        return name

    def cast(self, name, from_dtype, to_dtype):
        if np.dtype(from_dtype) == np.dtype(to_dtype):
            return name
        return self.emit("Cast", [name], to=onnx_dtype(to_dtype))

    def value(self, tensor):
        return self.env[tensor]

    # -- lowering --------------------------------------------------------------------------

    def lower_nodes(self, graph):
        self._skip_filled_arrays(graph)
        for node in graph.nodes:
            if id(node) in self.skip:
                continue
            if node.op == "Placeholder":
                if node.outputs[0] not in self.env:
                    raise Unsupported(node, "a placeholder with no value")
                continue
            rule = ops.RULES.get(node.op) or _CONTROL.get(node.op)
            if rule is None:
                raise Unsupported(node, "ONNX has no mapping for this primitive")
            ins = [self.value(t) for t in node.inputs]
            outs = rule(self, node, ins)
            if isinstance(outs, str):
                outs = [outs]
            for t, name in zip(node.outputs, outs):
                self.env[t] = name

    def _skip_filled_arrays(self, graph):
        """A fresh TensorArray that only a loop's scan output fills needs no sequence."""
        skip = set(self.skip)
        for node in graph.nodes:
            if node.op != "while_loop":
                continue
            for j in self.model.fills_of(node):
                handle = node.inputs[j]
                if len(_users(handle, graph)) == 1:
                    skip.add(id(handle.node))
                    self.env[handle] = ""
        self.skip = skip

    def value_info(self, tensor, name):
        return value_info(self.model, tensor, name)


# -- control flow ----------------------------------------------------------------------------

def _subgraph(b, graph, env, outputs, inputs=(), name="body"):
    """Lower `graph` with placeholders bound by `env`; returns the GraphProto whose outputs
    are the values of `outputs` (tensors of `graph`, or ready names)."""
    from onnx import helper
    sub = Builder(b.model, {**b.env, **env})
    sub.lower_nodes(graph)
    out_infos = []
    for t in outputs:
        src = sub.env[t]
        name_out = sub.emit("Identity", [src], base="out")
        out_infos.append(value_info(b.model, t, name_out))
    return helper.make_graph(sub.nodes, b.model.fresh(name), list(inputs), out_infos)


def _cond(b, node, ins):
    true_g, false_g = node.attrs["true_graph"], node.attrs["false_graph"]
    pred = ins[0]
    if node.inputs[0].dtype != np.dtype(bool):
        pred = b.emit("Cast", [pred], to=onnx_dtype(bool))
    branches = {}
    for key, graph in (("then_branch", true_g), ("else_branch", false_g)):
        env = dict(zip(graph.inputs, ins[1:]))
        branches[key] = _subgraph(b, graph, env, graph.outputs, name=key)
    if not node.outputs:
        raise Unsupported(node, "a branch with no outputs (only effects)")
    return b.emit("If", [pred], n_out=len(node.outputs), base="if", **branches) \
        if len(node.outputs) > 1 else [b.emit("If", [pred], base="if", **branches)]


def _truth(b, name, tensor):
    if tensor.dtype != np.dtype(bool):
        name = b.emit("Cast", [name], to=onnx_dtype(bool))
    if tensor.shape != ():
        name = b.emit("Reshape", [name, b.const(np.array([], np.int64))])
    return name


def _is_in(t, tensors):
    return any(x is t for x in tensors)


def _users(t, graph):
    return [n for n in graph.nodes if _is_in(t, n.inputs)]


def _const(t):
    return t.node.attrs["value"] if t.node.op == "Const" else None


def _is_scalar_const(t, value):
    """Whether `t` is a constant scalar equal to `value` (a constant array never is: a loop
    variable may start as one, e.g. a growing `np.zeros(0)`)."""
    c = _const(t)
    return c is not None and np.ndim(c) == 0 and c == value


def _is_one(c):
    return c is not None and np.ndim(c) == 0 and c == 1


def _fills(node):
    """{loop var index: its ta_write node} for the TensorArrays the loop fills in order:
    a fresh array written once per iteration at a counter that starts at 0 and steps by 1,
    read after the loop only by `stack`. These become the Loop's scan outputs."""
    cond_g, body_g = node.attrs["cond_graph"], node.attrs["body_graph"]
    k = len(node.outputs)

    def body_const(t):
        for i, p in enumerate(body_g.inputs):
            if p is t:
                return _const(node.inputs[i]) if i >= k else None
        return _const(t)

    counters = []
    for c in range(k):
        step = body_g.outputs[c].node
        if not _is_scalar_const(node.inputs[c], 0) or step.op != "add":
            continue
        a, b = step.inputs
        if (a is body_g.inputs[c] and _is_one(body_const(b))) or \
                (b is body_g.inputs[c] and _is_one(body_const(a))):
            counters.append(body_g.inputs[c])
    fills = {}
    for j in range(k):
        if node.outputs[j].dtype != np.dtype(object) or node.inputs[j].node.op != "ta_new":
            continue
        users = _users(body_g.inputs[j], body_g)
        if len(users) != 1 or users[0].op != "ta_write":
            continue
        write = users[0]
        if write.inputs[0] is not body_g.inputs[j] or body_g.outputs[j] is not write.outputs[0] \
                or not _is_in(write.inputs[1], counters) or _users(write.outputs[0], body_g) \
                or _users(cond_g.inputs[j], cond_g):
            continue
        after = _users(node.outputs[j], node.graph)
        if after and all(n.op == "ta_stack" for n in after) and \
                not _is_in(node.outputs[j], node.graph.outputs):
            fills[j] = write
    return fills


def _while(b, node, ins):
    from onnx import helper
    cond_g, body_g = node.attrs["cond_graph"], node.attrs["body_graph"]
    k = len(node.outputs)
    fills = b.model.fills_of(node)
    kept = [i for i in range(k) if i not in fills]
    loop_vars, captures = ins[:k], ins[k:]
    # the first test, in the outer graph
    first = Builder(b.model, {**b.env, **dict(zip(cond_g.inputs, ins))})
    first.lower_nodes(cond_g)
    b.nodes.extend(first.nodes)
    test = _truth(b, first.env[cond_g.outputs[0]], cond_g.outputs[0])
    # the body: ONNX gives (iteration, test, *loop vars); captures are read by name;
    # a filled TensorArray is no loop variable: what each iteration writes is a scan output
    it_name, test_in = b.model.fresh("iteration"), b.model.fresh("test_in")
    carried = [b.model.fresh("carried") if i in kept else "" for i in range(k)]
    body = Builder(b.model, {**b.env, **dict(zip(body_g.inputs, carried + captures))})
    body.skip = {id(w) for w in fills.values()}   # (on top of what lower_nodes adds)
    body.lower_nodes(body_g)
    new = [body.env[t] if i in kept else "" for i, t in enumerate(body_g.outputs)]
    nxt = Builder(b.model, {**body.env, **dict(zip(cond_g.inputs, new + captures))})
    nxt.lower_nodes(cond_g)
    body.nodes.extend(nxt.nodes)
    test_out = _truth(body, nxt.env[cond_g.outputs[0]], cond_g.outputs[0])
    scans = []
    for j, write in fills.items():
        v = write.inputs[2]
        dtype = b.model.handle_dtypes.get(node.outputs[j]) or v.dtype
        scans.append((v, body.emit("Identity", [body.cast(body.value(v), v.dtype, dtype)],
                                   base="scan"), dtype))
    outs_names = [body.emit("Identity", [test_out], base="test_out")] + \
        [body.emit("Identity", [new[i]], base="next") for i in kept]
    inputs = [helper.make_tensor_value_info(it_name, onnx_dtype(np.int64), []),
              helper.make_tensor_value_info(test_in, onnx_dtype(bool), [])] + \
        [value_info(b.model, body_g.inputs[i], carried[i]) for i in kept]
    outputs = [helper.make_tensor_value_info(outs_names[0], onnx_dtype(bool), [])] + \
        [value_info(b.model, body_g.outputs[i], n) for i, n in zip(kept, outs_names[1:])] + \
        [helper.make_tensor_value_info(name, onnx_dtype(dtype), None)
         for _, name, dtype in scans]
    graph = helper.make_graph(body.nodes, b.model.fresh("loop_body"), inputs, outputs)
    limit = node.attrs.get("maximum_iterations")
    if limit is None:
        trip = ""
    elif isinstance(limit, (int, np.integer)):
        trip = b.const(np.int64(limit))
    else:
        raise Unsupported(node, "a maximum_iterations that is not a number")
    n_out = len(kept) + len(fills)
    outs = b.emit("Loop", [trip, test] + [loop_vars[i] for i in kept], n_out=n_out,
                  base="loop", body=graph)
    outs = [outs] if n_out == 1 else list(outs)
    result = [None] * k
    for i, name in zip(kept + list(fills), outs):
        result[i] = name
    for j in fills:
        b.model.stacked.add(node.outputs[j])
    return result


_CONTROL = {"cond": _cond, "while_loop": _while}


# -- TensorArray element dtypes: one class of handles per array, through loops and conds ---

def handle_dtypes(graph):
    """Tensor (a TensorArray handle anywhere in `graph`) -> its element dtype."""
    parent = {}

    def find(t):
        while parent.get(t, t) is not t:
            t = parent[t]
        return t

    def union(a, b):
        if a.dtype == np.dtype(object) and b.dtype == np.dtype(object):
            parent[find(a)] = find(b)

    known = {}

    def visit(g):
        for n in g.nodes:
            if n.op == "ta_write":
                known[n.inputs[0]] = n.inputs[2].dtype
                union(n.inputs[0], n.outputs[0])
            elif n.op in ("ta_read", "ta_stack", "ta_gather", "ta_concat"):
                known[n.inputs[0]] = n.attrs.get("dtype") or known.get(n.inputs[0])
            elif n.op == "ta_unstack":
                known[n.inputs[0]] = n.inputs[1].dtype
                union(n.inputs[0], n.outputs[0])
            elif n.op in ("ta_insert", "ta_nonempty", "ta_pop"):   # (runtime/list_edits.py)
                if n.op == "ta_insert":
                    known[n.inputs[0]] = n.inputs[2].dtype
                union(n.inputs[0], n.outputs[-1 if n.op == "ta_pop" else 0])
            elif n.op == "Identity":
                union(n.inputs[0], n.outputs[0])
            elif n.op == "cond":
                for sub in (n.attrs["true_graph"], n.attrs["false_graph"]):
                    for a, p in zip(n.inputs[1:], sub.inputs):
                        union(a, p)
                    for o, r in zip(n.outputs, sub.outputs):
                        union(o, r)
                    visit(sub)
            elif n.op == "while_loop":
                c, body = n.attrs["cond_graph"], n.attrs["body_graph"]
                for a, p, q in zip(n.inputs, body.inputs, c.inputs):
                    union(a, p)
                    union(a, q)
                for o, r, a in zip(n.outputs, body.outputs, n.inputs):
                    union(o, r)
                    union(o, a)
                visit(c)
                visit(body)

    visit(graph)
    by_class = {}
    for t, dtype in known.items():
        if dtype is not None:
            by_class[find(t)] = dtype

    class Lookup(dict):
        def get(self, t, default=None):
            return by_class.get(find(t), default)

    return Lookup()


def lower_function(graph, name, opset):
    """The root graph as an ONNX GraphProto: placeholders are the model's inputs."""
    from onnx import helper
    model = Model(opset, handle_dtypes(graph))
    env, inputs = {}, []
    for p in graph.inputs:
        if p.dtype == np.dtype(object):
            raise Unsupported(p.node, "a TensorArray argument")
        pname = model.fresh(p.node.name)
        env[p] = pname
        inputs.append(value_info(model, p, pname))
    b = Builder(model, env)
    b.lower_nodes(graph)
    outputs = []
    for i, t in enumerate(graph.outputs):
        if t.dtype == np.dtype(object):
            raise Unsupported(t.node, "a TensorArray as a result; return ta.stack()")
        out = b.emit("Identity", [b.value(t)], base=f"output_{i}")
        outputs.append(value_info(model, t, out))
    return helper.make_graph(b.nodes, name, inputs, outputs, initializer=model.initializers)
