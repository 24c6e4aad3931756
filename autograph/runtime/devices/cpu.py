"""The cpu device: NumPy, the default. Moving to and from it is `np.asarray` (nearly free:
it is on the hot call path of every compiled function)."""

import numpy as np

from autograph.runtime.devices import Device


def names():
    return ["cpu"]


def name_of(array):
    return "cpu" if isinstance(array, (np.ndarray, np.generic)) else None


def _owns(array):
    # ndarray subclasses are NumPy's, unless they come from a library that has its own
    # device (a stand-in CuPy built on NumPy, say)
    if type(array) is np.ndarray or isinstance(array, np.generic):
        return True
    from autograph.runtime.devices import _ARRAY_MODULES
    return type(array).__module__.split(".", 1)[0] not in _ARRAY_MODULES


def create(name):
    return Device("cpu", np, np.asarray, np.asarray, None, array_types=(np.ndarray, np.generic),
                  owns_array=_owns, description=f"NumPy {np.__version__}")
