"""JVP rules derived from VJP rules by transposition.

A VJP rule computes `u -> J^T u`, a linear map of the output cotangent `u`. Its
transpose is `t -> J t`, the JVP. We get it with one reverse pass over the nodes the VJP
rule stages: seed the cotangent of each input cotangent `vjp(u)_i` with the input tangent
`t_i` (the pairing <vjp(u), t> differentiated by `u`) and read off the cotangent of `u`.
The value of `u` never matters (the map is linear), so `u` is zeros; the reverse pass
only reads the primal values the VJP rule reads (after optimisation, the stage-out is
the JVP formula: dead nodes, including `u`, drop out).

This is JAX's "linear transposition" run the other way round, and it is correct wherever
the VJP rule is differentiable, which the second-derivative tests already demand of every
rule. Hand-written rules (jvp_rules*.py) are used where speed matters.
"""

from autograph.autodiff import jvp_table
from autograph.autodiff.transform import (Context, NodeView, active_tensors, add_cts,
                                          backprop)
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import get_default_graph


def transposed_rule(tangents, node):
    prim = primitives.lookup(node.op)
    graph = get_default_graph()
    start = len(graph.nodes)
    us = [jvp_table.zeros_like(o) if jvp_table.differentiable(o) else None
          for o in node.outputs]
    needs = [t is not None for t in tangents]
    view = NodeView(node.node, node.resolve, Context(), needs)
    in_cts = prim.vjp(us, view)
    cts = {}
    for ct, t in zip(in_cts, tangents):
        if ct is None or t is None:
            continue
        if ct.dtype != t.dtype:
            t = t.astype(ct.dtype)
        cts[id(ct)] = add_cts(cts.get(id(ct)), t)
    nodes = graph.nodes[start:]
    sources = [id(u) for u in us if u is not None]
    ctx = Context()
    active = active_tensors(nodes, sources, ctx)
    backprop(nodes, cts, active, ctx)
    out = []
    for u, o in zip(us, node.outputs):
        t = None if u is None else cts.get(id(u))
        if t is not None and t.dtype != o.dtype and o.dtype.kind in "fc":
            t = t.astype(o.dtype)
        out.append(t)
    return out
