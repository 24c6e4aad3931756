"""Scale-out: adapters that run traced functions on existing engines, shipping the saved
format's bytes, never pickled code.

dask (`autograph.dask.map_blocks`, `grad_sum`) and ray (`autograph.ray.map_batches`) build
jobs; packed holds what they share: the job side packs a concrete function into saved-model
bytes, the worker side (`run_packed`, `loaded`, `stats`) loads them once per process with
the safe loader. Importing this package imports neither engine.
"""

from autograph.distribute.packed import (concrete_for, loaded, output_specs, pack,
                                         relaxed_spec, run_packed, stats)

__all__ = ["concrete_for", "loaded", "output_specs", "pack", "relaxed_spec", "run_packed",
           "stats"]
