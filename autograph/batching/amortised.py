"""Compaction amortised: drop finished lanes only when enough of them have piled up.

The compacted loop (loops.py) gathers the active lanes after every iteration: two
`nonzero`s, a gather per loop variable and a scatter of the finished lanes, ~10 array calls
an iteration whatever the body costs. When running a finished lane's body cannot be seen
(`selects.can_select` of the condition and the body: small warning-free integer
arithmetic, like collatz's), this loop instead keeps a finished lane in place, its values
frozen by `where`, and compacts only when the lanes still running fall below `KEEP_ABOVE`
(0.85) of the lanes carried. Between compactions at most 15% of the lanes carried are
finished, so the body's work stays within 1/0.85 = 1.18x the sum of trip counts (the
issue asks for 1.2x; tests/batching/test_vmap_amortised.py counts it), and a compaction
happens only after the batch lost 15% of its width.
"""

import numpy as np

from autograph.runtime import control_flow
from autograph.runtime.numpy import sorting, updates
from autograph.batching.transform import Frame, batch_graph, batched_value, size_of

KEEP_ABOVE = 0.85


def amortised(frame, cg, bg, inits, caps, cap_flags, limit):
    """The loop's outputs for every lane: `inits` batched, `caps` batched where
    `cap_flags` says, `limit` maximum_iterations (None, an int or a tensor)."""
    n, nc = len(inits), len(caps)
    all_b = [True] * n
    lane_caps = [c for c, b in zip(caps, cap_flags) if b]

    def with_caps(carried):
        it = iter(carried)
        return [next(it) if b else c for c, b in zip(caps, cap_flags)]

    def pred_of(vs, sub, caps_now):
        p = batch_graph(cg, list(vs) + caps_now, all_b + cap_flags, sub)[0]
        return batched_value(sub, *p).reshape((-1,))

    running0 = pred_of(inits, frame, caps)
    if limit is not None:
        running0 = np.logical_and(running0, 0 < limit)
    active0 = sorting.nonzero(running0)[0]
    start = [active0, np.take(running0, active0, axis=0), np.zeros_like(active0)] + \
        [np.take(c, active0, axis=0) for c in lane_caps] + list(inits) + \
        [np.take(t, active0, axis=0) for t in inits]
    k = len(lane_caps)

    def cond(active, running, count, *state):
        return size_of(active) > 0

    def body(active, running, count, *state):
        carried, done, live = list(state[:k]), list(state[k:k + n]), list(state[k + n:])
        sub = Frame(size_of(active))
        caps_now = with_caps(carried)
        outs = batch_graph(bg, live + caps_now, all_b + cap_flags, sub)
        live = [np.where(running.reshape((-1,) + (1,) * (v.ndim - 1)) if v.ndim > 1
                         else running, batched_value(sub, t, b), v)
                for v, (t, b) in zip(live, outs)]
        if limit is not None:       # (without a limit, no lane counts its iterations)
            count = count + running.astype(count.dtype)
        running = np.logical_and(running, pred_of(live, sub, caps_now))
        if limit is not None:
            running = np.logical_and(running, count < limit)
        width = size_of(active)
        few = np.sum(running) < width * KEEP_ABOVE

        def compact():
            stop = sorting.nonzero(~running)[0]
            keep = sorting.nonzero(running)[0]
            finished = np.take(active, stop, axis=0)
            new_done = [updates.setitem(d, finished, np.take(v, stop, axis=0))
                        for d, v in zip(done, live)]
            return [np.take(x, keep, axis=0) for x in [active, running, count] + carried] \
                + new_done + [np.take(v, keep, axis=0) for v in live]

        def as_is():
            return [active, running, count] + carried + done + live
        return control_flow.cond(few, compact, as_is)
    out = control_flow.while_loop(cond, body, start)
    return out[3 + k:3 + k + n]
