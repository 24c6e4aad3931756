"""The cyclic garbage collector paused while a first call converts, traces and compiles.

Conversion and tracing allocate a large, growing heap of small container objects (AST
nodes, graph nodes, tensors, generated source lines) that all stay alive until the trace
is done. CPython's cyclic collector runs whenever allocations outnumber deallocations by a
threshold, and each of its older-generation passes walks every tracked object: as the
heap grows with the program, so does each pass, and the first call of a 1,000-statement
function spent 35-60% of its time there, growing faster than the program (issue 30).
None of those objects is garbage until the trace ends, so the passes find nothing.

`paused()` disables the collector for the duration of a `with` block and puts it back as
it was. Nested and concurrent blocks share one count: the collector is re-enabled when the
last block leaves, and only if it was enabled when the first one entered (a user who
disabled it keeps it disabled). The garbage of the trace (cycles among its temporaries) is
collected by the first pass after the block, in one walk.

The collector is one per process: while any thread is in its first call, no thread's
cycles are collected (a trace that never ends, such as a hung thread, keeps it off).
"""

import _thread

gc = None     # the gc module, imported by the first pause (`import autograph` loads none)

_lock = _thread.allocate_lock()
_depth = 0
_was_enabled = False


class _Paused:
    __slots__ = ()

    def __enter__(self):
        global _depth, _was_enabled, gc
        if gc is None:
            import gc
        with _lock:
            if _depth == 0:
                _was_enabled = gc.isenabled()
                gc.disable()
            _depth += 1
        return self

    def __exit__(self, *exc):
        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
        return False


_PAUSED = _Paused()


def paused():
    """A context manager: the cyclic garbage collector is off inside it (see above)."""
    return _PAUSED
