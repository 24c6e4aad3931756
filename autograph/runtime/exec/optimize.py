"""Graph rewrites run once per trace: constant folding, common subexpressions, dead nodes.

`optimize(graph)` returns a new Graph with the same inputs and outputs that computes the
same values. It copies the graph node by node (program order), and while copying:

- folds a node whose inputs are all constants into a Const (evaluated now with NumPy; not
  when the result is large, and never an effectful node);
- reuses an earlier node with the same op, the same inputs and equal attrs (CSE), and an
  earlier read of the same Variable when nothing could have written it in between;
- drops casts to the dtype a value already has (they change only the weak-type mark);
- replaces a `cond` whose condition is a constant by the branch it would take, and drops
  the outputs of a `cond` that nothing uses, and loop variables that nothing needs;
- optimises the branch and body graphs of control-flow nodes the same way, and moves the
  loop-invariant work of a while_loop body before the loop (`hoist_invariants`, below),
  copying a hoisted transpose that the loop's matmuls read into C order (loop_layout.py).

Then it drops nodes nothing needs (dead-node elimination). Effectful nodes (print, variable
assignments, TensorArray writes, and control flow containing them) are never folded,
merged, dropped or reordered, so side effects happen exactly as the program staged them.
(Variable reads are effectful too, so that they stay ordered with the assignments; the one
liberty taken is merging repeated reads between two possible writes.)

Loop-invariant code motion (here rather than in a module of its own: a first call loads
both anyway): work a while_loop body repeats with the same inputs in every iteration moves
before the loop. A body node is *invariant* when each of its inputs is a capture (a value from outside the
loop), a constant, or the output of another invariant node. The backward loop of a
gradient is full of them (`W.T` for the rule of `h @ W`), and so are user loops that
recompute something from their captures. An invariant node is hoisted into the graph that
holds the loop, placed just before it, and its value passed into the loop as one more
capture, when it is

- pure: never an effectful node (print, Variable reads and writes, TensorArray and stack
  operations, random draws), nor control flow, nor a node of object (handle) dtype; and
- safe to run even if the loop runs zero times, where before it would not have run:
  * either it is in `SAFE`, a set of operations that cannot raise or warn once tracing
    accepted them (transposes and axis insertions checked against the static rank, sign
    and complex-part ops on floating values, widening casts between floating types,
    reshapes between fully known shapes of the same nonzero size: loop_layout's copies),
    and that cost no more than one pass over their input;
  * or the loop is known to run at least once: its condition holds on its initial values,
    which are all constants (counter loops over static lengths), as the optimiser can
    evaluate now. Then the first iteration would have run the node anyway (an error it
    raises names the same node and user line; it comes before the body's earlier effects
    of that first iteration rather than after them).

Nested loops are handled inside out: a node hoisted out of an inner loop lands in the outer
loop's body and moves again if it is invariant there too.
"""

import numpy as np

from autograph.runtime.control_flow import CONTROL_FLOW_OPS, is_effectful
from autograph.runtime.devices import get_device
from autograph.runtime.ir.graph import Graph

FOLD_LIMIT = 1 << 16   # elements: larger results stay computed at run time
_EPOCH = "state epoch"  # CSE-table entry counting the effects that may change state so far
_NO_WRITES = ("read_variable", "print", "progress_open", "progress", "progress_close")   # effects that change no Variable


def optimize(graph):
    """A new, equivalent Graph: constants folded, duplicates merged, dead nodes dropped."""
    return _Rewriter().rewrite(graph, parent=None)


class _Rewriter:
    def __init__(self):
        self._cpu = None

    @property
    def cpu(self):
        if self._cpu is None:   # only folding needs it
            self._cpu = get_device("cpu")
        return self._cpu

    def rewrite(self, graph, parent, keep=None, drop_inputs=()):
        """The optimised copy of `graph`. `keep`: indices of the outputs to keep (default
        all); `drop_inputs`: indices of inputs to remove (nothing kept may use them)."""
        new = Graph(graph.name, parent, origin=graph.origin)
        new.variables = list(graph.variables)
        mapping = {id(t): new.placeholder(t.node.name, t.dtype, t.shape, t.weak)
                   for t in graph.inputs}
        effects = set()
        self.copy_nodes(graph, new, mapping, {}, effects)
        outputs = graph.outputs if keep is None else [graph.outputs[k] for k in keep]
        new.outputs = [mapping[id(t)] for t in outputs]
        if drop_inputs:
            dropped = {id(t.node) for k, t in enumerate(new.inputs) if k in drop_inputs}
            new.inputs = [t for k, t in enumerate(new.inputs) if k not in drop_inputs]
        hoist_invariants(new)     # loop-invariant code motion (its loops' bodies)
        if any(nd.op == "while_loop" and any(t.node.op == "permute_dims" for t in nd.inputs)
               for nd in new.nodes):   # (loaded only where it may apply: first-call imports)
            from autograph.runtime.exec import loop_layout
            loop_layout.contiguous_operands(new)   # transposes its loops' matmuls read
        _eliminate_dead(new, effects)
        if drop_inputs:
            assert not any(id(nd) in dropped for nd in new.nodes), "a dropped input is still used"
        return new

    def copy_nodes(self, graph, new, mapping, seen, effects):
        """Copy `graph`'s nodes into `new`; `mapping`: id(old tensor) -> new tensor;
        `seen`: CSE table of `new`; `effects`: gets the effectful nodes made."""
        used = {id(t) for t in graph.outputs}
        for node in graph.nodes:
            for t in node.inputs:
                used.add(id(t))
        for node in graph.nodes:
            op = node.op
            if op == "Placeholder":
                continue
            ins = [mapping[id(t)] for t in node.inputs]
            effectful = is_effectful(node)
            if op in CONTROL_FLOW_OPS:
                outs = self.control_flow(node, ins, new, used, seen, effects, effectful)
            else:
                outs = self.copy_node(node, op, ins, new, seen, effects, effectful)
            olds = node.outputs
            if len(olds) == 1:
                if outs[0] is not None:
                    mapping[id(olds[0])] = outs[0]
            else:
                for old, out in zip(olds, outs):
                    if out is not None:
                        mapping[id(old)] = out
            if effectful and op not in _NO_WRITES:
                seen[_EPOCH] = seen.get(_EPOCH, 0) + 1   # state may have changed

    def copy_node(self, node, op, ins, new, seen, effects, effectful):
        """The outputs of `node` (not control flow) in `new`: folded, merged or copied."""
        attrs = node.attrs
        if op == "astype" and ins[0].dtype == node.outputs[0].dtype:
            # a cast that changes only weakness (a Python `True` flag read by `not`):
            # weakness types the trace, the values are the same, so no kernel runs
            return [ins[0]]
        if effectful:
            key = None
            if op == "read_variable":   # two reads with no write between: one read
                var = attrs["variable"]()
                if var is not None:
                    key = ("read_variable", id(var), seen.get(_EPOCH, 0))
        else:
            if op != "Const":
                for t in ins:
                    if t.node.op != "Const":
                        break
                else:
                    folded = self.fold(node, ins, new)
                    if folded is not None:
                        return folded
            key = _cse_key(op, ins, attrs)
        if key is not None:
            found = seen.get(key)
            if found is not None:
                return found
        copy = new._append(op, ins, attrs, [(t.dtype, t.shape, t.weak) for t in node.outputs],
                           node.name, node.origin)
        if effectful:
            effects.add(copy)
        if key is not None:
            seen[key] = copy.outputs
        return copy.outputs

    def fold(self, node, ins, new):
        """Const nodes holding `node`'s values, or None when it should not be folded."""
        from autograph.runtime.exec import interpreter   # (loaded when a graph folds something)
        try:
            values = interpreter._eval(node, [t.node.attrs["value"] for t in ins], self.cpu)
        except Exception:   # let the error happen at run time, where it is reported
            return None
        outs = []
        for t, value in zip(node.outputs, values):
            if not isinstance(value, (np.ndarray, np.generic)) or value.dtype == object or \
                    np.size(value) > FOLD_LIMIT:
                return None
            outs.append(np.asarray(value).astype(t.dtype, copy=False))
        return [new.add_node("Const", (), {"value": v, "weak": t.weak},
                             [(t.dtype, v.shape, t.weak)], name=node.name,
                             origin=node.origin).outputs[0]
                for t, v in zip(node.outputs, outs)]

    def control_flow(self, node, ins, new, used, seen, effects, effectful):
        """Copy a cond/while_loop node with optimised subgraphs. A cond on a constant is
        replaced by its branch; a cond's outputs that nothing uses are dropped (with the
        branch computations that only fed them). Returns the new outputs (None: dropped)."""
        attrs = dict(node.attrs)
        if node.op == "cond" and ins[0].node.op == "Const":
            branch = attrs["true_graph" if bool(ins[0].node.attrs["value"]) else "false_graph"]
            inner = {id(t): v for t, v in zip(branch.inputs, ins[1:])}
            self.copy_nodes(branch, new, inner, seen, effects)
            return [inner[id(t)] for t in branch.outputs]
        keep, drop = None, ()
        if node.op == "cond":
            keep = [k for k, t in enumerate(node.outputs) if id(t) in used]
        else:
            keep = _needed_loop_vars(node, used)
            drop = set(range(len(node.outputs))) - set(keep)
            ins = [ins[k] for k in keep] + ins[len(node.outputs):]
        subs = []
        for key, value in node.attrs.items():
            if isinstance(value, Graph):
                attrs[key] = self.rewrite(value, parent=new, drop_inputs=drop,
                                          keep=None if key == "cond_graph" else keep)
                subs.append(attrs[key])
        ins = _drop_unused_captures(node, subs, ins, len(keep))
        for sub in subs:
            _record_captures(node, sub, ins, len(keep))
        kept = [node.outputs[k] for k in keep]
        copy = new._append(node.op, ins, attrs, [(t.dtype, t.shape, t.weak) for t in kept],
                           node.name, node.origin)
        if effectful:
            effects.add(copy)
        outs = dict(zip(map(id, kept), copy.outputs))
        return [outs.get(id(t)) for t in node.outputs]


def _drop_unused_captures(node, subs, ins, n):
    """Remove the captured inputs that no subgraph uses any more (their consumers were
    optimised away), so the outer nodes computing them can die too. Returns the new
    inputs of the node; `n`: the number of loop variables kept."""
    first_in, first_sub = (1, 0) if node.op == "cond" else (n, n)
    n_caps = len(subs[0].inputs) - first_sub
    used = set()
    for sub in subs:
        consumed = {id(t) for nd in sub.nodes for t in nd.inputs} | {id(t) for t in sub.outputs}
        used.update(j for j, ph in enumerate(sub.inputs[first_sub:]) if id(ph) in consumed)
    dead = set(range(n_caps)) - used
    if not dead:
        return ins
    for sub in subs:
        gone = {id(ph.node) for j, ph in enumerate(sub.inputs[first_sub:]) if j in dead}
        sub.inputs = sub.inputs[:first_sub] + [
            ph for j, ph in enumerate(sub.inputs[first_sub:]) if j not in dead]
        sub.nodes = [nd for nd in sub.nodes if id(nd) not in gone]
    caps = ins[first_in:first_in + n_caps]
    return ins[:first_in] + [c for j, c in enumerate(caps) if j not in dead] + \
        ins[first_in + n_caps:]


def _record_captures(node, sub, ins, n):
    """Fill `sub.captures` (outer tensor -> placeholder) for readers such as the DOT view;
    `n`: the number of loop variables kept."""
    if node.op == "cond":
        outer = ins[1:]
    else:
        outer = ins[n:len(ins) - (node.attrs.get("maximum_iterations") == "input")]
        outer = [None] * n + list(outer)
    for o, inner in zip(outer, sub.inputs):
        if o is not None:
            sub.captures[id(o)] = (o, inner)


def _needed_loop_vars(node, used):
    """Indices of the loop variables of a while_loop node that matter: used after the loop,
    read by the condition or by an effect in the condition or body, or needed to compute
    such a one.
    The others (and the body work computing them) can go."""
    n = len(node.outputs)
    cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
    needed = {k for k in range(n) if id(node.outputs[k]) in used}
    needed |= _loop_vars_reaching(cg, cg.outputs, n)
    # an effect in the condition (a check that a variable has a value) needs its inputs too
    needed |= _loop_vars_reaching(cg, [t for nd in cg.nodes if is_effectful(nd) for t in nd.inputs], n)
    effects = [t for nd in bg.nodes if is_effectful(nd) for t in nd.inputs]
    masks = _loop_var_masks(bg, n)
    if masks is None:   # nodes not in dependency order: search from each tensor instead
        def reaching(tensors):
            return _loop_vars_reaching(bg, tensors, n)
    else:
        def reaching(tensors):
            mask = 0
            for t in tensors:
                mask |= masks[id(t.node)]
            return {k for k in range(n) if mask >> k & 1}
    needed |= reaching(effects)
    todo = list(needed)
    while todo:
        for k in reaching([bg.outputs[todo.pop()]]) - needed:
            needed.add(k)
            todo.append(k)
    return sorted(needed)


def _loop_var_masks(graph, n):
    """id(node) -> bit mask of the first `n` inputs of `graph` the node depends on, in one
    pass over the nodes (inputs are made before the nodes that use them); None when a
    node comes before one of its inputs."""
    masks = {id(t.node): 1 << k for k, t in enumerate(graph.inputs[:n])}
    for nd in graph.nodes:
        mask = masks.get(id(nd), 0)
        for t in nd.inputs:
            found = masks.get(id(t.node))
            if found is None:
                return None
            mask |= found
        masks[id(nd)] = mask
    return masks


def _loop_vars_reaching(graph, tensors, n):
    """Which of the first `n` inputs of `graph` the `tensors` depend on."""
    position = {id(t.node): k for k, t in enumerate(graph.inputs[:n])}
    found, seen, stack = set(), set(), [t.node for t in tensors]
    while stack:
        nd = stack.pop()
        if id(nd) in seen:
            continue
        seen.add(id(nd))
        if id(nd) in position:
            found.add(position[id(nd)])
        stack.extend(t.node for t in nd.inputs)
    return found


def _eliminate_dead(graph, effects):
    """Drop nodes that neither feed an output nor have (or contain) side effects (`effects`:
    the effectful nodes, known from copying them)."""
    live = {t.node for t in graph.outputs}   # (nodes hash by identity)
    for t in graph.inputs:
        live.add(t.node)
    for node in reversed(graph.nodes):
        if node in live or node in effects:
            live.add(node)
            for t in node.inputs:
                live.add(t.node)
    graph.nodes = [n for n in graph.nodes if n in live]


def _freeze(value):
    if isinstance(value, np.ndarray):
        if value.size > FOLD_LIMIT:
            raise TypeError("too large to compare")
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Graph):
        raise TypeError("graphs are not compared")
    hash(value)
    return (type(value).__name__, value)


def _cse_key(op, ins, attrs):
    """A key equal for nodes that compute the same thing (op, the same input tensors, equal
    attrs), or None when the attrs cannot be compared."""
    if op == "Const" and len(attrs) == 2:
        value, weak = attrs.get("value"), attrs.get("weak")
        if isinstance(value, np.ndarray) and type(weak) is bool and value.size <= FOLD_LIMIT:
            # what the general key below holds for the usual Const, built directly (a
            # 4-tuple: never equal to a general key)
            return ("Const", (value.dtype.str, value.shape, value.tobytes()), weak, True)
    ids = tuple([id(t) for t in ins])
    if not attrs:
        return (op, ids, ())
    try:
        return (op, ids, tuple(sorted([(k, _freeze(v)) for k, v in attrs.items()])))
    except TypeError:
        return None


# -- loop-invariant code motion -------------------------------------------------------------

HANDLE = np.dtype(object)
_LAYOUT = frozenset({"permute_dims", "expand_dims", "Identity"})
_FLOAT_UNARY = frozenset({"negative", "positive", "conj", "conjugate", "real", "imag"})


def _safe(node):
    """Cannot raise or warn whatever the values (see the module docstring)."""
    op = node.op
    if op in _LAYOUT:
        return True
    if op == "reshape":          # static shapes of one size: cannot raise (loop_layout)
        a, b = node.inputs[0].shape, node.outputs[0].shape
        return len(node.inputs) == 1 and a is not None and b is not None and \
            None not in a and None not in b and 0 < int(np.prod(a)) == int(np.prod(b))
    floats = all(t.dtype.kind in "fc" for t in node.inputs)
    if op in _FLOAT_UNARY:
        return floats
    if op == "astype":
        src, dst = node.inputs[0].dtype, node.outputs[0].dtype
        return floats and dst.kind in "fc" and np.can_cast(src, dst, "safe")
    return False


def _pure(node):
    return node.op not in CONTROL_FLOW_OPS and node.op not in ("Placeholder", "Const") and \
        not is_effectful(node) and all(t.dtype != HANDLE for t in node.outputs)


def hoist_invariants(graph):
    """Hoist the invariant nodes of every while_loop node of `graph` (in place). Returns
    the number of nodes moved."""
    moved = 0
    for node in list(graph.nodes):
        if node.op == "while_loop":
            moved += _hoist(graph, node)
    return moved


def _captures(loop):
    """(first capture position, their count) in the body's inputs."""
    n = len(loop.outputs)
    return n, len(loop.attrs["body_graph"].inputs) - n


def runs_at_least_once(loop):
    """True when the loop's condition holds on its initial values, evaluated now because
    every input it reads is a constant (False when that is not known)."""
    from autograph.runtime.exec import interpreter
    from autograph.runtime.devices import get_device
    limit = loop.attrs["maximum_iterations"]
    if limit == "input":
        limit = loop.inputs[-1]
        if limit.node.op != "Const" or int(limit.node.attrs["value"]) <= 0:
            return False
    elif isinstance(limit, int) and limit <= 0:
        return False
    cg = loop.attrs["cond_graph"]
    if any(is_effectful(nd) for nd in cg.nodes):
        return False
    read = {id(t) for nd in cg.nodes for t in nd.inputs} | {id(t) for t in cg.outputs}
    values = []
    for ph, outer in zip(cg.inputs, loop.inputs):
        if id(ph) not in read:
            values.append(None)
        elif outer.node.op == "Const":
            values.append(outer.node.attrs["value"])
        else:
            return False
    try:
        return bool(interpreter._run(cg, values, get_device("cpu"))[0])
    except Exception:
        return False


def _hoist(graph, loop):
    cg, bg = loop.attrs["cond_graph"], loop.attrs["body_graph"]
    first, count = _captures(loop)
    outer_of = {id(bg.inputs[first + i]): loop.inputs[first + i] for i in range(count)}
    consts = {}                        # id(body Const output) -> its node
    hoisted = []
    once = None
    for nd in bg.nodes:
        if nd.op == "Const":
            consts[id(nd.outputs[0])] = nd
            continue
        if not nd.inputs or not _pure(nd):
            continue
        if not all(id(t) in outer_of or id(t) in consts for t in nd.inputs):
            continue
        if all(id(t) in consts for t in nd.inputs):
            continue                   # (left to constant folding: large or raising)
        if not _safe(nd):
            if once is None:
                once = runs_at_least_once(loop)
            if not once:
                continue
        hoisted.append(nd)
        for t in nd.outputs:
            outer_of[id(t)] = None     # made below, in order
    if not hoisted:
        return 0
    at = graph.nodes.index(loop)
    made = []
    for nd in hoisted:
        ins = []
        for t in nd.inputs:
            if id(t) in consts and outer_of.get(id(t)) is None:
                c = consts[id(t)]
                copy = graph._append("Const", (), c.attrs, [(t.dtype, t.shape, t.weak)],
                                     c.name, c.origin)
                made.append(copy)
                outer_of[id(t)] = copy.outputs[0]
            ins.append(outer_of[id(t)])
        copy = graph._append(nd.op, ins, nd.attrs, [(t.dtype, t.shape, t.weak)
                                                    for t in nd.outputs], nd.name, nd.origin)
        made.append(copy)
        for t, o in zip(nd.outputs, copy.outputs):
            outer_of[id(t)] = o
    for nd in made:                    # before the loop, in order
        graph.nodes.remove(nd)
    graph.nodes[at:at] = made
    _pass_in(loop, hoisted, outer_of)
    return len(hoisted)


def _pass_in(loop, hoisted, outer_of):
    """Remove the hoisted nodes from the body; the values the rest of the body (or its
    outputs) reads become new captures of the loop."""
    cg, bg = loop.attrs["cond_graph"], loop.attrs["body_graph"]
    gone = set(map(id, hoisted))
    bg.nodes = [nd for nd in bg.nodes if id(nd) not in gone]
    wanted = {id(t) for nd in bg.nodes for t in nd.inputs} | {id(t) for t in bg.outputs}
    replace = {}
    new_outer = []
    for nd in hoisted:
        for t in nd.outputs:
            if id(t) not in wanted:
                continue
            outer = outer_of[id(t)]
            for g in (cg, bg):
                ph = g.placeholder(f"{t.node.name}_hoisted", t.dtype, t.shape, t.weak)
                g.nodes.remove(ph.node)      # placeholders first (dependency order)
                g.nodes.insert(0, ph.node)
                g.captures[id(outer)] = (outer, ph)
                if g is bg:
                    replace[id(t)] = ph
            new_outer.append(outer)
    for nd in bg.nodes:
        if any(id(t) in replace for t in nd.inputs):
            nd.inputs = type(nd.inputs)(replace.get(id(t), t) for t in nd.inputs)
    bg.outputs = [replace.get(id(t), t) for t in bg.outputs]
    inputs = list(loop.inputs)
    end = len(loop.outputs) + len(bg.inputs) - len(loop.outputs) - len(new_outer)
    inputs[end:end] = new_outer
    loop.inputs = type(loop.inputs)(inputs)
