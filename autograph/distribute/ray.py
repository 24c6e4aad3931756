"""Run an `ag.function` over a `ray.data` Dataset in NumPy batch format: the saved graph
travels, never pickled code.

    import autograph as ag
    import autograph.ray

    @ag.function
    def features(batch):                       # a dict of column -> array, as Ray gives it
        x = batch["x"]
        return {"x": x, "y": np.where(x > 0, np.sqrt(np.abs(x)), 0.0)}

    out = autograph.ray.map_batches(features, ray.data.from_numpy(big))

`fn` is traced once from the dataset's columns (None for the batch axis); the bytes of
the saved graph go to Ray as the constructor argument of a small callable class of this
module, which each worker process loads once (cached by hash) with the safe loader.
A function returning one array (not a dict) gives a column named "out". Needs the
optional extra `ray` (`pip install -e '.[ray]'`).
"""

import numpy as np

from autograph import distribute


class BatchRunner:
    """Ray's per-worker callable: loads the packed function once, runs it per batch."""

    def __init__(self, payload):
        self.fn = distribute.loaded(payload)

    def __call__(self, batch):
        out = self.fn(dict(batch))
        if isinstance(out, dict):
            return {k: np.asarray(v) for k, v in out.items()}
        return {"out": np.asarray(out)}


def batch_specs(dataset):
    """{column: TensorSpec} for `dataset`'s NumPy batches, batch axis relaxed to None."""
    sample = dataset.take_batch(1, batch_format="numpy")
    return {k: distribute.relaxed_spec(np.asarray(v).shape, np.asarray(v).dtype, {0})
            for k, v in sample.items()}


def map_batches(fn, dataset, batch_size="default", concurrency=(1, 2), **kwargs):
    """`fn(batch)` on every NumPy batch of `dataset` (a ray.data.Dataset), returning a new
    Dataset, run by a pool of `concurrency` worker actors (Ray's `(min, max)` or a count).
    `kwargs` are Python values passed to `fn` when tracing."""
    concrete = distribute.concrete_for(fn, [batch_specs(dataset)], kwargs)
    payload = distribute.pack(concrete)
    return dataset.map_batches(BatchRunner, fn_constructor_args=(payload,),
                               batch_format="numpy", batch_size=batch_size,
                               concurrency=concurrency)
