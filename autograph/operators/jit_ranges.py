"""Long Python ranges become one staged loop when a function is traced for native code.

`for i in range(100):` over a Python range unrolls while tracing, as Python runs it: the
graph holds the body 100 times. Generated Python code runs that at the same speed as a
loop, but Numba compiles every copy: a vectorised Mandelbrot with `range(100)` took 19 s to
compile with `jit_compile=True` (issue 30), against 0.2 s for JAX, whose users write
`lax.fori_loop`.

While `ag.function(..., jit_compile=True)` traces (`tracing_for_native()`), a Python
range of more than STAGE_RANGES_LONGER_THAN iterations is staged as one while_loop whose
counter is the loop's item (operators.for_loops._stage_rest_of_range, the machinery
that stages the rest of a range with a tensor `break`). Where the body cannot take a
tensor item (it indexes a Python list with it, makes a shape from it, changes a Python
container), the attempt is refused and the range unrolls as before. Codegen, whose
unrolled code is as fast as a loop, keeps unrolling: this is the native path only.
"""

import _thread

from autograph.operators import for_loops

_state = _thread._local()     # (the C type: `threading` costs a fresh first call)


class tracing_for_native:
    """A `with` block in which Python ranges are staged (this thread; nests)."""

    __slots__ = ("_before",)

    def __enter__(self):
        self._before = getattr(_state, "on", False)
        _state.on = True
        return self

    def __exit__(self, *exc):
        _state.on = self._before
        return False


def tracing_native():
    """Whether this thread is inside a `tracing_for_native()` block (a jit_compile trace)."""
    return getattr(_state, "on", False)


def stage(iterable, longer_than):
    """Whether the Python loop over `iterable` is to be staged: a range of more than
    `longer_than` iterations, while tracing for native code."""
    return type(iterable) is range and len(iterable) > longer_than and \
        getattr(_state, "on", False)


for_loops._stage_long_ranges = stage   # (imported only by jit_compile traces)
