"""`and`, `or`, `not` as functions: Python's meaning on Python values, lazy on tensors.

Converted code keeps the first operand as it is and wraps the others in lambdas:
`a and b and c` becomes `ag__.and_(a, lambda: b, lambda: c)`. On Python values this is
exactly Python's short-circuit (the first falsy operand, or the last one). When an operand is
a tensor, the rest are evaluated under a staged `cond`, so `i < n and x[i] > 0` never reads
x[i] at run time when i >= n.
"""

import numpy as np

from autograph.runtime.tensor import is_tensor


def _cond(pred, true_fn, false_fn):
    from autograph.runtime import control_flow
    return control_flow.cond(pred, true_fn, false_fn)


def and_(first, *rest):
    """`first and rest[0]() and rest[1]() ...`"""
    value = first
    for i, fn in enumerate(rest):
        if is_tensor(value):
            return _tensor_and(value, rest[i:])
        if not value:
            return value
        value = fn()
    return value


def or_(first, *rest):
    """`first or rest[0]() or rest[1]() ...`"""
    value = first
    for i, fn in enumerate(rest):
        if is_tensor(value):
            return _tensor_or(value, rest[i:])
        if value:
            return value
        value = fn()
    return value


def _as_bool(x):
    return np.asarray(x, dtype=bool) if not is_tensor(x) else (x if x.dtype == np.bool_ else x != 0)


def _rest(value, result):
    """The value of the remaining operands, as Python gives it: the operand itself. Only
    after a bool tensor is it made a bool too, so the staged cond's branches agree."""
    if value.dtype == np.bool_:
        return _as_bool(result)
    return result


def _tensor_and(value, fns):
    # like Python: the first falsy operand, else the last one (on bools: logical and)
    return _cond(_as_bool(value), lambda: _rest(value, and_(fns[0](), *fns[1:])), lambda: value)


def _tensor_or(value, fns):
    # like Python: the first truthy operand, else the last one (on bools: logical or)
    return _cond(_as_bool(value), lambda: value, lambda: _rest(value, or_(fns[0](), *fns[1:])))


def not_(x):
    """`not x`: np.logical_not on tensors, Python's `not` otherwise."""
    if is_tensor(x):
        return np.logical_not(x)
    return not x
