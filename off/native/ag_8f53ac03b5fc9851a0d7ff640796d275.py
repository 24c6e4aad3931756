import math
import numpy as np
from numba import njit


@njit(cache=True)
def grow(a, i):
    b = np.empty((max(2 * a.shape[0], i + 1, 8),) + a.shape[1:], a.dtype)
    b[:a.shape[0]] = a
    return b

@njit(cache=True)
def ta_write(ta, i, v, dynamic):
    buf, written, n = ta
    if i < 0 or i >= n and not dynamic:
        raise IndexError("TensorArray index out of range for its size (create it with "
                         "a larger size, or with dynamic_size=True)")
    if i >= buf.shape[0]:
        buf = grow(buf, i)
        w = np.zeros(buf.shape[0], np.bool_)
        w[:written.shape[0]] = written
        written = w
    buf[i] = v
    written[i] = True
    return buf, written, max(n, i + 1)

@njit(cache=True)
def ta_stack(ta):
    buf, written, n = ta
    for i in range(n):
        if not written[i]:
            raise ValueError("TensorArray.stack(): an element was never written")
    return buf[:n].copy()


@njit(cache=True, error_model='numpy', boundscheck=False)
def fused(a0):
    if a0.shape != (2,):
        raise ValueError('jit_compile=True: a fused loop got an input of a shape other than (2,)')
    o0 = np.empty((2,), np.float64)
    for j in range(2):
        v0 = np.float64(np.sin(a0[j]))
        o0[j] = v0
    return o0

@njit(cache=True, error_model='numpy', boundscheck=False)
def fused_1(a0, a1):
    if a0.shape != (2,):
        raise ValueError('jit_compile=True: a fused loop got an input of a shape other than (2,)')
    o0 = np.empty((2,), np.float64)
    for j in range(2):
        v0 = np.float64((a0[j] * a1))
        o0[j] = v0
    return o0


@njit(cache=True, error_model='numpy', boundscheck=True)
def native_stacked(x, n):
    ta_new = (np.empty((max(int(np.int64(0)), 0),) + (2,), np.float64), np.zeros(max(int(np.int64(0)), 0), np.bool_), max(int(np.int64(0)), 0))
    _loop_counter_, rows = np.int64(np.int64(0)), ta_new
    while True:
        less = bool((_loop_counter_ < n))
        if not less:
            break
        sin = fused(x)
        astype = np.float64(_loop_counter_)
        multiply = fused_1(sin, astype)
        ta_size = np.int64(rows[2])
        ta_write_1 = ta_write(rows, int(ta_size), multiply, True)
        add = np.int64((_loop_counter_ + np.int64(1)))
        _loop_counter_, rows = add, ta_write_1
    ta_stack_1 = ta_stack(rows)
    return ta_stack_1
