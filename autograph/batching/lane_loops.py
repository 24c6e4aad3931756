"""A vmapped loop for native code: one loop over the lanes, each running its own loop.

When `ag.function(..., jit_compile=True)` traces a vmapped `while_loop` whose condition
differs from lane to lane, the batched loop is staged as

    done = zeros_like(x)                      # one per loop variable
    for lane in range(lanes):                 # a staged while_loop
        v = x[lane]                           # the lane's own values
        while cond(v): v = body(v)            # the per-element loop, as traced
        done[lane] = v
    return done

Each lane runs the body exactly its own trip count (the work is the sum of trip counts, as
compaction's is), with no mask, no gather of the active lanes and no array allocated per
iteration: Numba compiles the inner loop over scalars (or the element's small arrays) to
machine code, where the per-iteration NumPy calls of compaction are the cost (docs/vmap.md,
"What it costs"). Codegen keeps compaction, whose every call is a pass over all active
lanes at once: there a loop over lanes would pay the interpreter per lane-iteration.

The element's graph is copied as it is (nothing in it is batched), so its own `if`s are
scalar branches and its own inner loops run per lane too. The writes `done[lane] = v` are
updates of a loop-carried array nothing else reads: native code makes them in place.
"""

import numpy as np

from autograph.runtime import control_flow
from autograph.runtime.ir import primitives
from autograph.runtime.numpy import updates
from autograph.batching.transform import batch_graph, materialize


def native_tracing():
    """Whether the graph being built is traced for `jit_compile=True` (native code)."""
    import sys
    ranges = sys.modules.get("autograph.operators.jit_ranges")   # imported by such traces
    return ranges is not None and ranges.tracing_native()


def lane_loop(frame, cg, bg, inits, caps, cap_flags, limit, limit_batched):
    """The outputs of the per-element loop (`cg`, `bg`) for every lane, one lane at a time.
    `inits` are batched (lane on axis 0); `caps` batched where `cap_flags` says; `limit`
    (maximum_iterations: None, an int, or a tensor, per lane when `limit_batched`)."""
    n = len(inits)
    unbatched = [False] * (n + len(caps))

    def element_loop(lane, values):
        lane_caps = [c[lane] if b else c for c, b in zip(caps, cap_flags)]
        lane_limit = limit[lane] if limit_batched else limit

        def cond(*vs):
            return batch_graph(cg, list(vs) + lane_caps, unbatched, frame)[0][0]

        def body(*vs):
            return [t for t, _ in batch_graph(bg, list(vs) + lane_caps, unbatched, frame)]
        return control_flow.while_loop(cond, body, values, maximum_iterations=lane_limit)

    def outer_cond(lane, *done):
        return lane < frame.size

    def outer_body(lane, *done):
        values = element_loop(lane, [x[lane] for x in inits])
        done = [updates.setitem(d, lane, v) for d, v in zip(done, values[:n])]
        return [lane + 1] + done
    start = [primitives.constant(np.int64(0))] + [np.zeros_like(x) for x in inits]
    return control_flow.while_loop(outer_cond, outer_body, start)[1:]


def lane_cond(frame, node, pred, ins, flags):
    """A `cond` whose predicate differs from lane to lane, one lane at a time: each lane
    runs its own branch (a scalar `if` in native code). None when an output's per-element
    shape is not known while tracing (the caller partitions instead)."""
    shapes = [t.shape for t in node.outputs]
    if any(s is None or any(d is None for d in s) for s in shapes):
        return None
    tg, fg = node.attrs["true_graph"], node.attrs["false_graph"]
    unbatched = [False] * len(ins)
    pred = pred.reshape((-1,)) if pred.ndim != 1 else pred

    def branch(graph, lane_ins):
        return lambda: [t for t, _ in batch_graph(graph, lane_ins, unbatched, frame)]

    def outer_cond(lane, *done):
        return lane < frame.size

    def outer_body(lane, *done):
        lane_ins = [x[lane] if b else x for x, b in zip(ins, flags)]
        values = control_flow.cond(pred[lane], branch(tg, lane_ins), branch(fg, lane_ins))
        return [lane + 1] + [updates.setitem(d, lane, v) for d, v in zip(done, values)]
    start = [primitives.constant(np.int64(0))] + [   # (frame.size: an int or a tensor)
        materialize(frame, np.zeros(s, t.dtype)) for s, t in zip(shapes, node.outputs)]
    return control_flow.while_loop(outer_cond, outer_body, start)[1:]
