"""Checkpointed reverse mode for `while_loop`: memory for `c` states instead of one a step.

The gradient of a loop in loops.py stores, per iteration, every value the body's rules
read: O(n) memory for n steps. With a budget of `c` snapshots (`ag.set_loop_options(
checkpoints=c)` as a loop body's first statement, or `ag.grad(f, checkpoints=c)` /
`ag.GradientTape(checkpoints=c)` for every loop of a gradient) the forward loop instead
*offers* its state to a `revolve.Checkpoints` object each step, which keeps at most `c`
(Revolve's positions when the trip count is known before the loop, online thinning
otherwise). Its backward loop, at the step `i` it reverses:

1. restores the nearest snapshot `s <= i` (`ad_ckpt_restore`), which also plans which
   states on the way to keep (Revolve, with the slots freed so far);
2. re-runs the forward body from `s` to `i` in an inner `while_loop` (a copy of the body's
   nodes that compute the state, offering each state to the store);
3. runs the body once more on the state entering step `i` and the body's rules on it:
   the "taping" step. Rules read values of that copy, so nothing per step is kept.

Everything is staged as ordinary nodes (two nested `while_loop`s and three effectful
primitives), so codegen, devices and the eager tape run it unchanged. The state of a
loop is its loop variables (arrays, counters, TensorArray handles: a TensorArray is
written in place, and a re-run writes the same element again); captures and Variables are
read again, so a body that assigns a Variable is refused. A checkpointed backward pass is
not differentiable again (a second derivative differentiates a store-all one).
"""

import numpy as np

from autograph.autodiff import loops, revolve
from autograph.autodiff.accumulate import accumulate
from autograph.autodiff.jvp_table import deftransposed
from autograph.autodiff.transform import add_cts, gradient_origin, HANDLE
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, Node, get_default_graph

INT = np.dtype(np.int64)
_WRITES = ("assign_variable", "update_variable")


# -- the primitives ------------------------------------------------------------------------

def _handle_infer(*_, **__):
    return [(HANDLE, (), False)]


def _restore_infer(store, i, *, dtypes, shapes, weak):
    return [(HANDLE, (), False), (INT, (), False)] + list(zip(dtypes, shapes, weak))


def _new_kernel(xp, *length, capacity):
    return revolve.Checkpoints(capacity, int(length[0]) if length else None)


def _offer_kernel(xp, store, p, *state):
    store.offer(int(p), state)
    return store


def _restore_kernel(xp, store, i, *, dtypes, shapes, weak):
    s, state = store.restore(int(i))
    return (store, np.int64(s)) + tuple(state)


def _no_second(cts, node):
    raise NotImplementedError(
        "a checkpointed loop's backward pass cannot be differentiated again; compute the "
        "inner gradient without checkpoints (drop `checkpoints=` or "
        "ag.set_loop_options(checkpoints=...)) to take a second derivative")


primitives.register("ad_ckpt_new", _handle_infer, _new_kernel, effectful=True,
                    doc="a store of at most `capacity` loop states (revolve.Checkpoints); "
                        "an optional input: the trip count, when known before the loop")


def _offer_vjp(cts, node):
    # the store's only readers are restores, whose rule refuses: a cotangent reaching an
    # offer is a zero one (a later gradient of the same loop carrying the handle along)
    return [None] * len(node.inputs)


primitives.register("ad_ckpt_offer", _handle_infer, _offer_kernel, effectful=True,
                    vjp=_offer_vjp, doc="offers the state entering step p to the store")
primitives.register("ad_ckpt_restore", _restore_infer, _restore_kernel, effectful=True,
                    vjp=_no_second,
                    doc="(store, s, state entering step s) for the nearest snapshot s <= i")
primitives.nondifferentiable("ad_ckpt_new")
# forward mode (a Hessian through a checkpointed gradient) meets the same answers: an offer
# carries no tangent, and a restore refuses, as reverse mode does
deftransposed("ad_ckpt_offer")
deftransposed("ad_ckpt_restore")


# -- options -------------------------------------------------------------------------------

def checkpoints_for(loop, ctx, cts):
    """The snapshot budget of a loop (its body's `set_loop_options`, else the gradient's
    default), or None: store every step. Also None when the state cannot be snapshotted,
    or when what an earlier gradient added to the loop (its stacks) gets a cotangent: a
    second derivative through a store-all gradient, which the store-all rule gives."""
    bg = loop.attrs["body_graph"]
    opts = getattr(bg, "loop_options", None) or {}
    c = opts.get("checkpoints", ctx.checkpoints)
    if not c:
        return None
    state_ks = _state_ks(loop)
    if not _replayable(loop, state_ks) or \
            any(ct is not None for k, ct in enumerate(cts) if k not in state_ks):
        return None
    return c


def _state_ks(loop):
    """The loop variables that are the loop's state: all but what gradients added."""
    rec = loops._record(loop.attrs["body_graph"])
    skip = {rec.count, *rec.saved.values()}
    return [k for k in range(len(loop.outputs)) if k not in skip]


def _replayable(loop, state_ks):
    """A snapshot holds references: an array is never changed in place, a TensorArray
    only by writes a re-run repeats; other handles (a backward loop's gradient lists,
    updated in place) cannot be snapshotted: such a loop (a gradient's own loop, when
    differentiating twice) stores every step."""
    bg = loop.attrs["body_graph"]
    for k in state_ks:
        out = bg.outputs[k]
        if out.dtype == HANDLE and out is not bg.inputs[k] and \
                not out.node.op.startswith("ta_"):
            return False
    return True


# -- copying the body ------------------------------------------------------------------------

def _copy_graph(graph, parent):
    """A fresh copy of a nested branch/body graph: a transform that later extends the
    original (adding loop variables, exports) must not change the copy."""
    new = Graph(graph.name, parent=parent, origin=graph.origin)
    env = {}
    for node in graph.nodes:
        attrs = _copied_attrs(node, new)
        copy = Node(new, node.name, node.op, [env[id(t)] for t in node.inputs], attrs,
                    [(t.dtype, t.shape, t.weak) for t in node.outputs],
                    gradient_origin(node.origin))   # (a copy re-runs in the backward pass)
        new.nodes.append(copy)
        new._used_names.add(node.name)
        env.update(zip(map(id, node.outputs), copy.outputs))
        _record_captures(copy)
    new.inputs = [env[id(t)] for t in graph.inputs]
    new.outputs = [env[id(t)] for t in graph.outputs]
    return new


def _copied_attrs(node, parent):
    if not any(isinstance(v, Graph) for v in node.attrs.values()):
        return node.attrs
    return {k: _copy_graph(v, parent) if isinstance(v, Graph) else v
            for k, v in node.attrs.items()}


def _record_captures(node):
    """Each subgraph's `captures` from the node's inputs, as tracing leaves them."""
    if node.op not in ("cond", "while_loop"):
        return
    ins = node.inputs
    if node.op == "cond":
        outer, skip = ins[1:], 0
    else:
        n = len(node.outputs)
        outer, skip = ins[n:len(ins) - (node.attrs.get("maximum_iterations") == "input")], n
    for sub in node.attrs.values():
        if isinstance(sub, Graph):
            sub.captures = {id(o): (o, inner) for o, inner in zip(outer, sub.inputs[skip:])}


class _Copier:
    """Tensors of the loop body `bg` re-made in `graph`: `env` maps body inputs (by id) to
    their values there; `outer(t)` gives a capture's value. Nodes are copied on demand, in
    the body's order; a node that gained outputs since it was copied is copied again."""

    def __init__(self, bg, graph, env, outer):
        self.bg, self.graph, self.memo, self.outer = bg, graph, dict(env), outer

    def __call__(self, t):
        hit = self.memo.get(id(t))
        if hit is not None:
            return hit
        need, todo = set(), [t.node]
        while todo:
            n = todo.pop()
            if id(n) in need or all(id(o) in self.memo for o in n.outputs):
                continue
            need.add(id(n))
            todo.extend(x.node for x in n.inputs)
        with self.graph.as_default():
            for n in self.bg.nodes:
                if id(n) not in need:
                    continue
                if n.op == "Placeholder":
                    self.memo[id(n.outputs[0])] = self.graph.capture(self.outer(n.outputs[0]))
                    continue
                new = self.graph.add_node(n.op, [self.memo[id(x)] for x in n.inputs],
                                          _copied_attrs(n, self.graph),
                                          [(o.dtype, o.shape, o.weak) for o in n.outputs],
                                          name=n.name, origin=gradient_origin(n.origin))
                _record_captures(new)
                self.memo.update(zip(map(id, n.outputs), new.outputs))
        return self.memo[id(t)]


# -- the rule ----------------------------------------------------------------------------------

def _exact_length(loop):
    """The trip count, staged before the loop, when the loop is a plain counter loop (no
    other condition, no iteration limit); else None (an online schedule)."""
    if loop.attrs["maximum_iterations"] is not None:
        return None
    if loop.attrs["cond_graph"].outputs[0].node.op not in loops._COMPARISONS:
        return None
    return loops._counter_bound(loop)


def _ensure_store(loop, rec, state_ks, capacity):
    key = ("checkpoints", capacity)
    k = rec.saved.get(key)
    if k is None:
        graph = loop.graph
        length = _exact_length(loop)
        before = len(graph.nodes)
        with graph.as_default():
            new = primitives.bind1("ad_ckpt_new", [] if length is None else [length],
                                   {"capacity": int(capacity)})
        for made in graph.nodes[before:]:
            loops._insert_before(graph, loop, made)
        count = rec.count

        def offer(h):
            bg = loop.attrs["body_graph"]
            return primitives.bind1("ad_ckpt_offer", [h, bg.inputs[count]] +
                                    [bg.inputs[k] for k in state_ks])
        k = rec.saved[key] = loops._add_loop_var(loop, new, offer, "checkpoints")
    return k


def _refuse_writes(bg):
    for n in bg.walk():
        if n.op in _WRITES:
            from autograph.autodiff.transform import NonDifferentiableError, where
            raise NonDifferentiableError(
                f"A checkpointed loop re-runs its body, so its body must not assign a "
                f"Variable ({n.op!r}{where(n)}); drop `checkpoints=` for this loop.")


def while_vjp(cts, node, capacity):
    loop, outer_resolve, ctx = node.node, node.resolve, node.ad
    cur = get_default_graph()
    bg = loop.attrs["body_graph"]
    _refuse_writes(bg)
    ins = tuple(loop.inputs)
    lv, cap_active, var_ids = loops.active_parts(node, cts)
    rec = loops._record(bg)
    state_ks = _state_ks(loop)     # (not what earlier gradients added: no cotangents)
    lv = [k for k in lv if k in state_ks]
    specs = [loop.outputs[k] for k in state_ks]

    def capture_value(t):        # a body placeholder that is not state: a capture
        k = loops.pos(bg.inputs, t)
        if k < len(loop.outputs):
            raise RuntimeError(f"checkpointed loop: the body's {t.name!r} is neither its "
                               "state nor a capture")
        return outer_resolve(loop.inputs[k])

    bb = Graph(cur.unique_name("while_grad_body"), parent=cur, origin=bg.origin)
    with bb.as_default():
        j = bb.placeholder("j", INT, ())
        ct_phs = [bb.placeholder(f"ct_{k}", loop.outputs[k].dtype, loop.outputs[k].shape)
                  for k in lv]
        acc_phs = [bb.placeholder(f"acc_{c}", ins[c].dtype, ins[c].shape) for c in cap_active]
        var_phs = [bb.placeholder(f"acc_{ctx.variables[v].name}", ctx.variables[v].dtype,
                                  ctx.variables[v].shape) for v in var_ids]
        store = bb.placeholder("checkpoints", HANDLE, ())
        i = np.subtract(j, np.int64(1))
        restored = primitives.bind(
            "ad_ckpt_restore", [store, i],
            {"dtypes": tuple(t.dtype for t in specs), "shapes": tuple(t.shape for t in specs),
             "weak": tuple(t.weak for t in specs)}).outputs
        store_i, state_i = _advance(bg, state_ks, capture_value, restored, i)

        tape = _Copier(bg, bb, {id(bg.inputs[k]): v for k, v in zip(state_ks, state_i)},
                       capture_value)

        def resolve(t):
            return outer_resolve(t) if t.node.graph is not bg else tape(t)

        body_cts, sub = loops.body_backprop(bg, lv, ct_phs, cap_active, ctx, resolve)
        outs = [i]
        for k, ph in zip(lv, ct_phs):
            outs.append(loops._fit(body_cts.get(id(bg.inputs[k])), ph))
        for c, ph in zip(cap_active, acc_phs):
            ct = body_cts.get(id(bg.inputs[c]))
            outs.append(ph if ct is None else loops._fit(add_cts(ph, ct), ph)
                        if ph.dtype == HANDLE else accumulate(ph, ct, loops._fit))
        for v, ph in zip(var_ids, var_phs):
            outs.append(accumulate(ph, sub.var_cts.get(v), loops._fit))
        outs.append(store_i)
    lv_phs = [j] + ct_phs + acc_phs + var_phs + [store]
    bb.inputs = lv_phs + [inner for _, inner in bb.captures.values()]
    bb.outputs = [bb.capture(t) for t in outs]

    # augment the forward loop (after the backward body: this shifts the body's inputs)
    count = loops._ensure_counter(loop, rec)
    k_store = _ensure_store(loop, rec, state_ks, capacity)
    with cur.as_default():
        inits = [outer_resolve(loop.outputs[count])]
        for k, ph in zip(lv, ct_phs):
            inits.append(loops._fit(cts[k], ph) if cts[k] is not None
                         else loops.zeros_for(loop.outputs[k], outer_resolve))
        for c in cap_active:
            inits.append(loops.zeros_for(ins[c], outer_resolve))
        for v in var_ids:
            var = ctx.variables[v]
            inits.append(primitives.const(np.zeros(var.shape, var.dtype)))
        inits.append(outer_resolve(loop.outputs[k_store]))
    back = loops.count_down_loop(cur, bb, lv_phs, inits, loop.origin)
    return loops.input_cts(node, back.outputs, lv, cap_active, var_ids)


def _advance(bg, state_ks, capture_value, restored, i):
    """The inner loop that re-runs the body from the restored snapshot to the state
    entering step i, offering each state on the way. Returns (store, state)."""
    from autograph.runtime.control_flow import while_loop
    store, s, snap = restored[0], restored[1], list(restored[2:])

    def cond(p, h, *x):
        return np.less(p, i)

    def body(p, h, *x):
        h = primitives.bind1("ad_ckpt_offer", [h, p] + list(x))
        step = _Copier(bg, get_default_graph(),
                       {id(bg.inputs[k]): v for k, v in zip(state_ks, x)}, capture_value)
        return [np.add(p, np.int64(1)), h] + [step(bg.outputs[k]) for k in state_ks]

    out = while_loop(cond, body, [s, store] + snap)
    return out[1], list(out[2:])
