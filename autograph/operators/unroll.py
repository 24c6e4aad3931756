"""A warning for Python loops that unroll into large graphs while tracing.

A Python loop (over a list, a Python `range`, or a `while` whose condition stays a Python
value) runs while tracing, and every iteration stages its operations again: 100,000
iterations make a graph of 100,000 copies of the body. That is what the user wrote, and
often intended (a small static loop), but past `LIMIT` iterations that stage nodes it is
rarely intended and always slow, so it warns once per user line, naming the line and the
number of nodes the loop added. The cure is a loop the graph runs: iterate over
`ag.range(n)` or a tensor, or make the condition a tensor.
"""

from autograph.operators.control_flow import UNROLL_LIMIT as LIMIT
from autograph.operators.location import warn_once

_warned = set()


class UnrollWarning(UserWarning):
    """A Python loop unrolled more than `LIMIT` iterations into the graph being traced."""


def warn(steps, added, numpy_test=False):
    """Warn once per user line: a Python loop ran `steps` iterations and added `added` nodes
    (the count: control_flow._Watch, which imports this module only then); `numpy_test`:
    its condition was a NumPy value."""
    cure = ("To run the loop in the graph, iterate over ag.range(n) (or a tensor), or make "
            "its condition a tensor.")
    if numpy_test:
        cure = ("Its condition compares NumPy values (a counter like `t = np.int64(0)`, a "
                "Python bound): NumPy scalars are Python values while tracing, like ints, so "
                "the loop runs in Python. To run it in the graph, make the counter or the "
                "bound a tensor (pass n to ag.function as np.int64(n), not a Python int, or "
                "start the counter from ag.constant(0)), or "
                "loop over ag.range(n).")
    warn_once(f"A Python loop ran {steps:,} iterations while tracing and unrolled into "
              f"{added:,} graph nodes: each iteration is staged again, which makes the trace "
              f"and the graph slow. {cure}", UnrollWarning, _warned)
