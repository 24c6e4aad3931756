import math
import numpy as np
from numba import njit




@njit(cache=True, error_model='numpy', boundscheck=False)
def native_ret_cond(x):
    greater = bool((x > np.int64(0)))
    if greater:
        multiply = np.int64((x * np.int64(2)))
        cond = multiply
    else:
        pass
        cond = x
    return cond
