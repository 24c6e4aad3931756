"""Counts of transformations and the length of a dataset, by tf.data's rules.

tf.data gives negative and zero counts a meaning, and we follow it:

    take(n)    n < 0: every element          n = 0: none (the input is never read)
    skip(n)    n < 0: every element skipped  (the input is never read)
    zip        the shortest input; concatenate: the sum (infinite if one is)
    repeat(n)  n < 0 or None: forever, ending when a pass yields nothing; n = 0: empty
    batch(n), shuffle(n), shard(n, i)        n must be > 0, 0 <= i < n (ValueError)
    prefetch(n) n = -1 (AUTOTUNE): a size we pick; n = 0: no prefetch; n < -1: ValueError

A count is a Python or NumPy integer that fits int64 (what tf.data converts it to); anything
else is refused here, when the dataset is built, with the transformation's name.

`length(ds)` is the number of elements an iteration yields: an int, `INFINITE`, or None
when only iterating can tell (a filter, a generator). `Dataset.cardinality()` and `len()`
read it; tests check it against iteration for every combination of counts.
"""

import operator

import numpy as np

AUTOTUNE = -1                 # tf.data.AUTOTUNE
AUTOTUNE_PREFETCH = 2         # what prefetch(AUTOTUNE) keeps ready
INFINITE_CARDINALITY = -1     # tf.data.INFINITE_CARDINALITY
UNKNOWN_CARDINALITY = -2      # tf.data.UNKNOWN_CARDINALITY
INFINITE = float("inf")

_INT64 = np.iinfo(np.int64)


def integer(op, name, value):
    """`value` as a Python int, refused unless it is an integer that fits int64."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be an integer, got the bool {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu":
            n = int(value)
        else:
            raise TypeError(f"{op}: {name} must be an integer, got {type(value).__name__} "
                            f"{value!r}") from None
    if not _INT64.min <= n <= _INT64.max:
        raise ValueError(f"{op}: {name} = {n} does not fit int64")
    return n


def length(ds, bound=False):
    """The number of elements of one iteration over `ds` (int, INFINITE or None). With
    `bound`, an upper bound instead (a filter passes at most its input): what a graph's
    batch buffer needs at most."""
    k, a = ds._kind, ds._args
    if bound and k == "filter":
        return length(ds._ups[0], bound)
    if k == "slices":
        shape = ds._own[0].shape
        return None if shape is None else shape[0]
    if k == "tensors":
        return 1
    if k == "range":
        return len(range(*a[:3]))
    if k in ("gen", "filter"):
        return None
    if k in ("zip", "concatenate"):
        ns = [length(up, bound) for up in ds._ups]
        if k == "concatenate":
            return INFINITE if INFINITE in ns else None if None in ns else sum(ns)
        known = [n for n in ns if n is not None]
        if None in ns and not (bound and known):
            return None   # (tf.data: unknown when any input is; a bound: the least known)
        return min(known)
    if (k == "take" and a[0] == 0) or (k == "skip" and a[0] < 0) or \
            (k == "repeat" and a[0] == 0):
        return 0                      # empty whatever the input
    n = length(ds._ups[0], bound)
    if k == "take":
        return n if a[0] < 0 or n is None else min(n, a[0])
    if n is None or n == INFINITE:
        return n   # (repeat() of an unknown length stays unknown: a pass may be empty)
    if k == "skip":
        return max(n - a[0], 0)
    if k == "shard":
        return len(range(a[1], n, a[0]))
    if k == "batch":
        return n // a[0] if a[1] else -(-n // a[0])
    if k == "repeat":
        if a[0] is None:
            return 0 if n == 0 else INFINITE
        return n * a[0]
    return n                          # map, shuffle, prefetch, enumerate


def cardinality(n):
    """tf.data's encoding of a length: the count, INFINITE_CARDINALITY or UNKNOWN_CARDINALITY."""
    if n is None:
        return np.int64(UNKNOWN_CARDINALITY)
    if n == INFINITE:
        return np.int64(INFINITE_CARDINALITY)
    return np.int64(n)
