"""`and`, `or`, `not` as functions: Python's meaning on Python values, lazy on tensors.

Converted code keeps the first operand as it is and wraps the others in lambdas:
`a and b and c` becomes `ag__.and_(a, lambda: b, lambda: c)`. On Python values this is
exactly Python's short-circuit (the first falsy operand, or the last one). When an operand is
a tensor, the rest are evaluated under a staged `cond`, so `i < n and x[i] > 0` never reads
x[i] at run time when i >= n.
"""

import numpy as np

from autograph.runtime.ir.tensor import is_tensor


def _cond(pred, true_fn, false_fn, op):
    from autograph import errors
    from autograph.operators.location import where
    from autograph.runtime import control_flow
    try:
        return control_flow.cond(pred, true_fn, false_fn, names=[f"the value of `{op}`"])
    except errors.StagingError as exc:
        raise errors.StagingError(
            f"`{op}`{where()} gives its first operand on one path and a later one on the "
            f"other, as Python does, but here they differ in kind ({exc}). A graph value has "
            f"one dtype and structure: make the operands agree (e.g. with .astype), or "
            f"compare them explicitly (`x != 0 {op} y > 0`) to get a boolean.") from None


def and_(first, *rest, truth=False):
    """`first and rest[0]() and rest[1]() ...` (`truth`: only its truth is used, e.g. as an
    `if` test, so tensor operands may be taken as booleans)."""
    value = first
    for i, fn in enumerate(rest):
        if is_tensor(value):
            return _tensor_and(value, rest[i:], truth)
        if not value:
            return value
        value = fn()
    return value


def or_(first, *rest, truth=False):
    """`first or rest[0]() or rest[1]() ...`"""
    value = first
    for i, fn in enumerate(rest):
        if is_tensor(value):
            return _tensor_or(value, rest[i:], truth)
        if value:
            return value
        value = fn()
    return value


def _as_bool(x):
    return np.asarray(x, dtype=bool) if not is_tensor(x) else (x if x.dtype == np.bool_ else x != 0)


def _rest(value, result, truth):
    """The value of the remaining operands, as Python gives it: the operand itself. Only
    after a bool tensor (or where only truth matters) is it made a bool too, so the staged
    cond's branches agree."""
    if truth or value.dtype == np.bool_:
        return _as_bool(result)
    return result


def _tensor_and(value, fns, truth=False):
    # like Python: the first falsy operand, else the last one (on bools: logical and)
    first = _as_bool(value) if truth else value
    return _cond(_as_bool(value), lambda: _rest(value, and_(fns[0](), *fns[1:], truth=truth), truth),
                 lambda: first, "and")


def _tensor_or(value, fns, truth=False):
    # like Python: the first truthy operand, else the last one (on bools: logical or)
    first = _as_bool(value) if truth else value
    return _cond(_as_bool(value), lambda: first,
                 lambda: _rest(value, or_(fns[0](), *fns[1:], truth=truth), truth), "or")


def not_(x):
    """`not x`: np.logical_not on tensors, Python's `not` otherwise."""
    if is_tensor(x):
        return np.logical_not(x)
    return not x


def in_(x, container):
    """`x in container`. An array container (a tensor while tracing) means what NumPy's
    `in` means, any element equal to `x`, staged as np.any(container == x) since Python's
    `in` would call bool() on it; anything else is Python's own `in`."""
    if is_tensor(container):
        return np.any(container == x)
    if (is_tensor(x) and x.shape == () and isinstance(container, (list, tuple))
            and all(isinstance(e, (bool, int, float, np.generic)) or is_tensor(e)
                    for e in container)):
        # a scalar tensor in a list of numbers: Python compares it with each element
        found = np.bool_(False)
        for e in container:
            found = np.logical_or(found, x == e)
        return found
    return x in container


def python_operand(value, op):
    """An operand of an `and`/`or`/conditional expression that stays Python's own, since a
    later part assigns a name (`a and (x := f())`): it must be a Python value."""
    if is_tensor(value):
        from autograph import errors
        from autograph.operators.location import where
        raise errors.StagingError(
            f"This `{op}`{where()} assigns a name with `:=` in a part evaluated after a "
            f"tensor, so it stays Python's own `{op}`, which cannot decide on a tensor. "
            f"Assign the name with `=` in a statement before it, then combine the values.")
    return value
