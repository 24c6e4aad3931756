"""Work counted, not timed: tests that guard against wasted or super-linear work count the
Python function calls a piece of code makes, which does not depend on how busy the
machine is (benchmarks/ times the same things)."""

import sys


def calls(fn):
    """(fn(), the number of Python function calls made while it ran)."""
    count = 0

    def profiler(frame, event, arg):
        nonlocal count
        if event == "call":
            count += 1

    sys.setprofile(profiler)
    try:
        result = fn()
    finally:
        sys.setprofile(None)
    return result, count
