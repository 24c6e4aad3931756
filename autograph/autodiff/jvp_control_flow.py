"""Forward mode through `cond` and `while_loop`: the node is rebuilt with tangents.

`cond`: a new `cond` on the same predicate; each branch is the old branch copied
(jvp.jvp_nodes) and returns its outputs followed by the tangents of the differentiable
ones (zeros where a branch makes none), so both branches agree on the structure.

`while_loop`: a new `while_loop` whose loop variables are the old ones followed by the
tangents of the active ones. Which loop variables are active is a fixed point: a loop
variable is active when its initial tangent is nonzero or the body computes it from an
active value (a loop variable or a capture with a tangent); iterating the body's
dependency walk until nothing changes finds the variables that may carry a tangent after
any number of iterations. The tangent rides along with its value, step by step, so a
loop whose trip count is known only when it runs (data-dependent `while`) stores
nothing: forward mode costs about one more body per iteration.
"""

from autograph.autodiff import jvp, jvp_table
from autograph.runtime import control_flow
from autograph.runtime.ir.graph import Graph


def rebuild(node, ins, tangents, ctx):
    if node.op == "cond":
        return _cond(node, ins, tangents, ctx)
    return _while(node, ins, tangents, ctx)


def inline(graph, inputs, tangents, ctx):
    """Copy `graph` (its inputs positionally `inputs`) into the current graph with tangents."""
    env, tenv = {}, {}
    for ph, x, t in zip(graph.inputs, inputs, tangents):
        env[id(ph)] = x
        if t is not None:
            tenv[id(ph)] = t
    ctx.depth += 1
    try:
        jvp.jvp_nodes(graph.nodes, env, tenv, ctx)
    finally:
        ctx.depth -= 1
    outs = [env[id(t)] if id(t) in env else t for t in graph.outputs]
    return outs, [tenv.get(id(t)) for t in graph.outputs]


def _reads_tangent_variable(graph, ctx):
    if not ctx.var_tangents:
        return False
    for n in graph.walk():
        if n.op == "read_variable":
            var = n.attrs["variable"]()
            if var is not None and id(var) in ctx.var_tangents:
                return True
    return False


def _cond(node, ins, tangents, ctx):
    tg, fg = node.attrs["true_graph"], node.attrs["false_graph"]
    pred, caps, tcaps = ins[0], ins[1:], tangents[1:]
    active = any(t is not None for t in tcaps) or any(
        _reads_tangent_variable(g, ctx) for g in (tg, fg))
    slots = [k for k, o in enumerate(node.outputs)
             if active and jvp_table.differentiable(o)]

    def branch(g):
        def fn():
            outs, touts = inline(g, caps, tcaps, ctx)
            return list(outs) + [jvp_table.instantiate(touts[k], outs[k]) for k in slots]
        return fn
    res = control_flow.cond(pred, branch(tg), branch(fg))
    n = len(node.outputs)
    touts = [None] * n
    for j, k in enumerate(slots):
        touts[k] = res[n + j]
    return list(res[:n]), touts


def _active_outputs(graph, active_inputs, ctx):
    """Which outputs of `graph` may carry a tangent when the inputs flagged do."""
    active = {id(ph) for ph, a in zip(graph.inputs, active_inputs) if a}
    for n in graph.nodes:
        hit = any(id(t) in active for t in n.inputs)
        if not hit and n.op == "read_variable" and ctx.var_tangents:
            var = n.attrs["variable"]()
            hit = var is not None and id(var) in ctx.var_tangents
        if not hit and n.op in jvp.CONTROL_FLOW:
            hit = any(_reads_tangent_variable(g, ctx) for g in n.attrs.values()
                      if isinstance(g, Graph))
        if hit:
            active.update(id(t) for t in n.outputs if jvp_table.differentiable(t))
    return [id(t) in active and jvp_table.differentiable(t) for t in graph.outputs]


def _while(node, ins, tangents, ctx):
    cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
    limit = node.attrs["maximum_iterations"]
    n = len(node.outputs)
    m = len(bg.inputs) - n
    caps, tcaps = ins[n:n + m], tangents[n:n + m]
    max_iter = ins[-1] if limit == "input" else limit
    flags = [tangents[k] is not None and jvp_table.differentiable(node.outputs[k])
             for k in range(n)]
    cap_flags = [t is not None for t in tcaps]
    while True:
        out_flags = _active_outputs(bg, flags + cap_flags, ctx)
        new = [a or b for a, b in zip(flags, out_flags[:n])]
        if new == flags:
            break
        flags = new
    slots = [k for k in range(n) if flags[k]]
    if not slots:   # nothing to carry: the loop copied as it is
        def body_plain(*vs):
            return inline(bg, list(vs) + caps, [None] * n + tcaps, ctx)[0]

        def cond_plain(*vs):
            return inline(cg, list(vs) + caps, [None] * len(cg.inputs), ctx)[0][0]
        outs = control_flow.while_loop(cond_plain, body_plain, list(ins[:n]),
                                       maximum_iterations=max_iter)
        return list(outs), [None] * n

    inits = list(ins[:n]) + [jvp_table.instantiate(tangents[k], ins[k]) for k in slots]

    def cond_fn(*vs):
        return inline(cg, list(vs[:n]) + caps, [None] * len(cg.inputs), ctx)[0][0]

    def body_fn(*vs):
        tin = [None] * n
        for j, k in enumerate(slots):
            tin[k] = vs[n + j]
        outs, touts = inline(bg, list(vs[:n]) + caps, tin + tcaps, ctx)
        extra = [j for j, t in enumerate(touts[:n]) if t is not None and j not in slots]
        assert not extra, f"forward mode: loop tangents outside the fixed point: {extra}"
        return list(outs) + [jvp_table.instantiate(touts[k], outs[k]) for k in slots]
    res = control_flow.while_loop(cond_fn, body_fn, inits, maximum_iterations=max_iter)
    touts = [None] * n
    for j, k in enumerate(slots):
        touts[k] = res[n + j]
    return list(res[:n]), touts
