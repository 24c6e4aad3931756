"""Python lists changed in loops and `if`s the graph runs (issue 31): the operators.

The lists pass (converters/lists.py) rewrites, in loop bodies and branches,

    l.append(v)      ->  l = ag__.list_append(l, v)
    l.extend(vs)     ->  l = ag__.list_extend(l, vs)
    l.insert(i, v)   ->  l = ag__.list_insert(l, i, v)
    v = l.pop(i)     ->  l, v = ag__.list_pop(l, i)

On a Python list that the statement being traced did not make, inside a loop or `if` the
graph runs, changing it in place would happen once, while tracing: the operators then
return a TensorList (operators/tensor_list.py), a list of tensors the graph carries, with
the list's elements first. The loop operators see the list come back as a TensorList from
a first trace of the body and start the loop with the list converted (`as_loop_value`), so
the list is an ordinary loop variable. Anywhere else they change the Python list in place,
as the original statement does, and return it.

After the loop a TensorList is used like the list (`len(l)`, `l[i]`, `if l`, `for v in l`,
`np.stack(l)`, `np.array(l)`, `np.asarray(l)`, `np.concatenate(l)`) and the graph gives it
back to the caller as a Python list of arrays. Each append stores one element into the
run-time list in place: n appends cost O(n) in all, and `np.stack` copies the elements
once. Gradients flow through it as through the TensorArray (autodiff/tensor_arrays.py,
autodiff/list_edits.py).
"""

import numpy as np

from autograph import errors
from autograph.operators import calls
from autograph.operators.tensor_list import TensorList, element_like
from autograph.runtime.ir.tensor import is_tensor

__all__ = ["TensorList", "list_append", "list_extend", "list_iadd", "list_insert", "list_pop",
           "as_loop_value", "call"]


def _staged(target, name, like=None):
    """`target` as a TensorList when it is a Python list that a staged loop or `if`
    being traced did not make (None otherwise); `like`: an element (None: the list's
    first). A list of what no tensor holds is refused, naming the change."""
    if type(target) is TensorList:
        return target
    if type(target) is not list or not calls.staged_outside(target):
        return None
    if target:   # the list's own elements give the structure and dtypes
        like = target[0]
    if like is None or not element_like(like) or not all(element_like(v) for v in target):
        calls.check_mutation(target, name, depth=2)
        if like is None:   # (an empty list popped: Python raises the same, when it runs)
            raise IndexError("pop from empty list")
    _refuse_aliases(target)
    return TensorList.of(target, like)


def _as_written(target, method, *args):
    """`target.method(*args)` in place, as the original statement (a deque, a dict, a list
    the statement being traced made), refused as converted_call refuses it where it would
    change a container made outside the staged loop or `if` being traced."""
    if isinstance(target, calls.CONTAINERS):
        calls.check_mutation(target, method, depth=2)
    return getattr(target, method)(*args)


def list_append(target, value):
    """`target.append(value)`, as the lists pass writes it; returns the list."""
    staged = _staged(target, "append", value)
    if staged is None:
        _as_written(target, "append", value)
        return target
    return staged.appended(value)


def list_extend(target, values):
    """`target.extend(values)`, as the lists pass writes it; returns the list. On a list of
    tensors, `values` is a Python sequence or an array whose first dimension is known: one
    append per element."""
    if type(target) is not TensorList and (type(target) is not list or
                                           not calls.staged_outside(target)):
        _as_written(target, "extend", values)
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
        target = _staged(target, "extend", values[0])
    for v in values:
        target = target.appended(v)
    return target


def list_iadd(target, values):
    """`target += values` where `values` is a list display, as the lists pass writes it:
    `extend` on a list (a list of tensors included), `+=` on anything else."""
    if type(target) is list or type(target) is TensorList:
        return list_extend(target, values)
    if isinstance(target, calls.CONTAINERS):   # (a deque: extended in place)
        calls.check_mutation(target, "extend", depth=1)
    target += values
    return target


def list_insert(target, index, value):
    """`target.insert(index, value)`, as the lists pass writes it; returns the list."""
    staged = _staged(target, "insert", value)
    if staged is None:
        _as_written(target, "insert", index, value)
        return target
    return staged.inserted(index, value)


def list_pop(target, index=None):
    """`target.pop(index)`, as the lists pass writes it: (the list, the element)."""
    staged = _staged(target, "pop")
    if staged is None:
        return target, _as_written(target, "pop", *([] if index is None else [index]))
    return staged.popped(index)


def as_loop_value(value, template, name="the list"):
    """A loop's starting `value`, converted to a TensorList where a first trace of the
    body gave `template`, a TensorList, for it."""
    if type(template) is TensorList and type(value) is list:
        _refuse_aliases(value, name)
        return TensorList.of(value, template)
    if type(template) is list and type(value) is list and len(template) != len(value) and \
            value and all(element_like(v) for v in value + template):
        # the body copied the list (an item write: updates._copy_if_shared) and then
        # changed its length: a list of tensors too
        _refuse_aliases(value, name)
        return TensorList.of(value, value[0])
    return value


def as_tensor_lists(state, names):
    """`state` with each non-empty Python list of arrays of one structure and dtype a
    TensorList, or None when it holds none."""
    out, changed = list(state), False
    for k, (value, name) in enumerate(zip(state, names)):
        if type(value) is list and value and all(element_like(v) for v in value):
            try:
                out[k] = TensorList.of(value, value[0])
            except errors.StagingError:   # elements of several dtypes: left a Python list
                continue
            _refuse_aliases(value, name)
            changed = True
    return tuple(out) if changed else None


def _refuse_aliases(target, name=None):
    """The graph's list is a new value: another name (or a container) of the converted
    function that holds the same Python list would not see the changes. Refused. `name`:
    the list's (None: the first name that holds it)."""
    import os
    import sys
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(2)   # the user's (converted) function: the first frame outside
    while frame is not None and frame.f_code.co_filename.startswith(package):   # autograph
        frame = frame.f_back
    if frame is None:
        return
    holders = _holders(frame, target)

    def function_of(f):   # the converted function a frame (perhaps a loop body) is part of
        return (f.f_code.co_filename, f.f_code.co_qualname.split(".<locals>")[0])

    outer, own = frame.f_back, function_of(frame)
    while outer is not None:   # a list passed in: the caller holds it too (frames of this
        # function's enclosing loop bodies and branches pass it along under its own name,
        # and so do autograph's)
        if function_of(outer) == own:
            holders += [k for k in _holders(outer, target) if k not in holders]
        elif not outer.f_code.co_filename.startswith(package):
            holders += [f"{k} in {outer.f_code.co_name}" for k, v in outer.f_locals.items()
                        if v is target]
        outer = outer.f_back
    if len(holders) > 1:
        from autograph.operators.location import where
        name = name or holders[0]
        raise errors.StagingError(
            f"{name!r} is changed in a loop or `if`{where()} whose condition is a tensor, and the "
            f"same Python list is also {', '.join(repr(h) for h in holders if h != name)}: "
            f"the graph carries the list as a new value, which those would not see. Change "
            f"it through one name only (bind the others after the loop).")


def _holders(frame, target):
    """The names of `frame` bound to `target`, or to a container or object holding it."""
    names = [k for k, v in frame.f_locals.items() if v is target]
    names += [k for k, v in frame.f_locals.items() if v is not target and
              isinstance(v, (list, tuple, dict)) and
              any(e is target for e in (v.values() if isinstance(v, dict) else v))]
    names += [k for k, v in frame.f_locals.items()
              if any(e is target for e in getattr(v, "__dict__", {}).values())]
    return names


def np_stack(tlist, axis=0):
    out = tlist.stacked()
    return out if axis == 0 else np.moveaxis(out, 0, axis)


def call(f, args, kwargs):
    """`f(l, ...)` for the NumPy functions that take a list of arrays; NotImplemented else."""
    handler = _CALLS.get(f)
    return NotImplemented if handler is None else handler(*args, **kwargs)


def _asarray(tlist, dtype=None):
    out = tlist.stacked(check=False)
    return out if dtype is None else out.astype(dtype)


def _concatenate(tlist):
    return tlist.nonempty("concatenate")[0].concat()


_CALLS = {np.stack: np_stack, np.array: _asarray, np.asarray: _asarray,
          np.concatenate: _concatenate}
