"""The gradient of `while_loop`: one backward loop that counts down.

The forward loop node is *augmented in place* (its graph is still being built): it gets
a trip counter and one stack per body value that the body's rules read, and pushes each
such value at the iteration's index. Loop invariants and captures are never stored (a
rule reading one gets the outer value), constants are re-made. A stack is preallocated
when the trip count is known before the loop (`maximum_iterations`, or a counter loop:
`for i in range(a, n, s)`, `while i < n: ... i += s`), and grows otherwise, so
data-dependent trip counts work.

The backward loop runs the body's rules once per iteration, last iteration first, with
loop variables (j, cotangents of the active loop variables, accumulators for captures and
watched Variables, the stacks). Its graph has the same nodes whatever the trip count.
Both loops are ordinary `while_loop` nodes: the backward loop can be optimised, compiled,
run on any device, and differentiated again (its stack reads have rules of their own).
"""

import numpy as np

from autograph.autodiff import loop_weight_grads, stacks
from autograph.autodiff.accumulate import accumulate
from autograph.autodiff.loop_reads import read_before
from autograph.autodiff.transform import (Context, active_tensors, add_cts, backprop,
                                          differentiable_dtype, gradient_origin, HANDLE)
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.ir.tensor import Tensor

INT = np.dtype(np.int64)


class _Record:
    """What a forward loop was augmented with (kept on its body graph)."""

    def __init__(self):
        self.count = None       # loop-variable index of the trip counter
        self.saved = {}         # id(body tensor), or ("state", k) -> loop-variable index
                                # of its stack


def _record(body):
    rec = getattr(body, "_ag_autodiff", None)
    if rec is None:
        rec = body._ag_autodiff = _Record()
    return rec


def zeros_for(t, resolve):
    """A zero cotangent for forward tensor `t` in the current graph (resolving `t` only
    when its shape is not known statically)."""
    if t.dtype == HANDLE:
        return stacks.empty_grad()
    if t.shape is not None and None not in t.shape:
        return primitives.const(np.zeros(t.shape, t.dtype))
    return np.zeros_like(resolve(t))


def pos(seq, t):
    """The index of `t` in `seq` by identity (Tensor's == stages a comparison), or -1."""
    for i, x in enumerate(seq):
        if x is t:
            return i
    return -1


def _insert_before(graph, anchor, node):
    graph.nodes.remove(node)
    graph.nodes.insert(graph.nodes.index(anchor), node)


def _add_loop_var(loop, init, body_out_fn, name):
    """Add a loop variable to `loop` (a while_loop node): `init` (a tensor of the loop's
    graph, made before it), and the body output `body_out_fn(placeholder)`. Returns its
    index."""
    cg, bg = loop.attrs["cond_graph"], loop.attrs["body_graph"]
    k = len(loop.outputs)
    for g in (cg, bg):
        ph = g.placeholder(name, init.dtype, init.shape, init.weak)
        g.inputs.pop()
        g.inputs.insert(k, ph)
    with bg.as_default():
        out = body_out_fn(bg.inputs[k])
    bg.outputs = list(bg.outputs) + [bg.capture(out)]
    inputs = list(loop.inputs)
    inputs.insert(k, init)
    loop.inputs = tuple(inputs)
    loop.outputs = tuple(loop.outputs) + (Tensor(loop, k, init.dtype, init.shape, init.weak),)
    return k


def _trip_bound(loop):
    """A tensor (of the loop's graph, made before it) bounding the trip count, or None."""
    limit = loop.attrs["maximum_iterations"]
    graph = loop.graph
    if limit == "input":
        return loop.inputs[-1]
    if isinstance(limit, int):
        with graph.as_default():
            c = primitives.const(np.int64(limit))
        _insert_before(graph, loop, c.node)
        return c
    return _counter_bound(loop)


_COMPARISONS = {"less": 0, "greater": 0, "not_equal": 0, "less_equal": 1, "greater_equal": 1}


def _comparisons(t):
    """The comparisons a loop condition `t` is a conjunction of (`i < n and not break_`)."""
    node = t.node
    if node.op == "logical_and":
        for x in node.inputs:
            yield from _comparisons(x)
    elif node.op in _COMPARISONS and len(node.inputs) == 2:
        yield node


def _invariant(loop, g, t):
    """`t` (of the loop's cond or body graph) as a loop-invariant value: ("const", value)
    or ("outer", tensor of the loop's graph made before it); None when it varies."""
    if t.node.op == "Const":
        return ("const", t.node.attrs["value"])
    k = pos(g.inputs, t)
    if k >= len(loop.outputs):
        return ("outer", loop.inputs[k])
    return None


def _step(loop, k):
    """The invariant step of loop variable k when the body does `i = i + s` (or `i - s`):
    (sign, invariant), else None."""
    bg = loop.attrs["body_graph"]
    node = bg.outputs[k].node
    if node.op not in ("add", "subtract") or len(node.inputs) != 2:
        return None
    i_ph = bg.inputs[k]
    if node.inputs[0] is i_ph:
        other = node.inputs[1]
    elif node.inputs[1] is i_ph and node.op == "add":
        other = node.inputs[0]
    else:
        return None
    inv = _invariant(loop, bg, other)
    return None if inv is None else (1 if node.op == "add" else -1, inv)


def _counter_bound(loop):
    """For a counter loop — the condition compares a loop variable `i` with a loop
    invariant `n` (`i < n`, `n > i`, ..., possibly `and not break_`: a range loop) and the
    body steps `i` by an invariant `s` — the trip count ceil((n - i0) / s) (plus one for
    `<=`), at least 0, staged before the loop; else None. It sizes the stacks only: a loop
    that runs longer (or stops early) still works, as pushes past the end append."""
    cg = loop.attrs["cond_graph"]
    n_lv = len(loop.outputs)
    for cmp in _comparisons(cg.outputs[0]):
        for a, b in (cmp.inputs, cmp.inputs[::-1]):
            k = pos(cg.inputs[:n_lv], a)
            if k < 0 or a.dtype.kind not in "iu":
                continue
            n_inv, step = _invariant(loop, cg, b), _step(loop, k)
            if n_inv is None or step is None:
                continue
            return _stage_trip_count(loop, loop.inputs[k], n_inv, step, _COMPARISONS[cmp.op])
    return None


def _stage_trip_count(loop, i0, n_inv, step, extra):
    graph = loop.graph
    before = len(graph.nodes)

    def value(inv):
        return primitives.const(inv[1]) if inv[0] == "const" else inv[1]

    with graph.as_default():
        n, s = value(n_inv), value(step[1]).astype(INT)
        if step[0] < 0:
            s = np.negative(s)
        s = np.where(np.equal(s, 0), np.int64(1), s)
        trips = np.negative(np.floor_divide(np.subtract(i0, n).astype(INT), s))
        bound = np.maximum(np.add(trips, np.int64(extra)), np.int64(0)).astype(INT)
    for node in graph.nodes[before:]:
        _insert_before(graph, loop, node)
    return bound


def _ensure_counter(loop, rec):
    if rec.count is None:
        graph = loop.graph
        with graph.as_default():
            zero = primitives.const(np.int64(0))
        _insert_before(graph, loop, zero.node)
        one = np.int64(1)
        rec.count = _add_loop_var(loop, zero, lambda c: np.add(c, one), "trip_count")
    return rec.count


def _ensure_stack(loop, rec, t, bound):
    k = rec.saved.get(id(t))
    if k is None:
        graph = loop.graph
        with graph.as_default():
            new = primitives.bind1("ad_stack_new", [] if bound is None else [bound])
        _insert_before(graph, loop, new.node)
        count = rec.count

        def push(h):
            bg = loop.attrs["body_graph"]
            return primitives.bind1("ad_stack_push", [h, bg.inputs[count], t])
        k = rec.saved[id(t)] = _add_loop_var(loop, new, push, f"stack_{t.node.name}")
    return k


def _ensure_state_stack(loop, rec, k, bound):
    """The stack of loop variable k's successive values: its initial value at 0 (pushed
    before the loop), the body's output for it at i + 1 in iteration i. One stack serves
    a rule reading the variable (at j) and one reading its next value (at j + 1): an RNN's
    `h` and `tanh(...)` are the same arrays, pushed once."""
    key = ("state", k)
    idx = rec.saved.get(key)
    if idx is None:
        graph = loop.graph
        before = len(graph.nodes)
        with graph.as_default():
            capacity = [] if bound is None else [np.add(bound, np.int64(1))]
            new = primitives.bind1("ad_stack_new", capacity)
            new = primitives.bind1("ad_stack_push", [new, primitives.const(np.int64(0)),
                                                     loop.inputs[k]])
        for made in graph.nodes[before:]:
            _insert_before(graph, loop, made)
        count = rec.count

        def push(h):
            bg = loop.attrs["body_graph"]
            return primitives.bind1("ad_stack_push", [h, bg.outputs[count], bg.outputs[k]])
        idx = rec.saved[key] = _add_loop_var(loop, new, push, f"states_{k}")
    return idx


def _single_states(saved, state_reads, bg, jm1):
    """A loop variable whose value only, or next value only, the rules read needs no
    state stack (and no push before the loop): an ordinary stack of that tensor holds the
    same, read at j - 1."""
    out = []
    for key, h in saved:
        if isinstance(key, tuple):
            k = key[1]
            offsets = {o for o, _ in state_reads[k]}
            if offsets == {0}:
                key = bg.inputs[k]
            elif offsets == {1}:
                key = bg.outputs[k]
                for _, get in state_reads[k]:
                    get.inputs = (h, jm1)
        out.append((key, h))
    return out


def _state_of(bg, n_lv, t):
    """(k, offset) when `t` is loop variable k (offset 0) or the body's next value for it
    (offset 1) and k is an array loop variable; else None."""
    k = pos(bg.inputs[:n_lv], t)
    if k < 0:
        k = pos(bg.outputs[:n_lv], t)
        if k < 0:
            return None
        return (k, 1) if t.dtype != HANDLE else None
    return (k, 0) if t.dtype != HANDLE else None


def active_parts(node, cts):
    """What a loop's backward pass carries: the loop variables with cotangents (a fixed
    point over the body), the captures needing one, the ids of watched Variables read."""
    loop, ctx = node.node, node.ad
    bg = loop.attrs["body_graph"]
    n_lv, n_in = len(loop.outputs), len(node.inputs)
    caps = range(n_lv, n_in - (1 if loop.attrs["maximum_iterations"] == "input" else 0))
    lv_active = {k for k in range(n_lv) if node.needs[k] or cts[k] is not None}
    cap_active = [c for c in caps if node.needs[c]]
    while True:
        sources = [id(bg.inputs[k]) for k in lv_active] + [id(bg.inputs[c]) for c in cap_active]
        act = active_tensors(bg.nodes, sources, ctx)
        grown = lv_active | {k for k in range(n_lv) if id(bg.outputs[k]) in act}
        if grown == lv_active:
            break
        lv_active = grown
    lv = sorted(k for k in lv_active if differentiable_dtype(loop.outputs[k].dtype))
    var_ids = sorted({id(n.attrs["variable"]()) for n in bg.walk() if ctx.watches(n)})
    return lv, cap_active, var_ids


def while_vjp(cts, node):
    loop, outer_resolve, ctx = node.node, node.resolve, node.ad
    bg = loop.attrs["body_graph"]
    from autograph.autodiff import checkpointed   # (it builds on this file's helpers)
    capacity = checkpointed.checkpoints_for(loop, ctx, cts)
    if capacity:
        return checkpointed.while_vjp(cts, node, capacity)
    cur = get_default_graph()
    n_lv = len(loop.outputs)
    ins = tuple(loop.inputs)     # (augmenting the loop below inserts loop variables)
    lv, cap_active, var_ids = active_parts(node, cts)

    bb = Graph(cur.unique_name("while_grad_body"), parent=cur, origin=bg.origin)
    saved, lv_phs = [], []        # [(forward tensor or ("state", k), handle placeholder)]
    states = {}                   # k -> the handle placeholder of loop variable k's stack
    state_reads = {}              # k -> [(offset, the ad_stack_get node)]
    with bb.as_default():
        j = bb.placeholder("j", INT, ())
        ct_phs = [bb.placeholder(f"ct_{k}", loop.outputs[k].dtype, loop.outputs[k].shape)
                  for k in lv]
        acc_phs = [bb.placeholder(f"acc_{c}", ins[c].dtype, ins[c].shape)
                   for c in cap_active]
        var_phs = [bb.placeholder(f"acc_{ctx.variables[v].name}", ctx.variables[v].dtype,
                                  ctx.variables[v].shape) for v in var_ids]
        lv_phs = [j] + ct_phs + acc_phs + var_phs
        jm1 = np.subtract(j, np.int64(1))
        cache, reads_before = {}, {}

        def resolve(t):
            hit = cache.get(id(t))
            if hit is not None:
                return hit
            if t.node.graph is not bg:
                return outer_resolve(t)
            with bb.as_default():
                if pos(bg.inputs[n_lv:], t) >= 0:
                    out = bb.capture(outer_resolve(loop.inputs[pos(bg.inputs, t)]))
                elif t.node.op == "Const":
                    out = primitives.const(t.node.attrs["value"], t.weak)
                elif t.node.op == "read_variable" and \
                        read_before(loop, t.node, reads_before) is not None:
                    out = bb.capture(outer_resolve(reads_before[id(t.node.attrs["variable"]())]))
                elif _state_of(bg, n_lv, t) is not None:
                    k, offset = _state_of(bg, n_lv, t)
                    h = states.get(k)
                    if h is None:
                        h = states[k] = bb.placeholder(f"states_{k}", HANDLE, ())
                        bb.inputs.pop()
                        saved.append((("state", k), h))
                    out = primitives.bind1("ad_stack_get", [h, j if offset else jm1],
                                           {"dtype": t.dtype, "shape": t.shape})
                    state_reads.setdefault(k, []).append((offset, out.node))
                else:
                    h = bb.placeholder(f"stack_{t.node.name}", HANDLE, ())
                    bb.inputs.pop()
                    saved.append((t, h))
                    out = primitives.bind1("ad_stack_get", [h, jm1],
                                           {"dtype": t.dtype, "shape": t.shape})
            cache[id(t)] = out
            return out

        body_cts, sub = body_backprop(bg, lv, ct_phs, cap_active, ctx, resolve)
        outs = [jm1]
        for k, ph in zip(lv, ct_phs):
            outs.append(_fit(body_cts.get(id(bg.inputs[k])), ph))
        deferred = []             # [(c or v, (X, G))]: weight gradients made after the loop
        for c, ph in zip(cap_active, acc_phs):   # (rows of scatters added in place)
            ct = body_cts.get(id(bg.inputs[c]))
            pair = None if ph.dtype == HANDLE else loop_weight_grads.factors(ct, ph)
            if pair is not None:
                deferred.append((c, pair))
                outs.append(ph)
                continue
            outs.append(ph if ct is None else _fit(add_cts(ph, ct), ph) if ph.dtype == HANDLE
                        else accumulate(ph, ct, _fit))
        for v, ph in zip(var_ids, var_phs):     # (a watched Variable: the same)
            pair = loop_weight_grads.factors(sub.var_cts.get(v), ph)
            if pair is not None:
                deferred.append((("variable", v), pair))
                outs.append(ph)
                continue
            outs.append(accumulate(ph, sub.var_cts.get(v), _fit))
        outs += [h for _, h in saved]
        row_phs = []              # two TensorArrays (X rows, G rows) per deferred weight
        for c, pair in deferred:
            for t in pair:
                ph = bb.placeholder("rows", HANDLE, ())
                bb.inputs.pop()
                row_phs.append(ph)
                outs.append(loop_weight_grads.write_row(ph, jm1, t))
    saved = _single_states(saved, state_reads, bg, jm1)
    lv_phs += [h for _, h in saved]
    lv_phs += row_phs
    bb.inputs = lv_phs + [inner for _, inner in bb.captures.values()]
    bb.outputs = [bb.capture(t) for t in outs]

    # augment the forward loop: a trip counter and a stack per value read
    rec = _record(bg)
    count = _ensure_counter(loop, rec)
    bound = None
    if any((t if isinstance(t, tuple) else id(t)) not in rec.saved for t, _ in saved):
        bound = _trip_bound(loop)
    stack_ks = [_ensure_state_stack(loop, rec, t[1], bound) if isinstance(t, tuple)
                else _ensure_stack(loop, rec, t, bound) for t, _ in saved]

    with cur.as_default():
        inits = [outer_resolve(loop.outputs[count])]
        for k in lv:
            inits.append(_fit(cts[k], ct_phs[lv.index(k)]) if cts[k] is not None
                         else zeros_for(loop.outputs[k], outer_resolve))
        for c in cap_active:
            inits.append(zeros_for(ins[c], outer_resolve))
        for v in var_ids:
            var = ctx.variables[v]
            inits.append(primitives.const(np.zeros(var.shape, var.dtype)))
        inits += [outer_resolve(loop.outputs[k]) for k in stack_ks]
        inits += [loop_weight_grads.new_rows(inits[0]) for _ in row_phs]
    back = count_down_loop(cur, bb, lv_phs, inits, loop.origin)
    in_cts = input_cts(node, back.outputs, lv, cap_active, var_ids)
    if deferred:
        rows = back.outputs[len(back.outputs) - len(row_phs):]
        with cur.as_default():
            for i, (c, (x, g)) in enumerate(deferred):
                ct = loop_weight_grads.product(rows[2 * i], rows[2 * i + 1], x, g)
                if isinstance(c, tuple):       # a Variable's (its accumulator stayed 0)
                    ctx.var_cts[c[1]] = add_cts(ctx.var_cts.get(c[1]), ct)
                else:
                    in_cts[c] = ct
    return in_cts


def count_down_loop(cur, bb, lv_phs, inits, origin):
    """The backward `while_loop` node in `cur`: body `bb` (loop variables `lv_phs`, the
    first a count j), running while j > 0 from `inits`."""
    cgb = Graph(cur.unique_name("while_grad_cond"), parent=cur)
    with cgb.as_default():
        phs = [cgb.placeholder(p.node.name, p.dtype, p.shape, p.weak) for p in lv_phs]
        cgb.set_outputs([np.greater(phs[0], np.int64(0))], identity=False)
    with cur.as_default():
        inits = [cur.capture(t) for t in inits]
        from autograph.runtime.control_flow import _align_captures
        captured = _align_captures([cgb, bb], cur)
        specs = [(p.dtype, p.shape, False) for p in lv_phs]
        return cur.add_node("while_loop", inits + captured,
                            {"cond_graph": cgb, "body_graph": bb, "maximum_iterations": None},
                            specs, name="while_grad",
                            origin=gradient_origin(origin))


def input_cts(node, results, lv, cap_active, var_ids):
    """The cotangents of a loop's inputs from its backward loop's `results` (j, then one
    per active loop variable, capture, Variable); Variables' go to the context."""
    ctx = node.ad
    in_cts = [None] * len(node.inputs)
    for i, k in enumerate(lv):
        in_cts[k] = results[1 + i]
    base = 1 + len(lv)
    for i, c in enumerate(cap_active):
        in_cts[c] = results[base + i]
    base += len(cap_active)
    for i, v in enumerate(var_ids):
        ctx.var_cts[v] = add_cts(ctx.var_cts.get(v), results[base + i])
    return in_cts


def _fit(ct, like):
    """Cotangent `ct` as a value of placeholder `like`'s dtype (zeros for None)."""
    if ct is None:
        return stacks.empty_grad() if like.dtype == HANDLE else np.zeros_like(like)
    if ct.dtype != like.dtype and like.dtype != HANDLE:
        ct = ct.astype(like.dtype)
    if like.shape is not None and ct.shape is not None and tuple(ct.shape) != tuple(like.shape) \
            and None not in like.shape:
        ct = np.broadcast_to(ct, like.shape)
    return ct


primitives.defvjp("while_loop", while_vjp)


def body_backprop(bg, lv, ct_phs, cap_active, ctx, resolve):
    """Run the VJP rules of loop body `bg` backwards, seeded with the cotangent placeholders
    `ct_phs` of its loop variables `lv`, through the variables and active captures
    `cap_active`; `resolve` maps a forward tensor to its value in the backward body. The
    cotangents by id(tensor), and the sub-context (its `var_cts`: the Variables'); shared
    by the store-all and the checkpointed rules."""
    sub = Context()
    sub.variables, sub.stopped = ctx.variables, ctx.stopped
    sub.checkpoints = ctx.checkpoints
    body_cts = {}
    for k, ph in zip(lv, ct_phs):   # (a body may give one tensor for several outputs)
        t = bg.outputs[k]
        body_cts[id(t)] = add_cts(body_cts.get(id(t)), ph)
    sources = [id(bg.inputs[k]) for k in lv] + [id(bg.inputs[c]) for c in cap_active]
    backprop(bg.nodes, body_cts, active_tensors(bg.nodes, sources, ctx), sub, resolve)
    return body_cts, sub
