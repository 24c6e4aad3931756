"""The gradient of `cond`: a `cond` on the saved predicate.

Each backward branch runs the rules of its forward branch. A value a rule reads that the
forward branch computed is exported from the forward `cond` as an extra output (the other
branch gives zeros), which the forward node gets in place, like a loop's stacks; captures
and constants are never exported. Inside a loop the predicate and the exports are stored
per iteration like any value the backward loop reads.
"""

import numpy as np

from autograph.autodiff.loops import pos, zeros_for
from autograph.autodiff.transform import (Context, active_tensors, add_cts, backprop,
                                          differentiable_dtype, gradient_origin, HANDLE)
from autograph.autodiff import stacks
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.ir.tensor import Tensor


def _zeros_in(graph, t):
    with graph.as_default():
        if t.dtype == HANDLE:
            return stacks.empty_grad()
        shape = tuple(0 if d is None else d for d in t.shape) if t.shape is not None else ()
        return primitives.const(np.zeros(shape, t.dtype))


def _export(cond_node, branch, t):
    """Make forward-branch tensor `t` an output of `cond_node`; returns the output."""
    exports = _exports(cond_node)
    k = exports.get(id(t))
    if k is not None:
        return cond_node.outputs[k]
    tg, fg = cond_node.attrs["true_graph"], cond_node.attrs["false_graph"]
    other = fg if branch is tg else tg
    z = _zeros_in(other, t)
    branch.outputs = list(branch.outputs) + [t]
    other.outputs = list(other.outputs) + [z]
    from autograph.runtime.control_flow import join_shapes
    k = len(cond_node.outputs)
    shape = join_shapes(t.shape, z.shape) if t.dtype != HANDLE else ()
    cond_node.outputs = tuple(cond_node.outputs) + (Tensor(cond_node, k, t.dtype, shape),)
    exports[id(t)] = k
    return cond_node.outputs[k]


def _exports(cond_node):
    tg = cond_node.attrs["true_graph"]
    ex = getattr(tg, "_ag_exports", None)
    if ex is None:
        ex = tg._ag_exports = {}
    return ex


def cond_vjp(cts, node):
    cnode, outer_resolve, ctx = node.node, node.resolve, node.ad
    cur = get_default_graph()
    tg, fg = cnode.attrs["true_graph"], cnode.attrs["false_graph"]
    n_in = len(node.inputs)
    caps = [c for c in range(1, n_in) if node.needs[c]
            and differentiable_dtype(cnode.inputs[c].dtype)]
    var_ids = sorted({id(n.attrs["variable"]()) for g in (tg, fg) for n in g.walk()
                      if ctx.watches(n)})
    n_out = len(cts)
    branches = []
    for fwd in (tg, fg):
        b = Graph(cur.unique_name("cond_grad_" + ("true" if fwd is tg else "false")),
                  parent=cur, origin=fwd.origin)
        cache = {}

        def resolve(t, fwd=fwd, b=b, cache=cache):
            hit = cache.get(id(t))
            if hit is not None:
                return hit
            if t.node.graph is not fwd:
                return outer_resolve(t)
            with b.as_default():
                i = pos(fwd.inputs, t)
                if i >= 0:
                    out = b.capture(outer_resolve(cnode.inputs[1 + i]))
                elif t.node.op == "Const":
                    out = primitives.const(t.node.attrs["value"], t.weak)
                else:
                    exported = _export(cnode, fwd, t)
                    with cur.as_default():
                        value = outer_resolve(exported)
                    out = b.capture(value)
                    if out.shape != t.shape:
                        out = primitives.bind1("ad_assume_shape", [out], {"shape": t.shape})
            cache[id(t)] = out
            return out

        with b.as_default():
            sub = Context()
            sub.variables, sub.stopped = ctx.variables, ctx.stopped
            sub.checkpoints = ctx.checkpoints
            body_cts = {}
            for k in range(n_out):   # (a branch may give one tensor for several outputs)
                if cts[k] is not None:
                    t = fwd.outputs[k]
                    body_cts[id(t)] = add_cts(body_cts.get(id(t)), b.capture(cts[k]))
            act = active_tensors(fwd.nodes, [id(fwd.inputs[c - 1]) for c in caps], ctx)
            backprop(fwd.nodes, body_cts, act, sub, resolve)
            outs = []
            for c in caps:
                ct = body_cts.get(id(fwd.inputs[c - 1]))
                outs.append(ct if ct is not None else _zeros_in(b, cnode.inputs[c])
                            if cnode.inputs[c].shape is not None and None not in
                            cnode.inputs[c].shape else np.zeros_like(resolve(fwd.inputs[c - 1])))
            for v in var_ids:
                ct = sub.var_cts.get(v)
                var = ctx.variables[v]
                outs.append(ct if ct is not None else primitives.const(np.zeros(var.shape, var.dtype)))
            outs = [o.astype(cnode.inputs[c].dtype) if o.dtype != cnode.inputs[c].dtype
                    and o.dtype != HANDLE else o for o, c in zip(outs, caps)] + outs[len(caps):]
        b.set_outputs(outs, identity=False)
        branches.append(b)
    bt, bf = branches
    from autograph.runtime.control_flow import _align_captures, join_shapes
    with cur.as_default():
        pred = cur.capture(node.inputs[0])
        captured = _align_captures([bt, bf], cur)
        specs = [(a.dtype, join_shapes(a.shape, c.shape) if a.dtype != HANDLE else (), False)
                 for a, c in zip(bt.outputs, bf.outputs)]
        back = cur.add_node("cond", [pred] + captured, {"true_graph": bt, "false_graph": bf},
                            specs, name="cond_grad",
                            origin=gradient_origin(cnode.origin))
    in_cts = [None] * n_in
    for i, c in enumerate(caps):
        in_cts[c] = back.outputs[i]
    for i, v in enumerate(var_ids):
        ctx.var_cts[v] = add_cts(ctx.var_cts.get(v), back.outputs[len(caps) + i])
    return in_cts


def _assume_infer(x, *, shape):
    return [(x.dtype, shape, x.weak)]


primitives.register("ad_assume_shape", _assume_infer, kernel=lambda xp, x, *, shape: x,
                    doc="x, whose static shape is known to be `shape`",
                    vjp=lambda cts, node: [cts[0]])
primitives.defvjp("cond", cond_vjp)
_ = zeros_for
