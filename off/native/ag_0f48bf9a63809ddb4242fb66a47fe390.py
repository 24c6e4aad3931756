import math
import numpy as np
from numba import njit




@njit(cache=True, error_model='numpy', boundscheck=True)
def native_smallest_factor(n):
    _loop_counter_, result, break_, __result__has_a_value_ = np.int64(np.int64(2)), np.int64(np.int64(0)), False, False
    while True:
        less = bool((_loop_counter_ < n))
        logical_not = bool((not break_))
        logical_and = bool((bool(less) and bool(logical_not)))
        if not logical_and:
            break
        remainder = np.int64(np.remainder(n, _loop_counter_))
        equal = bool((remainder == np.int64(0)))
        if equal:
            pass
            cond, cond_1, cond_2 = _loop_counter_, True, True
        else:
            pass
            cond, cond_1, cond_2 = result, break_, __result__has_a_value_
        add = np.int64((_loop_counter_ + np.int64(1)))
        _loop_counter_, result, break_, __result__has_a_value_ = add, cond, cond_1, cond_2
    logical_not_1 = bool((not break_))
    if logical_not_1:
        pass
        cond_3, cond_1_1 = n, True
    else:
        pass
        cond_3, cond_1_1 = result, __result__has_a_value_
    if not cond_1_1:
        raise UnboundLocalError("'result' is first assigned inside the `for` loop at /work/wt/lists/tests/converters/test_jump_bindings.py:19 (`for d in range(2, n):`), which ran zero times (or no iteration reached the assignment), so it has no value where it is read after the loop. Assign 'result' before the loop (e.g. result = 0, or an array of the right shape and dtype).")
    return cond_3
