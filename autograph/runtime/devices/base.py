"""The Device record and the errors of the device layer.

A Device is what executors need to run a graph somewhere: an array namespace to take kernels
from, moves to and from the host, a way to wait for queued work, and the namespace's dtype
objects. The registry (this package's __init__) makes and finds them; each built-in device
file builds one.
"""

import numpy as np

from autograph.errors import AutographError


class DeviceError(AutographError, ValueError):
    """An unknown device name, a device that cannot run here, or an array on the wrong device."""


class DeviceUnavailable(DeviceError):
    """A known device whose library or hardware is missing; the message says which."""


class UnsupportedPrimitiveError(DeviceError, NotImplementedError):
    """A primitive whose kernel the device's array namespace does not have."""


# -- the Device record ---------------------------------------------------------------------------

def _noop():
    pass


class Device:
    """One place arrays live and kernels run.

    `xp` is the array namespace kernels are looked up in. `to_device` takes a host value
    (NumPy array, NumPy or Python scalar) or one of this device's own arrays and returns a
    device array; `to_host` returns a `numpy.ndarray`. `array_types` are the array classes
    this device makes (used by `owns` and `device_of`); `owns_array`, if given, refines the
    test for libraries whose one array class spans several devices (torch, cupy).
    `kernels` maps primitive names to per-device implementations `fn(xp, *arrays, **attrs)`
    for primitives outside the array API standard. `activate`, when not None, is a context
    manager executors enter around a run (`with dev.activate: ...`).
    """

    def __init__(self, name, xp, to_device=None, to_host=None, synchronize=None, *,
                 array_types=(), owns_array=None, kernels=None, description="", activate=None):
        self.name = name
        # a re-enterable context manager that makes this device the library's current one
        # while a graph runs (CuPy allocates on its *current* GPU), or None when not needed
        self.activate = activate
        self.xp = xp
        self.to_device = to_device or (lambda a: xp.asarray(a))
        self.to_host = to_host or _default_to_host
        self.synchronize = synchronize or _noop
        self.array_types = tuple(array_types)
        self._owns_array = owns_array
        self.kernels = dict(kernels or {})
        self.description = description
        self._dtypes = {}
        self._resolved = {}  # (primitive, kernel) -> callable, so executors may ask per call

    def __repr__(self):
        return f"<Device {self.name!r} ({getattr(self.xp, '__name__', self.xp)})>"

    def owns(self, array):
        """True when `array` is an array of this device (not a host value to be moved)."""
        if not isinstance(array, self.array_types):
            return False
        return self._owns_array is None or self._owns_array(array)

    def dtype(self, np_dtype):
        """The namespace's dtype object for a NumPy dtype (np.int64 -> xp.int64)."""
        try:
            return self._dtypes[np_dtype]
        except (KeyError, TypeError):
            pass
        name = np.dtype(np_dtype).name
        # NumPy (and CuPy) take NumPy dtypes; other namespaces have their own dtype objects
        found = np.dtype(np_dtype) if self.xp is np else getattr(self.xp, name, None)
        if found is None:
            raise DeviceError(f"device {self.name!r} has no dtype {name!r} "
                              f"({getattr(self.xp, '__name__', self.xp)} does not define it); "
                              "cast to a dtype the array API standard defines, e.g. float64")
        try:
            self._dtypes[np_dtype] = found
        except TypeError:  # unhashable dtype-like
            pass
        return found

    def kernel(self, primitive, kernel):
        """The callable `fn(*arrays, **attrs)` that runs `primitive` (a name) on this device.

        `kernel` is the primitive table's entry: a name in the namespace or a function
        `kernel(xp, *arrays, **attrs)`. A per-device kernel registered for the primitive wins.
        Raises UnsupportedPrimitiveError, naming the primitive and the device, when the
        namespace lacks the function.
        """
        try:
            return self._resolved[primitive, kernel]
        except (KeyError, TypeError):
            pass
        fn = self._resolve(primitive, kernel)
        try:
            self._resolved[primitive, kernel] = fn
        except TypeError:  # an unhashable kernel: resolve it every time
            pass
        return fn

    def _resolve(self, primitive, kernel):
        xp = self.xp
        override = self.kernels.get(primitive)
        if override is not None:
            kernel = override
        if callable(kernel):
            def run(*arrays, **attrs):
                try:
                    return kernel(xp, *arrays, **attrs)
                except AttributeError as e:  # the kernel used a name the namespace lacks
                    if getattr(e, "obj", None) is xp:
                        raise self._unsupported(primitive, e.name) from None
                    raise
            return run
        fn = getattr(xp, kernel, None) if isinstance(kernel, str) else None
        if fn is None:
            raise self._unsupported(primitive, kernel)
        return fn

    def _unsupported(self, primitive, missing):
        return UnsupportedPrimitiveError(
            f"primitive {primitive!r} cannot run on device {self.name!r}: its array namespace "
            f"{getattr(self.xp, '__name__', self.xp)} has no {missing!r} (it is not in the array "
            "API standard). Run this function on the 'cpu' device, or give the device a kernel: "
            f"register_device(..., kernels={{{primitive!r}: fn}}) with fn(xp, *arrays, **attrs).")


def _default_to_host(array):
    return np.asarray(array)
