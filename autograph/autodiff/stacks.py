"""Per-iteration stacks (what a differentiated loop stores) and gradient lists.

A *stack* is the run-time list a forward loop pushes one value into per iteration (a
reference: nothing is copied) and its backward loop reads back, last first. It is made
before the loop: preallocated (`[None] * capacity`) when the trip count is known then,
grown by appending otherwise. A preallocated stack of same-shaped arrays big enough to
cost page faults keeps them in one contiguous buffer reused from call to call instead
(stack_buffers.py).

A *gradient list* is the cotangent of a list-like handle (a TensorArray or a stack): a
dict {index: cotangent}. Rules for reads put into it, rules for writes pop from it.
Gradient lists are used linearly (one consumer each), so their kernels update in place.
The rules of the gradient-list primitives themselves (for a second differentiation) are
in gradlists.py.
"""

import numpy as np

from autograph.autodiff import stack_buffers
from autograph.runtime.ir import primitives
from autograph.runtime.ir.primitives import bind, bind1, register

HANDLE = np.dtype(object)
INT = np.dtype(np.int64)


class Stack:
    """`items`: a list of references, or (stack_buffers.py) one contiguous array whose
    rows are the values; `fresh`: nothing pushed yet into a preallocated stack (its first
    push may choose a buffer); `row`, `key`: a buffer's (row shape, dtype), (row shape,
    dtype string); `high`: the highest
    row pushed (a buffer's rows are written once each, in increasing order); `lent`,
    `lent_i`: the row `next_row` handed out for the next push to be computed into."""
    __slots__ = ("items", "fresh", "row", "key", "high", "lent", "lent_i")

    def __init__(self, items):
        self.items = items
        self.fresh = False
        self.lent = None

    def __del__(self):
        items = getattr(self, "items", None)
        if items.__class__ is np.ndarray:
            try:
                stack_buffers.release(items)
            except Exception:     # (interpreter shutdown: the module may be gone)
                pass

    def __repr__(self):
        return f"<autodiff stack, {len(self.items)} slots>"


class GradList(dict):
    """index -> accumulated cotangent."""


def _handle_infer(*_, **__):
    return [(HANDLE, (), False)]


def _value_infer(*_, dtype, shape):
    return [(dtype, shape, False)]


def _stack_new_kernel(xp, *capacity):
    if not capacity:
        return Stack([])
    stack = Stack([None] * max(int(capacity[0]), 0))
    stack.fresh = True
    return stack


def _buffered_push(handle, i, value):
    """Push into a stack whose first push chose a buffer (stack_buffers.py): False when
    `value` does not fit, after turning the stack back into a list of references. A row
    is written once, and only above every row written before: a view of it (a read, or
    the value computed into it) never changes under its reader."""
    items, lent = handle.items, handle.lent
    if lent is not None:
        handle.lent = None
        if value is lent and i == handle.lent_i:     # computed in its row: nothing to copy
            handle.high = i
            return True
    elif handle.high < i < len(items) and value.__class__ is np.ndarray and \
            (value.shape, value.dtype) == handle.row:
        items[i] = value
        handle.high = i
        return True
    handle.items = list(items)       # (views of the rows: the buffer is not reused)
    return False


def next_row(handle, fallback, row):
    """The memory for a value about to be pushed onto `handle` (exec/stack_rows.py): the
    row above the highest pushed, when the stack is a buffer of `row` = (shape, dtype)
    rows with one left and none lent; else `fallback` (None: a new array)."""
    items = handle.items
    if items.__class__ is np.ndarray and handle.lent is None and handle.key == row:
        i = handle.high + 1
        if i < len(items):
            handle.lent, handle.lent_i = items[i], i
            return handle.lent
    return fallback


def _stack_push_kernel(xp, handle, index, value):
    i = int(index)
    if handle.fresh:
        handle.fresh = False
        if i < len(handle.items):
            buf = stack_buffers.buffer_for(len(handle.items), value)
            if buf is not None:
                handle.items, handle.row = buf, (value.shape, value.dtype)
                handle.key, handle.high = (value.shape, value.dtype.str), -1
    if handle.items.__class__ is np.ndarray and _buffered_push(handle, i, value):
        return handle
    items = handle.items
    if i < len(items):
        items[i] = value
    else:
        items.append(value)
    return handle


def _stack_get_kernel(xp, handle, index, *, dtype, shape):
    return handle.items[int(index)]


def _zeros(xp, dtype, shape, like):
    if dtype == HANDLE:          # the zero cotangent of a handle (a stack of stacks)
        return GradList()
    if like is not None:
        return xp.zeros_like(like)
    return xp.zeros(tuple(shape), dtype=dtype)


def _gl_new_kernel(xp):
    return GradList()


def _accumulate(gl, i, value):
    old = gl.get(i)
    if old is None:
        gl[i] = value
    elif isinstance(old, GradList):   # cotangents of handles (nested loops' stacks)
        gl[i] = _gl_add_kernel(None, old, value)
    else:
        gl[i] = old + value


def _gl_add_kernel(xp, a, b):
    if len(a) < len(b):
        a, b = b, a
    for i, v in b.items():
        _accumulate(a, i, v)
    return a


def _gl_put_kernel(xp, gl, index, value):
    _accumulate(gl, int(index), value)
    return gl


def _gl_pop_kernel(xp, gl, index, *like, dtype, shape):
    value = gl.pop(int(index), None)
    if value is None:
        value = _zeros(xp, dtype, shape, like[0] if like else None)
    return value, gl


def element_spans(handle, n):
    """[(start, stop)] of each element of a TensorArray storage along axis 0 (for concat);
    with no handle, n rows of one element each."""
    if handle is None:
        return [(i, i + 1) for i in range(n)]
    if handle.buffer is not None:
        lengths = [handle.eshape[0]] * len(handle)
    else:
        lengths = [v.shape[0] for v in handle._items]
    spans, start = [], 0
    for m in lengths:
        spans.append((start, start + m))
        start += m
    return spans


def rows_of(rows, handle):
    """(index, cotangent) pairs: the rows of `rows`, or its pieces split like `handle`'s
    elements."""
    if handle is None:
        return [(i, rows[i]) for i in range(rows.shape[0])]
    return [(k, rows[a:b]) for k, (a, b) in enumerate(element_spans(handle, 0))]


def _gl_from_rows_kernel(xp, rows, *handle):
    return GradList(rows_of(rows, handle[0] if handle else None))


def _gl_scatter_kernel(xp, gl, indices, rows):
    for k, i in enumerate(xp.reshape(indices, (-1,))):
        _accumulate(gl, int(i), rows[k])
    return gl


def _gl_pop_rows_kernel(xp, gl, like, *handle, dtype, shape):
    out = xp.zeros(like.shape, dtype=dtype)
    for k, (a, b) in enumerate(element_spans(handle[0] if handle else None, like.shape[0])):
        r = gl.pop(k, None)
        if r is not None:
            if handle:
                out[a:b] = r
            else:
                out[a] = r
    return out, gl


def _pop_infer(gl, index, *like, dtype, shape):
    return [(dtype, shape, False), (HANDLE, (), False)]


def _pop_rows_infer(gl, like, *handle, dtype, shape):
    return [(dtype, shape, False), (HANDLE, (), False)]


register("ad_stack_new", _handle_infer, _stack_new_kernel, effectful=True,
         doc="a fresh per-iteration stack (preallocated to an optional capacity)")
register("ad_stack_push", _handle_infer, _stack_push_kernel, effectful=True,
         doc="stores a loop iteration's value at its index; returns the stack")
register("ad_stack_get", _value_infer, _stack_get_kernel,
         doc="the value a loop stored at `index`")
register("ad_gl_new", _handle_infer, _gl_new_kernel, effectful=True,
         doc="an empty gradient list")
register("ad_gl_add", _handle_infer, _gl_add_kernel, effectful=True,
         doc="the sum of two gradient lists")
register("ad_gl_put", _handle_infer, _gl_put_kernel, effectful=True,
         doc="adds a cotangent at an index")
register("ad_gl_pop", _pop_infer, _gl_pop_kernel, effectful=True,
         doc="removes and returns the cotangent at an index (zeros when none)")
register("ad_gl_from_rows", _handle_infer, _gl_from_rows_kernel, effectful=True,
         doc="a gradient list of the rows of a tensor (or of its pieces split like the "
             "elements of an optional TensorArray handle)")
register("ad_gl_scatter", _handle_infer, _gl_scatter_kernel, effectful=True,
         doc="adds rows at indices")
register("ad_gl_pop_rows", _pop_rows_infer, _gl_pop_rows_kernel, effectful=True,
         doc="removes the first len(like) cotangents, stacked (zeros where none; joined "
             "like the elements of an optional TensorArray handle)")
primitives.nondifferentiable("ad_stack_new", "ad_gl_new")
# codegen finds the lending kernel through the push's (exec/stack_rows.py: runtime/exec
# sits below autodiff and imports nothing from it)
_stack_push_kernel.next_row = next_row


# -- staging helpers --------------------------------------------------------------------------

def empty_grad():
    return bind1("ad_gl_new")


def add_grads(a, b):
    return bind1("ad_gl_add", [a, b])


def put(index, value, gl=None):
    return bind1("ad_gl_put", [empty_grad() if gl is None else gl,
                               primitives.convert(index), value])


def pop(gl, index, dtype, shape, like=None):
    """(cotangent at index, the rest): `like` (a tensor) gives the zeros' shape when
    `shape` is not fully known."""
    known = shape is not None and None not in shape
    ins = [gl, primitives.convert(index)] + ([] if known or like is None else [like])
    outs = bind("ad_gl_pop", ins, {"dtype": np.dtype(dtype), "shape": shape}).outputs
    return outs[0], outs[1]


# -- rules: a stack read is a gradient-list put, a push a pop ---------------------------------

def _stack_get_vjp(cts, node):
    return [put(node.inputs[1], cts[0]), None]


def _stack_push_vjp(cts, node):
    gl = cts[0] if cts[0] is not None else empty_grad()
    v = node.node.inputs[2]
    like = None if v.shape is not None and None not in v.shape else node.inputs[2]
    value_ct, rest = pop(gl, node.inputs[1], v.dtype, v.shape, like)
    # a handle pushed (an inner loop's stack, kept per outer iteration) gets its gradient
    # list back: that is how a second differentiation reaches nested loops
    return [rest, None, value_ct if v.dtype.kind in "fc" or v.dtype == HANDLE else None]


primitives.defvjp("ad_stack_get", _stack_get_vjp)
primitives.defvjp("ad_stack_push", _stack_push_vjp)
