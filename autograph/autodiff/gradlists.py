"""Gradient rules of the gradient-list primitives, so that differentiating twice works.

A first differentiation of TensorArray code (or of a loop's stacks) stages gradient-list
primitives (stacks.py): `put` adds a cotangent at an index, `pop` removes one, `scatter`,
`from_rows` and `pop_rows` do the same for many rows. A second differentiation needs their
own rules. A gradient list is linear in its entries, so each primitive's transpose is
another one of the family:

    put (add at i)        <->  get (read at i, leaving it)
    pop (remove at i)     <->  set (overwrite at i)
    scatter (add rows)    <->  gather (read rows, leaving them)
    from_rows / set_rows  <->  pop_rows          (optionally split by a TensorArray's
                                                  element lengths: TensorArray.concat)
    add (a + b)           ->   the cotangent, and a copy of it (lists update in place, so
                                                  two consumers must not share one)

The reads that leave the list (`get`, `gather`) return the list as a second output, so
the ops that later change it in place depend on them and run after them.
"""

import numpy as np

from autograph.autodiff import stacks
from autograph.autodiff.stacks import GradList, HANDLE, _zeros
from autograph.runtime import tensor_array  # noqa: F401 (registers ta_concat)
from autograph.runtime.ir import primitives
from autograph.runtime.ir.primitives import bind, bind1, register


# -- kernels -----------------------------------------------------------------------------------

def _get_kernel(xp, gl, index, *like, dtype, shape):
    value = gl.get(int(index))
    if value is None:
        value = _zeros(xp, dtype, shape, like[0] if like else None)
    return value, gl


def _set_kernel(xp, gl, index, *value):
    if value:
        gl[int(index)] = value[0]
    else:
        gl.pop(int(index), None)
    return gl


def _copy_kernel(xp, gl):
    return GradList(gl)


def _gather_kernel(xp, gl, indices, like, *, dtype, shape):
    out = xp.zeros(like.shape, dtype=dtype)
    for k, i in enumerate(xp.reshape(indices, (-1,))):
        value = gl.get(int(i))
        if value is not None:
            out[k] = value
    return out, gl


def _set_rows_kernel(xp, gl, rows, *handle):
    for i, r in stacks.rows_of(rows, handle[0] if handle else None):
        gl[i] = r
    return gl


def _pair_infer(*_, dtype, shape):
    return [(dtype, shape, False), (HANDLE, (), False)]


register("ad_gl_get", _pair_infer, _get_kernel, effectful=True,
         doc="the cotangent at an index (zeros when none), and the list unchanged")
register("ad_gl_set", stacks._handle_infer, _set_kernel, effectful=True,
         doc="overwrites the cotangent at an index (removes it when no value is given)")
register("ad_gl_copy", stacks._handle_infer, _copy_kernel, effectful=True,
         doc="a copy of a gradient list")
register("ad_gl_gather", _pair_infer, _gather_kernel, effectful=True,
         doc="the cotangents at indices, stacked (zeros where none), and the list unchanged")
register("ad_gl_set_rows", stacks._handle_infer, _set_rows_kernel, effectful=True,
         doc="overwrites the first cotangents with the rows of a tensor (or its pieces split "
             "by a TensorArray's element lengths)")


# -- staging helpers ---------------------------------------------------------------------------

def _gl(ct):
    return ct if ct is not None else stacks.empty_grad()


def _like(node, k):
    """The forward input k as a `like` argument when its static shape is not fully known."""
    v = node.node.inputs[k]
    return [] if v.shape is not None and None not in v.shape else [node.inputs[k]]


def get(gl, index, dtype, shape, like=()):
    outs = bind("ad_gl_get", [gl, primitives.convert(index)] + list(like),
                {"dtype": np.dtype(dtype), "shape": shape}).outputs
    return outs[0], outs[1]


def pop_rows(gl, like, handle=()):
    outs = bind("ad_gl_pop_rows", [gl, like] + list(handle),
                {"dtype": like.dtype, "shape": like.shape}).outputs
    return outs[0], outs[1]


def _nones(n):
    return [None] * n


# -- rules -------------------------------------------------------------------------------------

def _put_vjp(cts, node):            # put(gl, i, v) -> gl'
    if cts[0] is None:
        return [None, None, None]
    v = node.node.inputs[2]
    value_ct, rest = get(cts[0], node.inputs[1], v.dtype, v.shape, _like(node, 2))
    return [rest, None, value_ct]


def _get_vjp(cts, node):            # get(gl, i, *like) -> (v, gl')
    gl = cts[1]
    if cts[0] is not None:
        gl = stacks.put(node.inputs[1], cts[0], _gl(gl))
    return [gl, None] + _nones(len(node.inputs) - 2)


def _pop_vjp(cts, node):            # pop(gl, i, *like) -> (v, gl')
    extra = [] if cts[0] is None else [cts[0]]
    gl = bind1("ad_gl_set", [_gl(cts[1]), node.inputs[1]] + extra)
    return [gl, None] + _nones(len(node.inputs) - 2)


def _set_vjp(cts, node):            # set(gl, i, *v) -> gl'
    if len(node.inputs) == 2:
        return [cts[0], None]
    v = node.node.inputs[2]
    value_ct, rest = stacks.pop(_gl(cts[0]), node.inputs[1], v.dtype, v.shape,
                                (_like(node, 2) or [None])[0])
    return [rest, None, value_ct]


def _add_vjp(cts, node):            # add(a, b) -> a + b
    return [cts[0], bind1("ad_gl_copy", [cts[0]])]


def _copy_vjp(cts, node):
    return [cts[0]]


def _scatter_vjp(cts, node):        # scatter(gl, indices, rows) -> gl'
    outs = bind("ad_gl_gather", [_gl(cts[0]), node.inputs[1], node.inputs[2]],
                {"dtype": node.node.inputs[2].dtype, "shape": node.node.inputs[2].shape}).outputs
    return [outs[1], None, outs[0]]


def _gather_vjp(cts, node):         # gather(gl, indices, like) -> (rows, gl')
    gl = cts[1]
    if cts[0] is not None:
        gl = bind1("ad_gl_scatter", [_gl(gl), node.inputs[1], cts[0]])
    return [gl, None, None]


def _from_rows_vjp(cts, node):      # from_rows(rows, *handle) -> gl
    rows_ct, _ = pop_rows(_gl(cts[0]), node.inputs[0], node.inputs[1:])
    return [rows_ct] + _nones(len(node.inputs) - 1)


def _set_rows_vjp(cts, node):       # set_rows(gl, rows, *handle) -> gl'
    rows_ct, rest = pop_rows(_gl(cts[0]), node.inputs[1], node.inputs[2:])
    return [rest, rows_ct] + _nones(len(node.inputs) - 2)


def _pop_rows_vjp(cts, node):       # pop_rows(gl, like, *handle) -> (rows, gl')
    rows = cts[0] if cts[0] is not None else np.zeros_like(node.inputs[1])
    gl = bind1("ad_gl_set_rows", [_gl(cts[1]), rows] + node.inputs[2:])
    return [gl, None] + _nones(len(node.inputs) - 2)


def _concat_vjp(cts, node):         # ta_concat(handle) -> the elements joined on axis 0
    return [bind1("ad_gl_from_rows", [cts[0], node.inputs[0]])]


for _name, _rule in [("ad_gl_put", _put_vjp), ("ad_gl_get", _get_vjp),
                     ("ad_gl_pop", _pop_vjp), ("ad_gl_set", _set_vjp),
                     ("ad_gl_add", _add_vjp), ("ad_gl_copy", _copy_vjp),
                     ("ad_gl_scatter", _scatter_vjp), ("ad_gl_gather", _gather_vjp),
                     ("ad_gl_from_rows", _from_rows_vjp), ("ad_gl_set_rows", _set_rows_vjp),
                     ("ad_gl_pop_rows", _pop_rows_vjp), ("ta_concat", _concat_vjp)]:
    primitives.defvjp(_name, _rule)
