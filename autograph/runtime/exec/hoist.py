"""Loop-invariant code motion: work a while_loop body repeats with the same inputs in every
iteration moves before the loop (part of `optimize`).

A body node is *invariant* when each of its inputs is a capture (a value from outside the
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
    and complex-part ops on floating values, widening casts between floating types), and
    that cost no more than one pass over their input;
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

HANDLE = np.dtype(object)
_LAYOUT = frozenset({"permute_dims", "expand_dims", "Identity"})
_FLOAT_UNARY = frozenset({"negative", "positive", "conj", "conjugate", "real", "imag"})


def _safe(node):
    """Cannot raise or warn whatever the values (see the module docstring)."""
    op = node.op
    if op in _LAYOUT:
        return True
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
