"""The batching rule of `while_loop`: each lane runs its own number of iterations.

Which loop variables are batched is found first (a fixpoint: a variable is batched if it
enters batched or the body makes it so from batched values). Then:

- an unbatched condition (every lane stops together) keeps one `while_loop` whose body is
  batched;
- a batched condition runs each lane only while its own condition holds. By default the
  loop is *compacted*: it carries the active lanes only (their indices and values), and
  after each iteration the lanes whose condition failed are written to the result and
  dropped. The body's work is the sum of the lanes' trip counts, and a lane never runs an
  iteration its own value would not run (JAX masks instead: every lane runs until the
  last one stops, max(trips) * lanes, and a finished lane keeps running the body on its
  final values, which need not terminate: jax-ml/jax#2947).
- *masking* (JAX's way: run the body on every lane, keep the old value where the
  condition failed, stop when no lane's holds) is used when it is both cheaper and safe,
  by this rule (`use_masking`): the batch is tiny (at most `MASK_MAX_LANES` lanes, known
  while tracing), and the condition and body hold only total operations (`TOTAL`: the
  elementwise, reduction and shape families, no loops, no effects, no indexing), so that
  running a finished lane's body can neither fail, nor hang, nor be seen. Compaction's
  gathers and scatters then cost more than the iterations they save.
"""

import numpy as np

from autograph.batching import amortised, lane_loops, selects
from autograph.runtime import control_flow
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.numpy import sorting, updates
from autograph.batching.transform import (HANDLE, BatchingError, Frame, batch_graph,
                                          batched_value, defbatch, materialize, size_of,
                                          where)

MASK_MAX_LANES = 8


def _flags_of(graph, frame, args, flags, entered):
    """Which outputs of `graph` are batched, for inputs batched as `flags` (`entered`: as
    the values in `args` are). Traced into a scratch graph that is thrown away."""
    outer = get_default_graph()
    scratch = Graph(outer.unique_name("vmap_probe"), parent=outer)
    with scratch.as_default():
        args = [materialize(frame, a) if f and not e else a
                for a, f, e in zip(args, flags, entered)]
        return [b for _, b in batch_graph(graph, args, flags, frame)]


def _split(node, args, batched):
    n = len(node.outputs)
    mode = node.attrs["maximum_iterations"]
    extra = 1 if mode == "input" else 0
    caps = args[n:len(args) - extra]
    cap_flags = batched[n:len(batched) - extra]
    limit = args[-1] if extra else mode
    limit_batched = batched[-1] if extra else False
    return args[:n], batched[:n], caps, cap_flags, limit, limit_batched


def while_loop(frame, node, args, batched):
    cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
    inits, flags, caps, cap_flags, limit, limit_batched = _split(node, args, batched)
    entered = list(flags) + list(cap_flags)
    flags = list(flags)
    while True:     # the batched loop variables: a fixpoint (each round adds one or more)
        outs = _flags_of(bg, frame, inits + caps, flags + cap_flags, entered)
        grown = [a or b for a, b in zip(flags, outs)]
        if grown == flags:
            break
        flags = grown
    pred_batched = _flags_of(cg, frame, inits + caps, flags + cap_flags, entered)[0] or \
        limit_batched
    if not pred_batched:
        entered = batched[:len(inits)]
        inits = [materialize(frame, t) if f and not e else t
                 for t, f, e in zip(inits, flags, entered)]
        return _together(frame, cg, bg, inits, flags, caps, cap_flags, limit)
    _check_shapes_settle(node)
    if any(t.dtype == HANDLE for t in inits):
        raise BatchingError(
            f"vmap cannot batch the loop{where(node)}: each element stops after its own "
            "number of iterations, so a TensorArray it carries would have a different length "
            "on each element (a ragged batch). Collect the values in a preallocated array "
            "with x[i] = v instead")
    # each lane stops on its own: every loop variable is per lane
    inits = [batched_value(frame, t, b) for t, b in zip(inits, entered)]
    if lane_loops.native_tracing():
        outs = lane_loops.lane_loop(frame, cg, bg, inits, caps, cap_flags, limit,
                                    limit_batched)
    elif use_masking(frame, cg, bg):
        outs = _masked(frame, cg, bg, inits, caps, cap_flags, limit)
    elif selects.can_select(cg, bg):    # finished lanes unobservable: compact now and then
        outs = amortised.amortised(frame, cg, bg, inits, caps, cap_flags, limit)
    else:
        outs = _compacted(frame, cg, bg, inits, caps, cap_flags, limit)
    return [(t, True) for t in outs]


def _check_shapes_settle(node):
    """A loop variable whose shape changes from iteration to iteration (the element's loop
    relaxed it) would have a different shape on each lane when lanes stop apart."""
    body = node.attrs["body_graph"]
    for k, init in enumerate(node.inputs[:len(node.outputs)]):
        inside = body.inputs[k].shape
        if init.shape is None:
            continue
        if inside is None or len(inside) != len(init.shape) or any(
                a is not None and b is None for a, b in zip(init.shape, inside)):
            raise BatchingError(
                f"vmap cannot batch the loop{where(node)}: loop variable "
                f"{body.inputs[k].node.name!r} changes shape from iteration to iteration, "
                "and each element stops after its own number of iterations, so the elements "
                "would end with different shapes (a ragged batch)")


def _together(frame, cg, bg, inits, flags, caps, cap_flags, limit):
    """Every lane stops together: one loop over batched values."""
    n = len(inits)

    def cond(*vs):
        return batch_graph(cg, list(vs) + caps, flags + cap_flags, frame)[0][0]

    def body(*vs):
        outs = batch_graph(bg, list(vs) + caps, flags + cap_flags, frame)
        return [batched_value(frame, t, b) if f else t for (t, b), f in zip(outs, flags)]
    outs = control_flow.while_loop(cond, body, inits, maximum_iterations=limit)
    return [(t, f) for t, f in zip(outs[:n], flags)]


def _lane_mask(p, x):
    """`p` (lanes,) shaped to broadcast against `x` (lanes, ...)."""
    return p.reshape((-1,) + (1,) * (x.ndim - 1))


def _masked(frame, cg, bg, inits, caps, cap_flags, limit):
    n = len(inits)
    all_b = [True] * n

    def pred_of(vs):
        p = batch_graph(cg, list(vs) + caps, all_b + cap_flags, frame)[0]
        return batched_value(frame, *p).reshape((-1,))

    def cond(p, count, *vs):
        go = np.any(p)
        return go if limit is None else np.logical_and(go, count < limit)

    def body(p, count, *vs):
        outs = batch_graph(bg, list(vs) + caps, all_b + cap_flags, frame)
        new = [np.where(_lane_mask(p, v), batched_value(frame, t, b), v)
               for v, (t, b) in zip(vs, outs)]
        return [np.logical_and(p, pred_of(new)), count + 1] + new
    start = [pred_of(inits), primitives.constant(np.int64(0))] + inits
    return control_flow.while_loop(cond, body, start)[2:]


def _compacted(frame, cg, bg, inits, caps, cap_flags, limit):
    """Carry the active lanes only; write each lane's values out when it finishes."""
    n = len(inits)
    all_b = [True] * n

    def pred_of(vs, sub, caps_now):
        p = batch_graph(cg, list(vs) + caps_now, all_b + cap_flags, sub)[0]
        return batched_value(sub, *p).reshape((-1,))

    def caps_for(active):
        return [np.take(c, active, axis=0) if b else c for c, b in zip(caps, cap_flags)]

    p0 = pred_of(inits, frame, caps)
    if limit is not None:
        p0 = np.logical_and(p0, 0 < limit)
    active0 = sorting.nonzero(p0)[0]
    live0 = [np.take(t, active0, axis=0) for t in inits]
    count0 = np.zeros_like(active0)

    def cond(active, count, *state):
        return size_of(active) > 0

    def body(active, count, *state):
        done, live = list(state[:n]), list(state[n:])
        sub = Frame(size_of(active))
        caps_now = caps_for(active)
        outs = batch_graph(bg, live + caps_now, all_b + cap_flags, sub)
        live = [batched_value(sub, t, b) for t, b in outs]
        count = count + 1
        p = pred_of(live, sub, caps_now)
        if limit is not None:
            p = np.logical_and(p, count < limit)
        stop = sorting.nonzero(~p)[0]
        keep = sorting.nonzero(p)[0]
        finished = np.take(active, stop, axis=0)
        done = [updates.setitem(d, finished, np.take(v, stop, axis=0))
                for d, v in zip(done, live)]
        live = [np.take(v, keep, axis=0) for v in live]
        return [np.take(active, keep, axis=0), np.take(count, keep, axis=0)] + done + live
    out = control_flow.while_loop(cond, body, [active0, count0] + list(inits) + live0)
    return out[2:2 + n]


def use_masking(frame, cg, bg):
    """The documented rule: mask when the batch is tiny and the loop is total."""
    if not isinstance(frame.size, int) or frame.size > MASK_MAX_LANES:
        return False
    return all(_total(n) for g in (cg, bg) for n in g.walk())


def _total(node):
    if node.op in ("Placeholder", "Const", "Identity"):
        return True
    if node.op == "cond":
        return True      # its branches are walked too
    prim = primitives.lookup(node.op)
    if prim.effectful:
        return False
    from autograph.batching import broadcasting
    return node.op in TOTAL or broadcasting.is_elementwise(prim)


TOTAL = {"Cast", "astype", "where", "clip", "round_decimals", "real", "imag", "stop_gradient",
         "sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin",
         "cumulative_sum", "cumulative_prod", "sort", "argsort", "flip", "roll", "concat",
         "stack", "permute_dims", "expand_dims", "squeeze", "reshape", "broadcast_to",
         "zeros_like", "ones_like", "full_like", "matmul"}

defbatch("while_loop", while_loop)
