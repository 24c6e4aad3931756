"""What the scale-out adapters (autograph.dask, autograph.ray) share: the job side packs a
traced function into saved-model bytes; the worker side loads those bytes with the safe
loader once per process and runs them.

Only bytes travel. The worker never sees the user's function, module or closure: the task
it runs is `run_packed` (a function of this module, importable wherever autograph is
installed) applied to the bytes and the data. Variables are snapshotted into the bytes
when the job is built; later assignments on the client do not reach a job already built.
"""

import hashlib
import threading

import numpy as np

_LOADED = {}                 # sha256 of the bytes -> the loaded function, per process
_LOCK = threading.Lock()
_COUNTS = {"loads": 0, "calls": 0}


def relaxed_spec(shape, dtype, relax):
    """A TensorSpec for blocks of one array: the axes in `relax` (where blocks differ in
    length) are None, so every block of the array runs the same trace."""
    from autograph.function.trace_type import TensorSpec
    return TensorSpec([None if axis in relax else int(d) for axis, d in enumerate(shape)],
                      np.dtype(dtype))


def concrete_for(fn, specs, kwargs=None):
    """The ConcreteFunction of ag.function (or plain function) `fn` for `specs`."""
    import autograph as ag
    from autograph.function.concrete import ConcreteFunction
    if isinstance(fn, ConcreteFunction):
        return fn
    if not hasattr(fn, "get_concrete_function"):
        fn = ag.function(fn)
    return fn.get_concrete_function(*specs, **(kwargs or {}))


def pack(concrete):
    """The saved-model bytes of one concrete function (Variables snapshotted now)."""
    from autograph.saved_model import to_bytes
    return to_bytes(concrete)


def output_specs(concrete):
    """[(dtype, shape)] of the concrete function's array results, in flat order."""
    from autograph.runtime.ir import nest
    from autograph.runtime.ir.tensor import Tensor
    outs = [t for t in nest.flatten(concrete.structured_outputs) if isinstance(t, Tensor)]
    return [(np.dtype(t.dtype), t.shape) for t in outs]


def loaded(payload):
    """The function in `payload`, loaded once per process (keyed by the bytes' hash)."""
    key = hashlib.sha256(payload).hexdigest()
    fn = _LOADED.get(key)
    if fn is None:
        with _LOCK:
            fn = _LOADED.get(key)
            if fn is None:
                from autograph.saved_model import from_bytes
                fn = from_bytes(payload)
                _LOADED[key] = fn
                _COUNTS["loads"] += 1
    return fn


def run_packed(payload, *arrays):
    """The worker task: run the packed function on NumPy arrays."""
    _COUNTS["calls"] += 1
    return loaded(payload)(*arrays)


def stats():
    """{'loads': functions loaded in this process, 'calls': blocks run} (for tests and
    for users checking that a job compiled once per worker, not once per chunk)."""
    return dict(_COUNTS)
