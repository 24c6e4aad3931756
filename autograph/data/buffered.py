"""The order of a buffered shuffle from its random draws, in O(n log n) NumPy operations.

The shuffle (autograph.data.shuffle) is the sequential process

    buf = [0, 1, ..., m-1]   (m = min(buffer_size, n)); nxt = m
    for k in range(n):
        r = int(u[k] * len(buf)); out[k] = buf[r]
        if nxt < n: buf[r] = nxt; nxt += 1          # fill phase: the buffer stays full
        else:       buf[r] = buf[-1]; buf.pop()     # drain phase: swap-remove

`permutation(u, buffer_size)` computes the same `out` without a Python loop over n:

- **Fill phase** (steps t < n - m, buffer of m slots): slot r_t holds the position put there
  by the last earlier step that drew the same slot, `m + t'`, or its first occupant `r_t`.
  "The previous step with the same slot" is a neighbour in a stable sort of the slots.
- **Drain phase** (steps s = 0..m-1, L = m - s slots, draw q_s < L): swap-remove is
  "swap slots q_s and L-1, emit slot L-1". Slot q_s at step s holds what the previous step
  that drew q_s moved there, namely what slot m-1-s' held at step s', or the slot's content
  when the drain began. Slot m-1-s can be drawn only by steps up to s (later ones draw
  q < m-1-s), so what it holds at step s comes from the last step before s that drew it:
  a chain of earlier steps, resolved by pointer doubling in O(log m) gathers.

Equality with the loop is tested draw for draw (tests/data/test_shuffle_order.py).
"""

import numpy as np


def _floor_mul(u, sizes):
    """int(u * size), elementwise, as the loop computes it (doubles, truncation)."""
    return (u * sizes).astype(np.int64)


def _groups(values):
    """Steps grouped by value, in step order within a group: (order, sorted values, same),
    same[i] telling whether sorted entry i has the value of entry i-1. One sort of the
    keys value * n + step (faster than a stable argsort)."""
    n = values.shape[0]
    keys = np.sort(values * np.int64(n) + np.arange(n, dtype=np.int64))
    order, sv = keys % n, keys // n
    same = np.empty(n, dtype=bool)
    if n:
        same[0] = False
        same[1:] = sv[1:] == sv[:-1]
    return order, sv, same


def _previous(order, same):
    """For each step, the previous step with the same value (-1 if none)."""
    prev = np.full(order.shape[0], -1, dtype=np.int64)
    prev[order[1:][same[1:]]] = order[:-1][same[1:]]
    return prev


def _last(order, sv, same, out):
    """out[v] = the last step whose value is v (entries of values no step has are kept)."""
    if order.size:
        is_last = np.ones(order.size, dtype=bool)
        is_last[:-1] = ~same[1:]
        out[sv[is_last]] = order[is_last]
    return out


def permutation(u, buffer_size):
    """The positions 0..n-1 in the order the buffered shuffle emits them, n = len(u)."""
    n = u.shape[0]
    m = min(max(int(buffer_size), 1), n)
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    fill = n - m

    # fill phase: m slots; slot r_t holds m + (previous step on r_t), or r_t
    r = _floor_mul(u[:fill], m)
    order, sv, same = _groups(r)
    prev = _previous(order, same)
    out[:fill] = np.where(prev >= 0, m + prev, r)
    # what each slot holds when draining starts: m + (last step on it), or its first occupant
    buf0 = _last(order, sv, same, np.arange(-m, 0, dtype=np.int64)) + m

    # drain phase: step s draws q_s among L = m - s slots and emits slot q_s (swap-remove)
    q = _floor_mul(u[fill:], np.arange(m, 0, -1, dtype=np.int64))
    order, sv, same = _groups(q)
    g = _previous(order, same)                    # previous step that drew the same slot
    last = _last(order, sv, same, np.full(m, -1, dtype=np.int64))
    s = np.arange(m, dtype=np.int64)
    f = last[m - 1 - s]                           # last step to draw slot m-1-s ...
    f = np.where(f == s, g, f)                    # ... before s (s itself drew it: the one before)
    # what slot m-1-s holds at step s: slot m-1-root's drain-start content, where root is
    # the end of the chain s -> f(s) -> f(f(s)) ... (f(t) < t)
    parent = np.where(f >= 0, f, s)
    while True:
        nxt = parent[parent]
        if np.array_equal(nxt, parent):
            break
        parent = nxt
    held = buf0[m - 1 - parent]
    out[fill:] = np.where(g >= 0, held[np.maximum(g, 0)], buf0[q])
    return out
