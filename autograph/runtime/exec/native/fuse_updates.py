"""A Variable's `assign_add` / `assign_sub` (`update_variable`) as a member of a fused
kernel (fuse.py), so an optimizer's step ends in the loop that computes it.

Lowered on its own, `w.assign_sub(delta)` is `var_w = np.subtract(var_w, delta)` after the
kernel that computed `delta`: the kernel stores `delta` in an array of `w`'s size, and a
second pass reads it and `w` again and allocates the new value. As a member it is one more
scalar expression of the kernel's loop (`o = a_w[i, j] - v`), `delta` stays in a register,
and the kernel returns the new value, which the main function assigns to the Variable's
local after the call (kernel.emit_run), where the unfused line assigned it; the kernel
may write it into the Variable's own array (inplace.py).

A member needs what NumPy's `old - delta` would give without broadcasting or casting: add
or subtract, a delta of the Variable's own static shape (at least 1-d) and dtype, the
Variable's value of that shape and dtype. Numerics are the unfused line's: the element
expression is the one native_ops writes for `np.subtract` / `np.add` of two scalars.
"""

import numpy as np


class _Value:
    """A Variable's value around a fused update: `old` (the Variable's native local, a
    kernel input) and `new` (the kernel's output assigned to that local)."""

    def __init__(self, update, kind):
        self.update, self.kind = update, kind
        delta = update.inputs[0]
        self.shape, self.dtype = delta.shape, delta.dtype
        self.weak = False
        self.node = self
        self.name = update.name


class Update:
    """update_variable `node` as a kernel member: `new = old op delta`."""

    def __init__(self, node):
        self.original = node
        self.op = node.attrs["op"]
        self.attrs = {}
        self.name, self.origin = node.name, node.origin
        self.inputs = (_Value(node, "old"), node.inputs[0])
        self.outputs = (_Value(node, "new"),)

    @property
    def variable(self):
        return self.original.attrs["variable"]()


def member(node):
    """An `Update` for `node` when it may join a kernel (see the module doc), else None."""
    if node.op != "update_variable" or len(node.inputs) != 1:
        return None
    attrs = node.attrs
    delta = node.inputs[0]
    ref = attrs.get("variable")
    var = ref() if callable(ref) else None
    if var is None or attrs.get("op") not in ("add", "subtract"):
        return None
    dtype = np.dtype(var.dtype)
    if not (np.dtype(attrs.get("operand_dtype")) == np.dtype(attrs.get("dtype")) == dtype
            == delta.dtype) or dtype.kind not in "iuf":
        return None
    shape = delta.shape
    if shape is None or not shape or not all(isinstance(d, int) for d in shape) or \
            tuple(np.shape(var._value)) != tuple(shape):
        return None
    return Update(node)
