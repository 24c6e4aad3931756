"""Python lists appended to in loops the graph runs (issue 31): `TensorList`.

The lists pass rewrites `l.append(v)` in a loop body to `l = ag__.list_append(l, v)`.
On a Python list that the statement being traced did not make, inside a loop or `if` the
graph runs, appending in place would happen once, while tracing. `list_append` then returns
a `TensorList` instead: a list of tensors that the graph carries, built on the TensorArray
(autograph.runtime.tensor_array), with the list's elements first. The loop operators see the
list come back as a TensorList from a first trace of the body and start the loop with the
list converted (`as_loop_value`), so the list is an ordinary loop variable.

A TensorList is used after the loop like the list: `len(l)` (a tensor), `l[i]`, `if l`,
`for v in l` (control_flow: over the stacked elements), `np.stack(l)`, `np.array(l)`, `np.asarray(l)` (all elements stacked), `np.concatenate(l)`.
The graph gives it back to the caller as a Python list of arrays. Each append stores one
element into the run-time list in place: n appends cost O(n) in all, and `np.stack` copies
the elements once. Gradients flow through it as through the TensorArray.
"""

import numpy as np

from autograph import errors
from autograph.operators import calls
from autograph.runtime.ir.tensor import is_tensor


class TensorList:
    """A Python list of tensors of one dtype, as a graph value (functional: `append`
    returns the list to use from now on)."""

    __slots__ = ("array", "length")

    def __init__(self, array, length=None):
        self.array = array     # the TensorArray holding the elements
        self.length = length   # a Python int while known, else None

    @classmethod
    def of(cls, items, like):
        """The list `items` (Python values or tensors), elements of `like`'s dtype."""
        from autograph.runtime.ir import primitives
        from autograph.runtime.tensor_array import TensorArray
        dtype = _dtype_of(like)
        ta = TensorArray(dtype, size=0, dynamic_size=True)
        for i, item in enumerate(items):
            ta = ta.write(i, primitives.convert(_checked(item, dtype)))
        return cls(ta, len(items))

    def append(self, value):
        from autograph.runtime.ir import primitives
        index = self.length if self.length is not None else self.array.size()
        value = _checked(value, self.array.dtype)
        array = self.array.write(index, primitives.convert(value))
        return TensorList(array, None if self.length is None else self.length + 1)

    def size(self):
        return self.array.size()

    def __len__(self):
        raise TypeError(
            f"len() of a list that a loop the graph runs appended to is a tensor: it is "
            f"known only when the graph runs (converted code's len(l) gives it)")

    def __bool__(self):
        raise errors.StagingError(
            "The truth of a list that a loop the graph runs appended to is known only when "
            "the graph runs: write `len(l) > 0` (an `if l:` or `... if l else ...` works).")

    def __getitem__(self, index):
        if isinstance(index, slice):
            return np_stack(self)[index]
        if not is_tensor(index) and index < 0:
            from autograph.runtime.ir import primitives
            index = primitives.convert(index) + self.array.size()
        return self.array.read(index)

    def __iter__(self):
        raise errors.StagingError(
            "Cannot iterate over a list that a loop the graph runs appended to with a Python "
            "loop: its length is known only when the graph runs. Stack it (np.stack(l)) and "
            "loop over the array.")

    def __ag_flatten__(self):
        return self.array.__ag_flatten__()

    def __ag_unflatten__(self, leaves):
        from autograph.runtime.tensor_array import _Storage
        if leaves and isinstance(leaves[0], _Storage):   # a graph's result: the Python list
            return list(leaves[0].items)
        return TensorList(self.array.__ag_unflatten__(leaves), None)

    def __repr__(self):
        return f"<TensorList dtype={self.array.dtype.name}>"


def _array_like(value):
    """A value a list of tensors holds: a tensor, a NumPy array or scalar, a number."""
    return is_tensor(value) or (isinstance(value, (np.ndarray, np.generic, bool, int, float,
                                                   complex)) and np.asarray(value).dtype.kind
                                in "biufc")


def _dtype_of(value):
    """The dtype NumPy gives `value` in np.stack: a Python number is int64/float64/...
    (not weak: np.stack([np.float32(1), 0.5]) is float64)."""
    if is_tensor(value) or isinstance(value, (np.ndarray, np.generic)):
        return np.dtype(value.dtype)
    return np.asarray(value).dtype


def _checked(value, dtype):
    """`value`, refused unless of the list's dtype: NumPy would promote the stacked list
    to another dtype, which a loop variable cannot change to."""
    if _dtype_of(value) != dtype:
        from autograph.operators.location import where
        raise errors.StagingError(
            f"A value of dtype {_dtype_of(value).name} is appended{where()} to a list whose "
            f"elements are {dtype.name}, in a loop or `if` the graph runs: the list is a list "
            f"of tensors of one dtype (NumPy would promote the stacked list instead). Convert "
            f"the value first, e.g. with .astype(np.{dtype.name}), or start the list with "
            f"elements of the dtype it should hold.")
    if not is_tensor(value):
        value = np.asarray(value)
    return value


def list_append(target, value):
    """`target.append(value)`, as the lists pass writes it; returns the list."""
    if type(target) is TensorList:
        return target.append(value)
    if type(target) is list and calls.staged_outside(target):
        if not _array_like(value):   # a function, a string, a tuple: refused, as before
            calls.check_mutation(target, "append", depth=1)
        return TensorList.of(target, value).append(value)
    target.append(value)
    return target


def list_extend(target, values):
    """`target.extend(values)`, as the lists pass writes it; returns the list. On a list of
    tensors, `values` is a Python sequence or an array whose first dimension is known: one
    append per element."""
    if type(target) is list and not calls.staged_outside(target):
        target.extend(values)
        return target
    if is_tensor(values):
        if values.shape is None or not values.shape or values.shape[0] is None:
            raise errors.StagingError(
                f"Cannot extend a list in a loop the graph runs by an array whose length is "
                f"known only when the graph runs ({values!r}): append its rows in a loop.")
        values = [values[i] for i in range(values.shape[0])]
    values = list(values)
    if type(target) is list:
        if not values:
            return target
        if not all(_array_like(v) for v in values):
            calls.check_mutation(target, "extend", depth=1)
        target = TensorList.of(target, values[0])
    for v in values:
        target = target.append(v)
    return target


def as_loop_value(value, template, name="the list"):
    """A loop's starting `value`, converted to a TensorList where a first trace of the
    body gave `template`, a TensorList, for it."""
    if type(template) is TensorList and type(value) is list:
        _refuse_aliases(value, name)
        return TensorList.of(value, _element(template))
    return value


def _refuse_aliases(target, name):
    """The graph's list is a new value: another name (or a container) of the converted
    function that holds the same Python list would not see the appends. Refused."""
    import os
    import sys
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(2)   # the user's (converted) function: the first frame outside
    while frame is not None and frame.f_code.co_filename.startswith(package):   # autograph
        frame = frame.f_back
    if frame is None:
        return
    holders = [k for k, v in frame.f_locals.items() if v is target]
    holders += [k for k, v in frame.f_locals.items() if v is not target and
                isinstance(v, (list, tuple, dict)) and
                any(e is target for e in (v.values() if isinstance(v, dict) else v))]
    holders += [k for k, v in frame.f_locals.items()
                if any(e is target for e in getattr(v, "__dict__", {}).values())]
    def function_of(f):   # the converted function a frame (perhaps a loop body) is part of
        return (f.f_code.co_filename, f.f_code.co_qualname.split(".<locals>")[0])

    outer, own = frame.f_back, function_of(frame)
    while outer is not None:   # a list passed in: the caller holds it too (frames of this
        # function's enclosing loop bodies and of autograph pass it along)
        if not (outer.f_code.co_filename.startswith(package) or function_of(outer) == own):
            holders += [f"{k} in {outer.f_code.co_name}" for k, v in outer.f_locals.items()
                        if v is target]
        outer = outer.f_back
    if len(holders) > 1:
        from autograph.operators.location import where
        raise errors.StagingError(
            f"{name!r} is appended to in a loop{where()} whose condition is a tensor, and the "
            f"same Python list is also {', '.join(repr(h) for h in holders if h != name)}: "
            f"the graph carries the list as a new value, which those would not see. Append "
            f"to one name only (bind the others after the loop).")


def _element(tlist):
    return np.zeros((), tlist.array.dtype)


def np_stack(tlist, axis=0):
    out = tlist.array.stack()
    return out if axis == 0 else np.moveaxis(out, 0, axis)


def call(f, args, kwargs):
    """`f(l, ...)` for the NumPy functions that take a list of arrays; NotImplemented else."""
    handler = _CALLS.get(f)
    return NotImplemented if handler is None else handler(*args, **kwargs)


def _asarray(tlist, dtype=None):
    out = tlist.array.stack()
    return out if dtype is None else out.astype(dtype)


def _concatenate(tlist):
    return tlist.array.concat()


_CALLS = {np.stack: np_stack, np.array: _asarray, np.asarray: _asarray,
          np.concatenate: _concatenate}
