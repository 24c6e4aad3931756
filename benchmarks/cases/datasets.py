"""Cases 8, 8b and 9: datasets (issue 15).

8: a whole SGD training epoch over an array-backed `ag.data.Dataset` (shuffled, batched)
inside one ag.function, against a hand-written NumPy loop over the same batches in the same
order (the permutation comes from the same shuffle routine, computed by both every epoch,
each call a new epoch: the dataset reshuffles on each iteration);
8b: the same without shuffle, so that the loop's own per-batch cost shows. 9: a generator that takes
1 ms per element feeding a 1 ms step, without prefetch (`numpy_eager`) and with `prefetch(2)` (`autograph`): the
background thread overlaps the two, so an epoch should take about half the time."""

import functools
import time

import numpy as np

from benchmarks.cases._common import autograph
from benchmarks.harness import Case, Contender, Goal


def train(dataset, w):
    for xb, yb in dataset:
        err = xb @ w - yb
        w = w - 0.01 * (xb.T @ err) / len(xb)
    return w


def _data(quick):
    n, d = (4096, 16) if quick else (65536, 32)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d))
    return x, x @ rng.standard_normal(d), np.zeros(d)


def build_training(quick):
    ag = autograph()
    from autograph.data.shuffle import shuffle_order
    x, y, w0 = _data(quick)
    batch = 256

    def make():   # each contender its own dataset: its k-th call is the dataset's k-th epoch
        return ag.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x), seed=1).batch(batch)
    calls = iter(range(1 << 62))

    def hand():   # a new permutation each call, as the dataset reshuffles each iteration
        w = w0
        order = shuffle_order(len(x), len(x), 1, 0, next(calls))
        for lo in range(0, len(x), batch):
            idx = order[lo:lo + batch]
            xb, yb = x[idx], y[idx]
            err = xb @ w - yb
            w = w - 0.01 * (xb.T @ err) / len(xb)
        return w

    contenders = [
        Contender("numpy_eager", lambda: functools.partial(train, make(), w0)),
        Contender("numpy_hand", lambda: hand),
        Contender("autograph", lambda: functools.partial(ag.function(train), make(), w0)),
    ]
    return {"n": len(x), "batch": batch}, contenders


def build_batches(quick):
    """The same epoch without shuffle: the loop's own cost, no permutation on either side."""
    ag = autograph()
    x, y, w0 = _data(quick)
    batch = 256
    ds = ag.data.Dataset.from_tensor_slices((x, y)).batch(batch)

    def hand():
        w = w0
        for lo in range(0, len(x), batch):
            xb, yb = x[lo:lo + batch], y[lo:lo + batch]
            err = xb @ w - yb
            w = w - 0.01 * (xb.T @ err) / xb.shape[0]
        return w

    contenders = [
        Contender("numpy_eager", lambda: functools.partial(train, ds, w0)),
        Contender("numpy_hand", lambda: hand),
        Contender("autograph", lambda: functools.partial(ag.function(train), ds, w0)),
    ]
    return {"n": len(x), "batch": batch}, contenders


def _slow_source(n):
    def gen():
        for i in range(n):
            time.sleep(0.001)
            yield np.float64(i)
    return gen


def _epoch(ds):
    s = 0.0
    for x in ds:
        time.sleep(0.001)          # the training step
        s += float(x)
    return s


def build_prefetch(quick):
    ag = autograph()
    n = 30 if quick else 200
    spec = ag.TensorSpec((), np.float64)
    plain = ag.data.Dataset.from_generator(_slow_source(n), output_signature=spec)
    return {"n": n}, [
        Contender("numpy_eager", lambda: functools.partial(_epoch, plain)),
        # autograph: the same epoch over ag.data's prefetch(2) (its background thread)
        Contender("autograph", lambda: functools.partial(_epoch, plain.prefetch(2))),
    ]


def normalise_epoch(dataset, acc):
    for xb in dataset:
        acc = acc + xb.sum(axis=0)
    return acc


def build_map_batch(quick):
    """Issue 30: 60,000x784 float32, shuffle -> map(normalise) -> batch(128), as written
    (map before batch), one epoch per call in one ag.function, against a NumPy loop that
    normalises each gathered batch. `autograph_per_element` is the same function traced
    with autograph.data.batching switched off: the map runs once per element, as before."""
    ag = autograph()
    from autograph.data import batching
    from autograph.data.shuffle import shuffle_order
    n, d = (4096, 784) if quick else (60000, 784)
    rng = np.random.default_rng(0)
    x = rng.random((n, d), dtype=np.float32) * 255
    lo, span = x.min(0), x.max(0) - x.min(0) + 1   # (positive results: the sums check well)
    batch = 128

    def normalise(v):
        return (v - lo) / span

    def make():
        return ag.data.Dataset.from_tensor_slices(x).shuffle(n, seed=1).map(normalise) \
            .batch(batch)
    acc0 = np.zeros(d, np.float32)
    calls = iter(range(1 << 62))

    def hand():
        acc = acc0
        order = shuffle_order(n, n, 1, 0, next(calls))
        for i in range(0, n, batch):
            xb = (x[order[i:i + batch]] - lo) / span
            acc = acc + xb.sum(axis=0)
        return acc

    def per_element():
        fn = functools.partial(ag.function(normalise_epoch), make(), acc0)
        batching.enabled = False
        try:
            fn()   # traced now, per element (the switch is read when tracing)
        finally:
            batching.enabled = True
        return fn

    def batched():
        fn = functools.partial(ag.function(normalise_epoch), make(), acc0)
        fn()
        return fn

    contenders = [
        Contender("numpy_eager", lambda: functools.partial(normalise_epoch, make(), acc0)),
        Contender("numpy_hand", lambda: hand),
        Contender("autograph", batched),
        Contender("autograph_per_element", per_element),
    ]
    return {"n": n, "d": d, "batch": batch}, contenders


CASES = [
    Case("8_dataset_training", "SGD epoch over a shuffled, batched array Dataset in one ag.function",
         build_training, rtol=1e-9,
         goals=[Goal("within 1.2x of a NumPy loop over the same batches", "autograph",
                     "numpy_hand", max_ratio=1.2)]),
    Case("8b_dataset_batches", "the same SGD epoch over unshuffled batches (the loop's own cost)",
         build_batches, rtol=1e-9,
         goals=[Goal("within 1.2x of a NumPy loop over the same batches", "autograph",
                     "numpy_hand", max_ratio=1.2)]),
    Case("8c_dataset_map_batch", "shuffle -> map(normalise) -> batch(128) epoch, 60,000x784 f32",
         build_map_batch, rtol=1e-4,
         goals=[Goal("[30.2] as written (map before batch) <= 1.3x the NumPy loop", "autograph",
                     "numpy_hand", max_ratio=1.3)]),
    Case("9_dataset_prefetch", "1 ms/element generator + 1 ms step: prefetch(2) vs none",
         build_prefetch, floor="numpy_eager",
         goals=[Goal("epoch with prefetch(2) <= 0.6x the time without", "autograph",
                     "numpy_eager", max_ratio=0.6, judged_on="wall")]),
]
