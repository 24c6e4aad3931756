"""vmap inside vmap: the inner call is one node, `vmap_call`, that the outer batches.

The inner vmap's own batched graph partitions and compacts its lanes with `nonzero`,
whose output length depends on the values: the outer vmap could not batch that graph.
So, while an outer vmap traces its function for one element (`element_trace`), an inner
vmap stages one `vmap_call` node holding the graph of ITS element and which inputs it maps
(`flags`). The outer's rule for it maps both at once: the two lane axes are flattened into
one (lanes of the outer x lanes of the inner, each input repeated along the axis it is
not mapped over), the inner element graph is batched over that single axis, and the
outputs are shaped back. So nested vmap costs one batched graph, compacted loops and
partitioned conds included.

A `vmap_call` left over (differentiated inside the outer trace, say) still runs: its
kernel batches the graph for the arrays it gets and interprets that; its gradient is
refused with a clear message (differentiate outside the outer vmap, or inside the inner).
"""

import threading

import numpy as np

from autograph.autodiff.jvp_table import deftransposed
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.numpy import shape_ops
from autograph.batching.transform import (Frame, batch_graph, defbatch, dims_of)

_state = threading.local()


class element_trace:
    """`with element_trace():` an outer vmap traces its function for one element."""

    def __enter__(self):
        _state.depth = getattr(_state, "depth", 0) + 1

    def __exit__(self, *exc):
        _state.depth -= 1
        return False


def inside_element_trace():
    return getattr(_state, "depth", 0) > 0


def _infer(*args, graph, flags, out_specs):
    return list(out_specs)


def _kernel(xp, *arrays, graph, flags, out_specs):
    from autograph.runtime.exec import interpreter
    g = Graph("vmap_call")
    with g.as_default():
        phs = [g.placeholder(f"in_{i}", np.dtype(a.dtype), tuple(a.shape))
               for i, a in enumerate(arrays)]
        lanes = next(a.shape[0] for a, f in zip(arrays, flags) if f)
        outs = batch_graph(graph, phs, flags, Frame(int(lanes)))
        g.set_outputs([t for t, _ in outs])
    outs = interpreter.run(g, list(arrays))
    return outs[0] if len(outs) == 1 else tuple(outs)


def _vjp(cts, node):
    raise NotImplementedError(
        "the gradient of a vmap nested inside another vmap's function, taken inside the "
        "outer one, is not supported: differentiate the whole (ag.grad of the outer vmap) "
        "or inside the inner function (vmap of ag.grad)")


primitives.register("vmap_call", _infer, _kernel, doc="an inner vmap, batched by the outer",
                    vjp=_vjp)
deftransposed("vmap_call")   # forward mode meets the same refusal as reverse mode


def call(graph, inputs, flags, frame):
    """Stage the inner vmap as one node; [(tensor, batched by the inner)] per output."""
    outer = get_default_graph()
    scratch = Graph(outer.unique_name("vmap_probe"), parent=outer)
    with scratch.as_default():
        outs = batch_graph(graph, inputs, flags, frame)
    specs = tuple((t.dtype, t.shape, t.weak) for t, _ in outs)
    out_flags = [b for _, b in outs]
    node = primitives.bind("vmap_call", list(inputs),
                           {"graph": graph, "flags": tuple(bool(f) for f in flags),
                            "out_specs": specs})
    return list(zip(node.outputs, out_flags))


def vmap_call(frame, node, args, batched):
    """The outer rule: one batch of (outer lanes) x (inner lanes)."""
    inner = node.attrs["flags"]
    pick = next(k for k, f in enumerate(inner) if f)
    a = args[pick]
    n_inner = dims_of(a)[1 if batched[pick] else 0]
    n_outer = frame.size
    both = []
    for a, outer_b, inner_b in zip(args, batched, inner):
        if outer_b and inner_b:
            a = shape_ops.reshape(a, (-1,) + dims_of(a)[2:])
        elif outer_b:     # each outer lane repeated for its inner lanes
            d = dims_of(a)
            a = np.broadcast_to(np.expand_dims(a, 1), (d[0], n_inner) + d[1:])
            a = shape_ops.reshape(a, (-1,) + d[1:])
        elif inner_b:     # the inner lanes repeated for each outer lane
            d = dims_of(a)
            a = np.broadcast_to(np.expand_dims(a, 0), (n_outer,) + d)
            a = shape_ops.reshape(a, (-1,) + d[1:])
        both.append(a)
    flags = [o or i for o, i in zip(batched, inner)]
    outs = batch_graph(node.attrs["graph"], both, flags, Frame(n_outer * n_inner))
    result = []
    for (t, b), spec in zip(outs, node.attrs["out_specs"]):
        if not b:
            result.append((t, False))
            continue
        t = shape_ops.reshape(t, (n_outer, n_inner) + dims_of(t)[1:])
        inner_batched = len(spec[1]) == len(t.shape) - 1 if spec[1] is not None else True
        result.append((t if inner_batched else t[:, 0], True))
    return result


defbatch("vmap_call", vmap_call)
