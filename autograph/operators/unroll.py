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


def warn(steps, added):
    """Warn once per user line: a Python loop ran `steps` iterations and added `added` nodes
    (the count: control_flow._Watch, which imports this module only then)."""
    warn_once(f"A Python loop ran {steps:,} iterations while tracing and unrolled into "
              f"{added:,} graph nodes: each iteration is staged again, which makes the trace "
              f"and the graph slow. To run the loop in the graph, iterate over ag.range(n) "
              f"(or a tensor), or make its condition a tensor.", UnrollWarning, _warned)
