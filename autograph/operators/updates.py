"""Item updates: what `x[i] = v`, `x[i] += v` and `np.add.at(x, i, v)` become.

The converter (autograph.converters.item_updates) rewrites those statements into
assignments that rebind the name, `x = ag__.setitem(x, i, v)`, so that an update of a
tensor is a new value of the variable: it then works in branches and as loop state like
any other assignment.

On Python values (lists, dicts, NumPy arrays, any object with `__setitem__`) each operator
does exactly the original statement, in place, and returns the same object, so the
rebinding changes nothing and aliases see the update, as in the original program.

On a symbolic tensor (or an array whose update involves one: `c = np.zeros(k);
c[j] = tensor`) the update is functional (autograph.runtime.numpy.updates): the result is
a new tensor, and another name bound to the old value does not see it. The same happens
to a Python container or NumPy array made outside a staged `if`/loop and updated inside
it: both branches of a staged `if` run on the same objects while tracing, so an in-place
write in one would leak into the other; there the update works on a copy.
"""

import operator
import sys

import numpy as np

from autograph.operators import aliases, calls
from autograph.operators.aliases import AliasWarning  # noqa: F401 (its old home)
from autograph.runtime.ir.tensor import Tensor

# the in-place operator each augmented assignment calls, as Python's `x[i] += v` does
_INPLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
            "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
            "**=": operator.ipow, "@=": operator.imatmul, "&=": operator.iand,
            "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
            ">>=": operator.irshift}
_BINARY = {"+=": operator.add, "-=": operator.sub, "*=": operator.mul,
           "/=": operator.truediv, "//=": operator.floordiv, "%=": operator.mod,
           "**=": operator.pow, "@=": operator.matmul, "&=": operator.and_,
           "|=": operator.or_, "^=": operator.xor, "<<=": operator.lshift,
           ">>=": operator.rshift}


def _has_tensor(key):
    if isinstance(key, Tensor):
        return True
    if isinstance(key, (tuple, list)):
        return any(_has_tensor(k) for k in key)
    if isinstance(key, slice):
        return any(isinstance(b, Tensor) for b in (key.start, key.stop, key.step))
    return False


def _made_outside_staged(obj):
    """True when `obj` is reachable from a staged `if`/loop being traced, i.e. made before
    it: writing into it in place would be seen by the other branch or iteration."""
    return any(s.holds(obj) for s in calls._state.loops)


def _functional(target, key, value):
    """Whether the update must make a new value instead of writing in place."""
    if isinstance(target, Tensor):
        return True
    if isinstance(target, np.ndarray):
        return _has_tensor(key) or isinstance(value, Tensor) or (
            bool(calls._state.loops) and _made_outside_staged(target))
    return False


def _copy_if_shared(target):
    """A shallow copy of a Python container made outside the staged statement being
    traced (see the module doc), else the container itself."""
    if calls._state.loops and isinstance(target, (list, dict, bytearray)) and \
            _made_outside_staged(target):
        return target.copy()
    return target


def setitem(target, key, value, op=None):
    """`target[key] = value` (or `target[key] op= value` with `op` such as "+=") and the
    updated target: the same object when it is a Python value, a new tensor otherwise."""
    if type(target).__name__ == "TensorList":   # a list a staged loop or `if` changes
        return target.assigned(key, value, op)    # (operators/tensor_list.py)
    if _functional(target, key, value):
        from autograph.runtime.numpy import indexing, updates
        aliases.warn_if_shared(target, sys._getframe(1), "an item update")
        if op is not None:
            old = indexing.getitem(target, key)
            _check_inplace_cast(old, value, target, op)
            value = _BINARY[op](old, value)
        return updates.setitem(target, key, value)
    target = _copy_if_shared(target)
    if op is None:
        target[key] = value
    else:
        item = target[key]   # `l[0] += v` on a list of tensors: `l[1]` may hold it too
        aliases.warn_if_shared(item, sys._getframe(1), f"`{op}` on an item")
        target[key] = _INPLACE[op](item, value)
    return target


def _check_inplace_cast(old, value, target, op):
    """`x[1:3] += 1.5` on an integer array raises in NumPy (the in-place ufunc on the
    selected view casts 'same_kind'); only a single element (a NumPy scalar) is free."""
    if old.shape == ():
        return
    dtype = np.dtype(target.dtype)
    probe = value if not isinstance(value, (Tensor, np.ndarray)) else np.zeros((), value.dtype)
    try:
        _INPLACE[op](np.ones(1, dtype), probe)
    except TypeError as exc:
        raise TypeError(f"`x[...] {op} value` on {target!r}: {exc}") from None


def ufunc_at(uf, target, key, value=None):
    """`uf.at(target, key, value)` and the updated target (see setitem)."""
    if isinstance(uf, np.ufunc) and value is not None and (
            isinstance(target, Tensor) or _functional(target, key, value)):
        from autograph.runtime.numpy import updates
        return updates.ufunc_at(uf, target, key, value)
    if value is None:
        uf.at(target, key)
    else:
        uf.at(target, key, value)
    return target


def inplace_call(f, target, *args, **kwargs):
    """`f(target, *args)` for a NumPy function that writes into `target` (np.put,
    np.place, np.fill_diagonal, np.put_along_axis, np.copyto), and the updated target:
    the same array, changed in place, for NumPy values; a new tensor when `target` is a
    tensor or the update involves one (autograph.runtime.numpy.inplace_functions)."""
    if isinstance(target, Tensor) or (isinstance(target, np.ndarray) and (
            _has_tensor(list(args)) or any(isinstance(v, Tensor) for v in kwargs.values()) or
            (bool(calls._state.loops) and _made_outside_staged(target)))):
        from autograph.runtime.numpy.inplace_functions import INPLACE
        return INPLACE[f](target, *args, **kwargs)
    f(target, *args, **kwargs)
    return target


# -- updates through an attribute: `self.w[i] = v` --------------------------------------------

def setitem_attr(owner, attr, key, value, op=None):
    """`owner.attr[key] = value` (or `op=`): a Variable takes the updated value (assign);
    a tensor attribute is rebound to the updated tensor; a NumPy array that the update
    would fill with a tensor is refused (its write must persist across calls: state, which
    a Variable holds); any other value is updated in place, as written."""
    from autograph.runtime.variables import Variable
    target = getattr(owner, attr)
    if isinstance(target, Variable):
        target[key] = value if op is None else _BINARY[op](target[key], value)
        return
    if isinstance(target, Tensor):
        from autograph.runtime.numpy import indexing, updates
        if op is not None:
            value = _BINARY[op](indexing.getitem(target, key), value)
        setattr(owner, attr, updates.setitem(target, key, value))
        return
    if _functional(target, key, value) and isinstance(target, np.ndarray) and not (
            calls._state.loops and not (_has_tensor(key) or isinstance(value, Tensor))):
        from autograph.operators.location import where
        raise TypeError(
            f"`{attr}[...] {op or '='} ...`{where()}: {type(owner).__name__}.{attr} is a "
            "NumPy array held by an object, and this write puts a symbolic tensor into it. "
            "In NumPy the object's array changes for good (state across calls), which an "
            "array cannot hold while tracing. Hold it in an ag.Variable "
            f"(`self.{attr} = ag.Variable(array)`: then `self.{attr}[i] = v` assigns on "
            f"every call), or update a local copy (`w = self.{attr}.copy(); w[i] = v`).")
    if op is None:
        target[key] = value
    else:
        target[key] = _INPLACE[op](target[key], value)


