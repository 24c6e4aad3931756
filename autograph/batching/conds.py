"""The batching rule of `cond`: one branch per lane, never both.

- An unbatched predicate (the same for every lane) keeps one `cond` node whose branches
  are batched; an output is batched if either branch's is.
- A batched predicate *partitions* the batch: the lanes where it holds are gathered and
  the true branch runs on them only, the false branch on the others, and the results are
  put back in lane order. So no lane runs code its own value would not run (JAX computes
  both branches for every lane and selects, jax-ml/jax#8409: a branch that loops forever
  or fails for the other lanes' values is then run on them). The cost is one gather per
  batched input and one scatter per output, linear in the batch; a branch with no lanes
  runs on empty arrays.
- except where running the other branch cannot be seen: small branches of integer
  arithmetic that cannot fail or warn (selects.py has the rule) run on every lane and
  `where` picks, which costs a fraction of the partition;
- and under `jit_compile=True`, a loop over the lanes, each taking its own branch
  (lane_loops.py): a scalar `if` in native code.
"""

import numpy as np

from autograph.batching import lane_loops, selects
from autograph.runtime import control_flow
from autograph.runtime.numpy import sorting
from autograph.batching.transform import (HANDLE, BatchingError, Frame, batch_graph,
                                          batched_value, defbatch, size_of, where)


def _branch(graph, frame, args, batched):
    return [batched_value(frame, t, b) for t, b in batch_graph(graph, args, batched, frame)]


def cond(frame, node, args, batched):
    pred, ins, flags = args[0], args[1:], batched[1:]
    tg, fg = node.attrs["true_graph"], node.attrs["false_graph"]
    if not batched[0]:
        if not any(flags):     # nothing batched: one cond, branches copied over
            def copied(graph):
                return lambda: [t for t, _ in batch_graph(graph, ins, flags, frame)]
            outs = control_flow.cond(pred, copied(tg), copied(fg))
            return [(t, False) for t in outs]
        outs = control_flow.cond(pred, lambda: _branch(tg, frame, ins, flags),
                                 lambda: _branch(fg, frame, ins, flags))
        return [(t, True) for t in outs]
    if any(t.dtype == HANDLE for t in node.outputs):
        raise BatchingError(
            f"vmap cannot batch the `if`{where(node)}: its condition differs from element to "
            "element and a branch changes a TensorArray, which would then hold different "
            "elements on each element (a ragged batch). Collect the values in a "
            "preallocated array with x[i] = v instead")
    if selects.can_select(tg, fg):     # small integer branches: both run, unobservably
        return _select(frame, pred, tg, fg, ins, flags)
    if lane_loops.native_tracing():
        outs = lane_loops.lane_cond(frame, node, pred, ins, flags)
        if outs is not None:
            return [(t, True) for t in outs]
    return partition(frame, pred, [(tg, fg)], ins, flags)[0]


def _select(frame, pred, tg, fg, ins, flags):
    pred = pred.reshape((-1,)) if pred.ndim != 1 else pred
    outs = []
    for a, b in zip(_branch(tg, frame, ins, flags), _branch(fg, frame, ins, flags)):
        p = pred.reshape((-1,) + (1,) * (a.ndim - 1)) if a.ndim > 1 else pred
        outs.append((np.where(p, a, b), True))
    return outs


def partition(frame, pred, graphs, ins, flags):
    """Run graphs[k][0] on the lanes where `pred` holds and graphs[k][1] on the others;
    the outputs in lane order, for each pair."""
    pred = pred.reshape((-1,)) if pred.ndim != 1 else pred
    yes = sorting.nonzero(pred)[0]
    no = sorting.nonzero(~pred)[0]
    results = []
    n_yes = size_of(yes)
    # where lane j lands in [yes lanes..., no lanes...]: its rank among its side
    place = np.where(pred, np.cumsum(pred) - 1, n_yes + np.cumsum(~pred) - 1)
    for tg, fg in graphs:
        sides = []
        for lanes, graph in ((yes, tg), (no, fg)):
            sub = Frame(size_of(lanes))
            part = [np.take(a, lanes, axis=0) if b else a for a, b in zip(ins, flags)]
            sides.append(_branch(graph, sub, part, flags))
        outs = []
        for a, b in zip(*sides):
            both = np.concatenate([a, b], axis=0)
            outs.append((np.take(both, place, axis=0), True))
        results.append(outs)
    return results


defbatch("cond", cond)
