"""`list_devices()`: every device autograph knows, available or not, and why a missing one
is missing; and the hints an unknown device name gets. (Apart from the registry in this
package's __init__: a process that never lists devices or misspells one does without it.)
"""

from autograph.runtime.devices import (_BUILTINS, _DEVICES, _MISSING, DeviceUnavailable,
                                       _builtin_module, _load_entry_points, _lock, get_device)


# names other frameworks use for a GPU
_GPU_SPELLINGS = {"gpu", "/gpu:0", "gpu:0", "/device:gpu:0", "cupy"}


def did_you_mean(name):
    if name.lower() in _GPU_SPELLINGS:
        return " (a GPU is 'cuda' or 'cuda:N' here)"
    known = [row.name for row in list_devices()]
    import difflib
    close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def summary():
    infos = list_devices()
    available = ", ".join(i.name for i in infos if i.available) or "none"
    missing = "; ".join(f"{i.name}: {i.detail}" for i in infos if not i.available)
    text = f"available: {available}"
    if missing:
        text += f"; missing: {missing}"
    return text + ". Register another with ag.register_device(name, namespace, ...)."


# -- list_devices --------------------------------------------------------------------------------

class DeviceInfo:
    """One row of `list_devices()`: a device name, whether it can run here, and a detail:
    the library that runs it, or why it is missing ("CuPy not installed"). Immutable.
    (A plain class, not a dataclass: importing dataclasses costs more than this.)"""

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
