"""The best CPU time of a few calls: what the small per-element benchmarks report.

CPU time of this process (time.process_time), not wall time: on a machine shared with other
jobs it counts the work, not the waiting; the best of a few rounds drops a round slowed by
a collection or a cold cache. benchmarks/harness.py's cases measure more carefully
(interleaved rounds, medians); these benchmarks print a table of costs per element.
"""

import time


def best(fn, *args, rounds=3):
    """The least CPU time, in seconds, of `rounds` calls fn(*args)."""
    least = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        fn(*args)
        least = min(least, time.process_time() - t)
    return least


def per_call(fn, number):
    """CPU seconds per call of fn(), over `number` calls in a row (one round of the A/B
    scripts' interleaved rounds)."""
    t = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - t) / number
