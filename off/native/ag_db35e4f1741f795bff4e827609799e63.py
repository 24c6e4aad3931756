import math
import numpy as np
from numba import njit




@njit(cache=True, error_model='numpy', boundscheck=False)
def native_ret_while(n):
    i = np.int64(np.int64(0))
    while True:
        less = bool((i < n))
        if not less:
            break
        add = np.int64((i + np.int64(2)))
        i = add
    return i
