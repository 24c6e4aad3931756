"""The strict device: array-api-strict, the reference implementation of the Python array API
standard. Nothing runs faster on it; it exists to prove that the runtime takes every kernel
from the device's namespace: a NumPy-only function, a NumPy dtype or a NumPy array leaking
into a kernel fails loudly here, where on the cpu device it would silently work."""

import numpy as np

from autograph.runtime.devices import Device, DeviceUnavailable


def names():
    return ["strict"]


def name_of(array):
    return "strict"


def create(name):
    if name != "strict":
        raise DeviceUnavailable(f"array-api-strict has one device, 'strict' (not {name!r})")
    try:
        import array_api_strict as xp
    except ImportError:
        raise DeviceUnavailable(
            "array-api-strict not installed (pip install array-api-strict)") from None

    def to_device(a):
        return a if isinstance(a, xp_array) else xp.asarray(np.asarray(a))

    def to_host(a):
        # DLPack is the standard's interchange protocol (strict may drop __array__ one day)
        return np.from_dlpack(a) if isinstance(a, xp_array) else np.asarray(a)

    xp_array = type(xp.asarray(0))
    return Device("strict", xp, to_device, to_host, None, array_types=(xp_array,),
                  description=f"array-api-strict {xp.__version__} (array API "
                              f"{xp.__array_api_version__})")
