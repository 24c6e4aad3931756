import math
import numpy as np
from numba import njit




@njit(cache=True, error_model='numpy', boundscheck=False)
def native_ret_float(x):
    _loop_counter_, y = np.int64(np.int64(0)), np.float64(np.float64(0.0))
    while True:
        less = bool((_loop_counter_ < np.int64(3)))
        if not less:
            break
        add = np.float64((y + x))
        add_1 = np.int64((_loop_counter_ + np.int64(1)))
        _loop_counter_, y = add_1, add
    greater = bool((x > np.float64(1.0)))
    if greater:
        pass
        cond = y
    else:
        subtract = np.float64((x - np.float64(1.0)))
        cond = subtract
    return cond
