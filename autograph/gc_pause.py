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
disabled it keeps it disabled).

What the block leaves behind is new to the collector: every object it made (~100 per
statement of a converted function: the annotated syntax tree kept for tracebacks, the
graph) sits in the youngest generation, and the first pass after the block walked them all
inside the first call. Memory-bound (the objects are scattered), that walk grew faster than
the program: a third of a 1,000-statement first call, 18x for 10x the statements. When the
block leaves many (`PROMOTE_ABOVE`), they are moved to the oldest generation unwalked
(`gc.freeze(); gc.unfreeze()`: two list splices), as the collector would after two passes;
not when the program froze objects itself (its `gc.freeze()` is left as it is). The trace's
own garbage (cycles among its temporaries) then waits for a full pass: once `FULL_AFTER`
objects were promoted so without a full pass since, the block's exit runs one, so that
garbage stays bounded however many first calls a program makes.

The collector is one per process: while any thread is in its first call, no thread's
cycles are collected (a trace that never ends, such as a hung thread, keeps it off).
"""

import _thread

gc = None     # the gc module, imported by the first pause (`import autograph` loads none)

_lock = _thread.allocate_lock()
_depth = 0
_was_enabled = False

PROMOTE_ABOVE = 20_000      # young objects at the block's exit: walked below, promoted above
FULL_AFTER = 1_000_000      # objects promoted unwalked between two full passes, at most
_promoted = 0               # promoted since the last full pass seen
_full_passes = -1           # gc.get_stats()[2]["collections"] when last looked


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
                _promote()
                gc.enable()
        return False


def _promote():
    """Move the young generation to the oldest unwalked when it is large (see above)."""
    global _promoted, _full_passes
    young = gc.get_count()[0]
    if young < PROMOTE_ABOVE or gc.get_freeze_count():
        return
    full = gc.get_stats()[2]["collections"]
    if full != _full_passes:            # a full pass ran since: what was promoted is seen
        _full_passes, _promoted = full, 0
    if _promoted + young > FULL_AFTER:
        gc.collect()                    # the promoted traces' garbage, in one full pass
        _full_passes, _promoted = gc.get_stats()[2]["collections"], 0
        return
    gc.freeze()
    gc.unfreeze()
    _promoted += young


_PAUSED = _Paused()


def paused():
    """A context manager: the cyclic garbage collector is off inside it (see above)."""
    return _PAUSED
