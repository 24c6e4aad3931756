"""Contiguous storage for a loop's stack of same-shaped arrays, reused from call to call.

A differentiated loop's forward pass pushes one value per iteration onto a stack
(stacks.py) that its backward pass reads back. Pushing references costs nothing per step,
but every step's array is a fresh allocation that lives until the backward pass is done:
an RNN's states (N = 1000, B = 32, H = 64, float64) are 16 MB of new memory per call.
glibc hands freed heap memory back to the system when the top of the heap is free, so the
next call touches those pages for the first time again: ~4,000 page faults per call (the
kernel zeroes each page), measured at 3,500 faults and ~17 ms of extra CPU time on
benchmark case 11's ~19 ms forward pass. Whether the heap is trimmed depends on what
else the process allocated, so the cost comes and goes with the allocator's state.

A stack whose capacity is known (the trip count was known before the loop started) and
whose first pushed value is a plain NumPy array of at least one dimension therefore
stores its values in one contiguous `(capacity, *shape)` buffer instead (`buffer_for`,
when that buffer is at least `MIN_BYTES` and at most `MAX_BYTES`): a push copies the
array into its row (cache-hot: it was just computed), a read returns a view of the row.
The buffer is handed back when its stack dies (`release`) and the next stack of the same
shape and dtype takes it again (`take`) — but only when nothing else refers to it any
more (no view of a row escaped: checked with the buffer's reference count when taken), so
a reused buffer is never visible to anyone. At most `POOL_BYTES` are kept (two buffers a
shape at most); `clear()` drops them.

A push that does not fit (another shape or dtype, a non-array, an index past the
capacity) turns the stack back into a list of references (its rows so far as views): a
loop whose values change shape still works. Values keep their dtype and shape; a row is a
writeable C-ordered array where the pushed value may have been a read-only broadcast,
which is harmless (nothing writes into a stack's values: exec/inplace_reads.py treats an
`ad_stack_get` as a view of something it does not own).
"""

import sys
import threading

import numpy as np

MIN_BYTES = 1 << 18         # smaller stacks live on the heap that the process keeps
MAX_BYTES = 1 << 30         # a loose trip bound (maximum_iterations) must not reserve more
POOL_BYTES = 1 << 28
_PER_SHAPE = 2

_lock = threading.RLock()     # (re-entrant: a collection inside `release` may end a stack)
_pool = {}                  # (shape, dtype str) -> [buffer]
_held = [0]                 # bytes in the pool
counts = {"new": 0, "reused": 0}   # buffers allocated / taken from the pool (tests count)


def buffer_for(capacity, value):
    """A `(capacity, *value.shape)` buffer for a stack whose first push is `value`, or
    None when the stack should keep references (too small, too large, not a plain array)."""
    if value.__class__ is not np.ndarray or not value.ndim or value.dtype.kind not in "biufc":
        return None
    nbytes = capacity * value.nbytes
    if nbytes < MIN_BYTES or nbytes > MAX_BYTES:
        return None
    return take((capacity,) + value.shape, value.dtype)


def take(shape, dtype):
    """A pooled buffer of this shape and dtype that nothing refers to, else a new one."""
    key = (shape, dtype.str)
    with _lock:
        free = _pool.get(key)
        while free:
            buf = free.pop()
            _held[0] -= buf.nbytes
            if sys.getrefcount(buf) == 2:      # (this name and the call's argument)
                counts["reused"] += 1
                return buf
    counts["new"] += 1
    return np.empty(shape, dtype)


def release(buf):
    """Keep `buf` (a dead stack's storage) for the next stack of its shape and dtype."""
    key = (buf.shape, buf.dtype.str)
    with _lock:
        free = _pool.setdefault(key, [])
        if len(free) < _PER_SHAPE and _held[0] + buf.nbytes <= POOL_BYTES:
            free.append(buf)
            _held[0] += buf.nbytes


def clear():
    """Drop every kept buffer (tests measuring a first call's memory; memory pressure)."""
    with _lock:
        _pool.clear()
        _held[0] = 0


def held_bytes():
    """The bytes the pool keeps now."""
    return _held[0]
