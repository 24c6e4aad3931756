"""A stand-in for CuPy, built on NumPy, with two pretend GPUs.

It has exactly the surface autograph's cuda device uses (`cupy.ndarray` with `.device.id`,
`asarray`, `asnumpy`, `cuda.Device(i)` as a context manager with `synchronize()`,
`cuda.runtime.getDeviceCount()` / `getDeviceProperties(i)`) and NumPy's functions as the
array namespace. Its arrays are a NumPy subclass tagged with the GPU they "live" on, so the
tests can check, without a GPU, that the cuda device file names devices, places inputs,
keeps results on the right GPU and refuses arrays of another GPU.
"""

import sys
import types

import numpy as np

GPUS = 2
_current = [0]     # the GPU that new arrays go to (`with cuda.Device(i):` changes it)
transfers = {"to_gpu": 0, "to_host": 0, "sync": 0}


def _check(args):
    """Like CuPy: computing on an array of another GPU than the current one is an error."""
    for a in args:
        if isinstance(a, (list, tuple)):
            _check(a)
        elif isinstance(a, ndarray) and a.gpu != _current[-1]:
            raise ValueError(f"The device where the array resides ({a.gpu}) is different "
                             f"from the current device ({_current[-1]}).")


class ndarray(np.ndarray):
    """A NumPy array that says which pretend GPU holds it. Results are made on the current
    GPU, from inputs that must all be there."""

    def __array_finalize__(self, obj):
        self.gpu = getattr(obj, "gpu", _current[-1])

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _check(inputs)
        plain = [x.view(np.ndarray) if isinstance(x, ndarray) else x for x in inputs]
        return _on_gpu(getattr(ufunc, method)(*plain, **kwargs))

    @property
    def device(self):
        return _Device(self.gpu)


ndarray.__module__ = "cupy"   # how autograph recognises a CuPy array before the device exists


class _Device:
    def __init__(self, index=None):
        self.id = _current[-1] if index is None else index

    def __enter__(self):
        _current.append(self.id)
        return self

    def __exit__(self, *exc):
        _current.pop()

    def synchronize(self):
        transfers["sync"] += 1


def _on_gpu(value):
    """A NumPy result as an array of the current pretend GPU (CuPy returns 0-d arrays
    where NumPy returns scalars)."""
    if isinstance(value, ndarray) and value.gpu == _current[-1]:
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        out = np.array(value).view(ndarray)
        out.gpu = _current[-1]
        return out
    if isinstance(value, tuple):
        return tuple(_on_gpu(v) for v in value)
    return value


def _wrap(fn):
    def on_gpu(*args, **kwargs):
        _check(args)
        return _on_gpu(fn(*args, **kwargs))
    on_gpu.__name__ = getattr(fn, "__name__", "fn")
    return on_gpu


def asarray(a, dtype=None):
    if isinstance(a, ndarray) and a.gpu == _current[-1] and dtype in (None, a.dtype):
        return a
    transfers["to_gpu"] += 1
    return _on_gpu(np.array(np.asarray(a).view(np.ndarray), dtype=dtype))


def asnumpy(a):
    transfers["to_host"] += 1
    return np.array(np.asarray(a).view(np.ndarray))


def make_module():
    """A fresh `cupy` module object (install it with sys.modules['cupy'] = make_module())."""
    mod = types.ModuleType("cupy")
    for name in dir(np):
        value = getattr(np, name)
        if name.startswith("_") or isinstance(value, (type, types.ModuleType)):
            setattr(mod, name, value)      # dtypes (cupy.float32 is numpy.float32), constants
        elif callable(value):
            setattr(mod, name, _wrap(value))
        else:
            setattr(mod, name, value)
    mod.__name__ = "cupy"
    mod.__version__ = "0.0-fake"
    mod.ndarray = ndarray
    mod.asarray = asarray
    mod.asnumpy = asnumpy
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: GPUS,
        getDeviceProperties=lambda i: {"name": f"Pretend GPU {i}".encode()})
    mod.cuda = types.SimpleNamespace(Device=_Device, runtime=runtime)
    return mod


def install(monkeypatch):
    """Make `import cupy` give the fake for the rest of a test."""
    mod = make_module()
    monkeypatch.setitem(sys.modules, "cupy", mod)
    for key in transfers:
        transfers[key] = 0
    return mod
