"""`pop(i)` and `insert(i, v)` on a TensorArray's run-time list (issue 31: Python lists
in staged loops).

A list the graph carries (operators.lists.TensorList) is a growing TensorArray, whose
storage at run time is a Python list of arrays. Appends and item writes are `ta_write`;
these two primitives change the list's length the other way, in place, as Python does:

    ta_pop(handle, index)            -> (element index, handle)   (later elements move down)
    ta_insert(handle, index, value)  -> handle                    (later elements move up)

    ta_nonempty(handle)              -> handle                    (ValueError when empty)

All are effectful (their order is the program's), like ta_write. `ta_nonempty` stands
before a `np.stack(l)` / `np.concatenate(l)` of the list, which NumPy refuses for an empty
list (a TensorArray stacks to an empty array instead). `index` is already in
range: the staging helpers below turn a negative or clamped Python index into one with
graph arithmetic, so that the gradient rules (autodiff/list_edits.py) see the same index.
Popping the last element costs O(1), popping or inserting elsewhere O(n), as in Python.
"""

import numpy as np

from autograph.runtime import tensor_array
from autograph.runtime.ir import primitives

_HANDLE = np.dtype(object)


def _pop_kernel(xp, handle, index, *, dtype, element_shape, end):
    items = handle.items
    i = int(index)
    if not 0 <= i < len(items):
        raise IndexError("pop from empty list" if not items else "pop index out of range")
    value = items.pop(i)
    if value is None:
        raise ValueError(f"list element {i} was popped before it was written")
    return value, handle


def _insert_kernel(xp, handle, index, value):
    handle.items.insert(int(index), value)
    return handle


def _nonempty_kernel(xp, handle, *, message):
    if not len(handle):
        raise ValueError(message)
    return handle


def _pop_infer(handle, index, *, dtype, element_shape, end):
    return [(dtype, element_shape, False), (_HANDLE, (), False)]


primitives.register("ta_pop", _pop_infer, _pop_kernel, effectful=True,
                    doc="removes and returns element `index` (later ones move down); "
                        "returns the element and the handle")
primitives.register("ta_insert", tensor_array._handle_infer, _insert_kernel, effectful=True,
                    doc="stores `value` before element `index` (later ones move up)")

primitives.register("ta_nonempty", tensor_array._handle_infer, _nonempty_kernel,
                    effectful=True, doc="the handle; raises ValueError(message) when the "
                                        "list is empty")


# -- staging helpers -------------------------------------------------------------------------

def _index(index):
    return primitives.convert(np.int64(index) if isinstance(index, (int, np.integer))
                              else index)


def pop_index(index, size):
    """The element `list.pop(index)` removes, as a graph value (None: the last)."""
    if index is None:
        return size - 1
    if isinstance(index, (int, np.integer)):
        return _index(index) if index >= 0 else size + int(index)
    index = _index(index)
    return np.where(index < 0, index + size, index)


def insert_index(index, size):
    """Where `list.insert(index, v)` puts `v`: a negative index counts from the end, and
    an index out of range is clamped to the list (as Python does)."""
    if isinstance(index, (int, np.integer)) and index >= 0:
        return np.minimum(_index(index), size)
    index = _index(index)
    return np.clip(np.where(index < 0, index + size, index), 0, size)


def pop(ta, index=None):
    """(the element `ta`'s list.pop(index) gives, the TensorArray to use from now on)."""
    i = pop_index(index, ta.size())
    outs = primitives.bind("ta_pop", [ta.handle, i],
                           {"dtype": ta.dtype, "element_shape": ta.element_shape,
                            "end": index is None or (isinstance(index, (int, np.integer))
                                                     and index == -1)}).outputs
    return outs[0], ta._like(handle=outs[1])


def insert(ta, index, value):
    """The TensorArray after `ta`'s list.insert(index, value)."""
    i = insert_index(index, ta.size())
    value = primitives.convert(value)
    if value.dtype != ta.dtype:
        value = primitives.bind1("Cast", [value], {"dtype": ta.dtype})
    handle = primitives.bind1("ta_insert", [ta.handle, i, value])
    return ta._like(handle=handle,
                    element_shape=tensor_array._join(ta.element_shape, value.shape))


def nonempty(ta, message):
    """`ta`, checked when the graph runs to hold an element (else ValueError(message))."""
    return ta._like(handle=primitives.bind1("ta_nonempty", [ta.handle],
                                            {"message": message}))
