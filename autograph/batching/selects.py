"""When a per-lane `if` may compute both branches and select: never observable, and cheaper.

`cond` with a batched predicate partitions the batch (conds.py): each branch runs on its
own lanes only, so no lane runs code its own value would not run. For a small branch of
integer arithmetic the partition's cost (two `nonzero`s, a gather per input and side, a
scatter per output: ~15 array calls) is several times the branches' own (collatz's
`n // 2 if n % 2 == 0 else 3 * n + 1`: 3x the whole loop's time in codegen). There, and
only there, both branches run on every lane and `where` picks (JAX's way), because running
the other branch is then unobservable: this rule (`can_select`) admits a branch only when

- it holds at most `SELECT_MAX_NODES` operations (an inner `if`'s branches counted), each
  in `SAFE` (integer and boolean
  arithmetic that NumPy evaluates on arrays without error or warning: wrapping overflow,
  no division) or a `floor_divide`/`remainder` by a constant other than 0 (-1 included:
  its only failure, the minimum integer // -1, wraps silently on arrays), and
- every value in it is an integer or a boolean (floating point can warn: sqrt of a
  negative, overflow, a division by zero), and it has no loop or effect (an inner `if`
  whose branches pass the rule is admitted: amortised.py asks the rule of a loop body).

Anything else (a float branch, an index, a call, a loop) is partitioned as before.
"""

import numpy as np

SELECT_MAX_NODES = 12
SAFE = {"add", "subtract", "multiply", "negative", "positive", "absolute",
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
        "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and",
        "bitwise_or", "bitwise_xor", "invert", "where", "maximum", "minimum", "Identity"}
DIVIDING = {"floor_divide", "remainder"}


def can_select(*graphs):
    """Whether running every one of `graphs` on every lane is unobservable (the rule)."""
    return all(_safe_graph(g) for g in graphs)


def _safe_graph(graph, ops=0):
    """Whether `graph` is safe to run on any lane; False past SELECT_MAX_NODES operations
    (`ops`: those already counted; an inner `if`'s branches count too)."""
    return _count_safe(graph, ops) is not None


def _count_safe(graph, ops):
    for node in graph.nodes:
        if any(t.dtype is None or np.dtype(t.dtype).kind not in "biu" for t in node.outputs):
            return None
        if node.op in ("Placeholder", "Const"):
            continue
        ops += 1
        if ops > SELECT_MAX_NODES:
            return None
        if node.op in SAFE:
            continue
        if node.op == "cond":       # (a loop body's own `if`)
            for branch in (node.attrs["true_graph"], node.attrs["false_graph"]):
                ops = _count_safe(branch, ops)
                if ops is None or ops > SELECT_MAX_NODES:
                    return None
            continue
        if node.op in DIVIDING and _nonzero_constant(node.inputs[1]):
            continue
        return None
    return ops


def _nonzero_constant(t):
    if t.node.op != "Const":
        return False
    value = np.asarray(t.node.attrs["value"])
    return value.size > 0 and bool(np.all(value != 0))
