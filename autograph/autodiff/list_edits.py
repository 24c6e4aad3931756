"""Gradient rules of `ta_pop`, `ta_insert`, `ta_nonempty` (runtime/list_edits.py), and
`ad_gl_shift`.

The cotangent of a TensorArray handle is a gradient list {index: cotangent} (stacks.py).
Popping element i moved the later elements down by one, so the list before the pop gets
the cotangents after it with the indices >= i moved up by one, and the popped value's
cotangent at i. Inserting at i moved the later elements up: the inserted value takes the
cotangent at i, and the indices > i move down by one. `ad_gl_shift(gl, start, by)` moves
the indices >= start by `by`; its own transpose moves them back (a second gradient).

Popping the last element (`l.pop()`) moves nothing: no entry of the list after it lies at
or past the popped index (each later element's write took its own), so no shift is staged
and a stack-like use of a list costs O(1) per step backward too.
"""

from autograph.autodiff import stacks
from autograph.autodiff.stacks import GradList
from autograph.runtime import list_edits  # noqa: F401 (registers ta_pop, ta_insert)
from autograph.runtime.ir import primitives
from autograph.runtime.ir.primitives import bind1, register


def _shift_kernel(xp, gl, start, by):
    start, by = int(start), int(by)
    return GradList({(k + by if k >= start else k): v for k, v in gl.items()})


register("ad_gl_shift", stacks._handle_infer, _shift_kernel, effectful=True,
         doc="a gradient list with the indices >= start moved by `by`")


def shift(gl, start, by):
    return bind1("ad_gl_shift", [gl, primitives.convert(start), primitives.convert(by)])


def _grad_list(ct):
    return ct if ct is not None else stacks.empty_grad()


def _pop_vjp(cts, node):            # ta_pop(handle, i) -> (value, handle')
    value_ct, gl = cts
    index = node.inputs[1]
    if not node.node.attrs["end"]:
        gl = shift(_grad_list(gl), index, 1)
    if value_ct is not None:
        gl = stacks.put(index, value_ct, _grad_list(gl))
    return [gl, None]


def _insert_vjp(cts, node):         # ta_insert(handle, i, value) -> handle'
    v = node.node.inputs[2]
    like = None if v.shape is not None and None not in v.shape else node.inputs[2]
    index = node.inputs[1]
    value_ct, rest = stacks.pop(_grad_list(cts[0]), index, v.dtype, v.shape, like)
    return [shift(rest, index + 1, -1), None,
            value_ct if v.dtype.kind in "fc" else None]


def _shift_vjp(cts, node):          # shift(gl, start, by) -> gl'
    if cts[0] is None:
        return [None, None, None]
    start, by = node.inputs[1], node.inputs[2]
    return [shift(cts[0], start + by, -by), None, None]


primitives.defvjp("ta_pop", _pop_vjp)
primitives.defvjp("ta_nonempty", lambda cts, node: [cts[0]])
primitives.defvjp("ta_insert", _insert_vjp)
primitives.defvjp("ad_gl_shift", _shift_vjp)
