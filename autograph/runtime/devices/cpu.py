"""The cpu device: NumPy, the default. Moving to and from it is `np.asarray` (nearly free:
it is on the hot call path of every compiled function)."""

import numpy as np

from autograph.runtime.devices import Device


def names():
    return ["cpu"]


def name_of(array):
    return "cpu" if isinstance(array, (np.ndarray, np.generic)) else None


def create(name):
    return Device("cpu", np, np.asarray, np.asarray, None,
                  array_types=(np.ndarray, np.generic), description=f"NumPy {np.__version__}")
