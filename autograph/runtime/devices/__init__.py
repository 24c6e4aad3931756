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
devices holds an array). The Device record and the errors live in base.py.
"""

import contextlib
import importlib
import _thread

import numpy as np

from autograph.config import _busy as BUSY

from autograph.runtime.devices.base import (  # noqa: F401  (re-exported)
    Device, DeviceError, DeviceUnavailable, UnsupportedPrimitiveError)


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
        raise DeviceError(f"unknown device {name!r}{_did_you_mean(name)}; {_summary()}")


# names other frameworks use for a GPU
_GPU_SPELLINGS = {"gpu", "/gpu:0", "gpu:0", "/device:gpu:0", "cupy"}


def _did_you_mean(name):
    if name.lower() in _GPU_SPELLINGS:
        return " (a GPU is 'cuda' or 'cuda:N' here)"
    known = [row.name for row in list_devices()]
    import difflib
    close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _summary():
    infos = list_devices()
    available = ", ".join(i.name for i in infos if i.available) or "none"
    missing = "; ".join(f"{i.name}: {i.detail}" for i in infos if not i.available)
    text = f"available: {available}"
    if missing:
        text += f"; missing: {missing}"
    return text + ". Register another with ag.register_device(name, namespace, ...)."


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


# -- list_devices --------------------------------------------------------------------------------

class DeviceInfo:
    """One row of `list_devices()`: a device name, whether it can run here, and a detail:
    the library that runs it, or why it is missing ("CuPy not installed"). Immutable.
    (A plain class, not a dataclass: this module loads with `import autograph`.)"""

    __slots__ = ("name", "available", "detail")

    def __init__(self, name, available, detail):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "available", available)
        object.__setattr__(self, "detail", detail)

    def __setattr__(self, name, value):
        raise AttributeError("DeviceInfo is immutable")

    def __eq__(self, other):
        return type(other) is DeviceInfo and (self.name, self.available, self.detail) == \
            (other.name, other.available, other.detail)

    def __hash__(self):
        return hash((self.name, self.available, self.detail))

    def __repr__(self):
        return f"DeviceInfo(name={self.name!r}, available={self.available!r}, detail={self.detail!r})"

    def __str__(self):
        return f"{self.name}: {self.detail}" if self.available else \
            f"{self.name}: missing, {self.detail}"


class DeviceList(list):
    """A list of DeviceInfo that prints as one line per device."""

    def __str__(self):
        return "\n".join(str(i) for i in self)

    __repr__ = __str__

    @property
    def names(self):
        """Names of the available devices."""
        return [i.name for i in self if i.available]


def list_devices():
    """Every device autograph knows: built-ins (probed now), registered and plug-in devices.
    Missing ones say why, e.g. `cuda: missing (CuPy not installed)`."""
    with _lock:
        _load_entry_points()
        rows, seen = [], set()

        def add(name, dev=None, reason=None):
            if name in seen:
                return
            seen.add(name)
            if dev is not None:
                seen.add(dev.name)
                rows.append(DeviceInfo(name, True, dev.description or
                                       getattr(dev.xp, "__name__", str(dev.xp))))
            else:
                rows.append(DeviceInfo(name, False, reason))

        for base in _BUILTINS:
            for name in _builtin_module(base).names():
                try:
                    add(name, get_device(name))
                except DeviceUnavailable:
                    add(name, reason=_MISSING.get(name, "unavailable"))
        for name, dev in list(_DEVICES.items()):
            if dev.name == name:
                add(name, dev)
        for name, reason in _MISSING.items():
            if name.split(":", 1)[0] not in _BUILTINS:
                add(name, reason=reason)
        return DeviceList(rows)


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
