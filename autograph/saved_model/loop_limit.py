"""`load(..., limits=Limits(max_loop_iterations=n))`: a loaded model's loops are bounded, and
a loop that reaches the bound raises LoopLimitError naming it (issue 29: a file whose loop
never ends must not hang its caller).

How: when the loader builds a `while_loop` node, it gives the loop one more loop variable,
an int64 iteration counter starting at 0, carried by a `loop_count` node in the body that
returns counter + 1, or raises once the counter reaches the bound. The graph stays an
ordinary graph: every executor runs it, `to_code` shows it, the optimizer keeps it
(`loop_count` is effectful), and a model saved again from the loaded one keeps its bound.
"""

import numpy as np

from autograph.runtime.ir import primitives


class LoopLimitError(RuntimeError):
    """A loaded model's loop ran more iterations than `Limits.max_loop_iterations`."""


def _infer(counter, *, limit, loop):
    return [(np.dtype(np.int64), (), False)]


def _kernel(xp, counter, *, limit, loop):
    if counter >= limit:
        raise LoopLimitError(
            f"the loop {loop} of the loaded model ran {limit} iterations, the limit that "
            "load(..., limits=Limits(max_loop_iterations=...)) set; raise the limit if the "
            "model needs more")
    return counter + 1


if "loop_count" not in primitives.PRIMITIVES:
    primitives.register("loop_count", _infer, kernel=_kernel, effectful=True,
                        doc="a loaded loop's iteration counter, bounded (saved_model.loop_limit)")
    primitives.nondifferentiable("loop_count")


def bound(graph, inputs, attrs, specs, limit, where):
    """Give the while loop about to be added to `graph` (its `inputs`, `attrs` with the
    built cond/body graphs, output `specs`) a counter bounded by `limit`; returns the new
    (inputs, specs). The counter goes last among the loop variables, so the file's
    references to the loop's outputs keep their numbers."""
    n = len(specs)
    cg, bg = attrs["cond_graph"], attrs["body_graph"]
    zero = primitives.const(np.int64(0), graph=graph, name="loop_counter")
    for g in (cg, bg):
        ph = g.placeholder("loop_counter", np.dtype(np.int64), ())
        g.inputs.pop()                      # (placeholder appends; it goes at n)
        g.inputs.insert(n, ph)
        if g is bg:
            nxt = primitives.bind("loop_count", [ph], {"limit": int(limit), "loop": where},
                                  graph=bg).outputs[0]
            bg.outputs = list(bg.outputs[:n]) + [nxt] + list(bg.outputs[n:])
    inputs = list(inputs[:n]) + [zero] + list(inputs[n:])
    specs = list(specs[:n]) + [(np.dtype(np.int64), (), False)] + list(specs[n:])
    return inputs, specs
