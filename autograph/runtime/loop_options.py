"""`set_loop_options`: options of the loop whose body is being traced.

TensorFlow's place for loop options is a call as the first statement of the loop body
(`tf.autograph.experimental.set_loop_options`). Here the call runs while the body is
traced into its `while_loop` body graph, and records the options on that graph, where the
transforms that read them find them (today: `checkpoints`, read by the reverse-mode
transform, autodiff/checkpointed.py). A loop that runs as plain Python (eagerly, or a
short range unrolled while tracing) has no graph of its own: the call does nothing.
"""

import numbers

from autograph.runtime.ir.graph import get_default_graph


def check_checkpoints(checkpoints, where):
    """`checkpoints` as an int >= 1 or None; a clear error otherwise."""
    if checkpoints is None:
        return None
    if isinstance(checkpoints, bool) or not isinstance(checkpoints, numbers.Integral) or \
            checkpoints < 1:
        raise ValueError(f"{where}: checkpoints must be a positive int (the number of loop "
                         f"states kept for the backward pass) or None, got {checkpoints!r}")
    return int(checkpoints)


def set_loop_options(*, checkpoints=None, parallel_iterations=None, swap_memory=None):
    """Options for the enclosing loop; call it as the loop body's first statement.

    TensorFlow's `parallel_iterations` and `swap_memory` are accepted and ignored (hints
    about its executor; iterations here run in order on one device); its
    `maximum_iterations` and `shape_invariants` are not options here (a TypeError): give
    them to `ag.while_loop`.

    `checkpoints=c`: the gradient of this loop keeps at most `c` snapshots of the loop's
    state (plus the loop's own current state) and re-runs the body from the nearest one,
    instead of storing one state per step: memory for c states, and each step re-run about
    log(n)/log(c) times more (binomial checkpointing: Revolve when the trip count is known
    before the loop, an online schedule when it is not). See docs/checkpointing.md."""
    c = check_checkpoints(checkpoints, "set_loop_options")
    graph = get_default_graph()
    if graph is None or getattr(graph, "live", False) or graph.parent is None:
        return            # a Python loop: no loop graph to set options on
    opts = dict(getattr(graph, "loop_options", None) or {})
    opts["checkpoints"] = c
    graph.loop_options = opts
