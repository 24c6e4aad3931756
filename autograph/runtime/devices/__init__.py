"""Devices: where a graph runs, and which array library runs it.

A device is a small record (`Device`): a name, an array namespace `xp` (the Python array API:
`numpy`, `cupy`, `array_api_compat.torch`, `array_api_strict`, ...), and the four functions
an executor needs: `to_device(array)`, `to_host(array) -> numpy.ndarray`, `synchronize()`,
and `dtype(np_dtype)` (the namespace's dtype object for a NumPy dtype). Executors take every
kernel from `device.xp`, so one primitive table serves all devices.

This module is the registry:
- `get_device(name=None)`: a Device by name ("cpu", "cuda", "cuda:1", "torch", "torch:cuda",
  "strict", or a registered one); None means the default device: the innermost
  `with device(...)` scope's, else "cpu".
- `device(name)`: a context manager that makes a device the default for the code inside it.
- `register_device(name, namespace, ...)`: add a device (also done by packages through the
  `autograph.devices` entry-point group, loaded lazily on the first unknown name).
- `list_devices()`: every known device, available or not, and why a missing one is missing.
- `current_device()`, `device_of(array)`: for placement by `autograph.function`.

Built-in devices live one per file (cpu.py, cuda.py, torch.py, strict.py); each exports
`create(name) -> Device` (raising `DeviceUnavailable(reason)` when its library or hardware is
missing), `names()` (the names `list_devices` shows) and `name_of(array)` (which of its
devices holds an array). The Device record and the errors are here too (one module: every
process needs them); `list_devices` and its rows live in listing.py, loaded when asked.
"""

import contextlib
import importlib
import _thread

import numpy as np

from autograph.config import _busy as BUSY
from autograph.errors import AutographError


# -- the Device record and the errors of the device layer --------------------------------------
#
# A Device is what executors need to run a graph somewhere: an array namespace to take kernels
# from, moves to and from the host, a way to wait for queued work, and the namespace's dtype
# objects. The registry below makes and finds them; each built-in device file builds one.

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


def __getattr__(name):
    """`list_devices` and its rows live in .listing (imported on first use)."""
    if name in ("list_devices", "DeviceInfo", "DeviceList"):
        from autograph.runtime.devices import listing
        return getattr(listing, name)
    raise AttributeError(f"module 'autograph.runtime.devices' has no attribute {name!r}")


# -- the registry --------------------------------------------------------------------------------

# name -> Device, for devices created or registered so far ("cuda" and "cuda:0" may share one)
_DEVICES = {}
# name -> reason, for devices known to be missing
_MISSING = {}
# base name (before ':') -> module path of a built-in device file
_BUILTINS = {
    "cpu": "autograph.runtime.devices.cpu",
    "cuda": "autograph.runtime.devices.cuda",
    "torch": "autograph.runtime.devices.torch",
    "strict": "autograph.runtime.devices.strict",
}
# top-level module of an array class -> built-in device base name, for device_of on a
# device that has not been created yet
_ARRAY_MODULES = {"cupy": "cuda", "torch": "torch", "array_api_strict": "strict"}

_lock = _thread.RLock()
_entry_points_loaded = False


def _builtin_module(base):
    return importlib.import_module(_BUILTINS[base])


def _create_builtin(name):
    base = name.split(":", 1)[0]
    if base not in _BUILTINS:
        return None
    if name in _MISSING:
        raise DeviceUnavailable(f"device {name!r} is not available: {_MISSING[name]}")
    try:
        dev = _builtin_module(base).create(name)
    except DeviceUnavailable as e:
        _MISSING[name] = str(e)
        raise DeviceUnavailable(f"device {name!r} is not available: {e}") from None
    dev = _DEVICES.setdefault(dev.name, dev)  # "cuda:0" after "cuda": one device, two names
    _DEVICES[name] = dev
    return dev


def get_device(name=None):
    """The Device called `name`; None means the default (scope's, else "cpu").

    Accepts a Device (returned as is). Unknown names and devices whose library or hardware
    is missing raise DeviceError / DeviceUnavailable with a message listing what exists.
    """
    if name is None:
        scoped = current_device()
        if scoped is not None:
            return scoped
        name = "cpu"
    elif isinstance(name, Device):
        return name
    try:
        return _DEVICES[name]
    except (KeyError, TypeError):
        pass
    if not isinstance(name, str):
        raise DeviceError(f"a device is named by a string such as 'cpu' or 'cuda:0', "
                          f"not {type(name).__name__} {name!r}")
    with _lock:
        if name in _DEVICES:
            return _DEVICES[name]
        dev = _create_builtin(name)
        if dev is not None:
            return dev
        _load_entry_points()
        if name in _DEVICES:
            return _DEVICES[name]
        if name in _MISSING:  # a plug-in that failed to load
            raise DeviceUnavailable(f"device {name!r} is not available: {_MISSING[name]}")
        from autograph.runtime.devices import listing
        raise DeviceError(f"unknown device {name!r}{listing.did_you_mean(name)}; "
                          f"{listing.summary()}")


def register_device(name, namespace, to_device=None, to_host=None, synchronize=None, *,
                    array_types=None, owns_array=None, kernels=None, description="",
                    activate=None):
    """Add a device called `name` whose kernels come from the array namespace `namespace`.

    `to_device(array)` moves a host (NumPy) value onto the device (default:
    `namespace.asarray`); `to_host(array)` returns a numpy.ndarray (default: `np.asarray`);
    `synchronize()` waits for queued work (default: nothing to wait for). `array_types`: the
    classes of the device's arrays (default: the type of `namespace.asarray(0)`).
    `kernels`: {primitive name: fn(xp, *arrays, **attrs)} for primitives the namespace lacks.
    `activate`: a context manager entered around each run (see Device).
    Returns the Device; registering a taken name replaces the old device.
    """
    if not isinstance(name, str) or not name:
        raise DeviceError(f"a device name must be a non-empty string, not {name!r}")
    if array_types is None:
        array_types = (type(namespace.asarray(0)),)
    elif isinstance(array_types, type):
        array_types = (array_types,)
    dev = Device(name, namespace, to_device, to_host, synchronize, array_types=array_types,
                 owns_array=owns_array, kernels=kernels, description=description,
                 activate=activate)
    with _lock:
        _DEVICES[name] = dev
        _MISSING.pop(name, None)
        _by_type.clear()
    return dev


def unregister_device(name):
    """Remove a registered device (tests use this to clean up)."""
    with _lock:
        dev = _DEVICES.pop(name, None)
        for alias in [k for k, v in _DEVICES.items() if v is dev]:
            del _DEVICES[alias]
        _by_type.clear()


def _load_entry_points():
    """Run every `autograph.devices` entry point once: each loads a callable that registers
    a device (or returns a Device, or a list of them, which we register)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points
    for ep in entry_points(group="autograph.devices"):
        try:
            result = ep.load()()
        except Exception as e:  # a broken plug-in must not break autograph
            _MISSING[ep.name] = f"entry point {ep.value} failed: {type(e).__name__}: {e}"
            continue
        for dev in result if isinstance(result, (list, tuple)) else [result]:
            if isinstance(dev, Device):
                _DEVICES.setdefault(dev.name, dev)
                _by_type.clear()


# -- scopes and placement ------------------------------------------------------------------------

class _Scopes(_thread._local):
    """Per-thread stack of `with device(...)` scopes. Always has `stack` (a missing
    thread-local attribute is slow to look up, and this is on every call's path)."""

    def __init__(self):
        self.stack = []


_scope = _Scopes()


def current_device():
    """The Device of the innermost `with device(...)` scope, or None outside any scope."""
    stack = _scope.stack
    return stack[-1] if stack else None


@contextlib.contextmanager
def device(name):
    """Run (and trace) the code inside on device `name`: `with ag.device("cuda"): f(x)`.
    The name is checked on entry, so a typo fails here rather than at the first call."""
    dev = get_device(name)
    stack = _scope.stack
    stack.append(dev)
    BUSY.append(None)   # the call fast paths look here first (autograph.config._busy)
    try:
        if dev.activate is None:
            yield dev
        else:
            with dev.activate:  # e.g. CuPy's current GPU is this one inside the scope
                yield dev
    finally:
        BUSY.pop()
        stack.pop()


# array class -> list of candidate devices (cleared when devices are registered)
_by_type = {}


def device_of(array):
    """The Device an array lives on, or None for values with no device (Python scalars,
    lists, symbolic tensors). NumPy arrays and scalars -> cpu. Cheap: one type check on
    the hot path."""
    t = type(array)
    if t is np.ndarray or isinstance(array, np.generic):
        return _cpu()
    candidates = _by_type.get(t)
    if candidates is None:
        candidates = _candidates(t)
    for dev in candidates:
        if dev.owns(array):
            return dev
    # a device whose array class spans many devices (torch:cuda:3) may not exist yet
    base = _ARRAY_MODULES.get(t.__module__.split(".", 1)[0])
    if base is not None:
        name = _builtin_module(base).name_of(array)
        if name is not None:
            dev = get_device(name)
            _by_type.pop(t, None)
            return dev
    return None


def _cpu():
    dev = _DEVICES.get("cpu")
    return dev if dev is not None else get_device("cpu")


def _candidates(t):
    _cpu()  # always a candidate for ndarray subclasses
    with _lock:
        found = [d for d in dict.fromkeys(_DEVICES.values()) if issubclass(t, d.array_types)]
        # the most specific class first: a device whose arrays subclass ndarray is not cpu
        found.sort(key=lambda d: min(t.__mro__.index(c) for c in d.array_types
                                     if issubclass(t, c)))
        _by_type[t] = found
        return found


def place(array, dev, what="an argument"):
    """`array` on device `dev`: host values are moved, the device's own arrays pass, and an
    array of another device is an error naming both devices (`what` names the argument)."""
    if dev.owns(array):
        return array
    other = device_of(array)
    if other is not None and other is not dev and other.name != "cpu":
        raise DeviceError(
            f"{what} is an array on device {other.name!r}, but the function runs on "
            f"{dev.name!r}. Move it to the host first (e.g. with "
            f"autograph.runtime.devices.get_device({other.name!r}).to_host(x)), "
            "or run the function "
            f"on {other.name!r} (ag.function(..., device={other.name!r}) or "
            f"`with ag.device({other.name!r}):`).")
    return dev.to_device(array)
