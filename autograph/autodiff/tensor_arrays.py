"""Gradient rules of the TensorArray primitives (runtime/tensor_array.py).

The cotangent of a TensorArray handle is a gradient list (stacks.py): {index: cotangent}.
A read puts its cotangent at its index; a write pops the cotangent at its index for the
value written (the element it replaced gets nothing); `stack` gives a list of the rows of
its cotangent, `unstack` stacks the list back; `gather` scatters.
"""

import numpy as np

from autograph.autodiff import stacks
from autograph.runtime.ir import primitives
from autograph.runtime import tensor_array  # noqa: F401 (registers the primitives)


def _grad_list(ct):
    return ct if ct is not None else stacks.empty_grad()


def _write_vjp(cts, node):
    v = node.node.inputs[2]
    like = None if v.shape is not None and None not in v.shape else node.inputs[2]
    value_ct, rest = stacks.pop(_grad_list(cts[0]), node.inputs[1], v.dtype, v.shape, like)
    return [rest, None, value_ct if v.dtype.kind in "fc" or v.dtype == stacks.HANDLE
            else None]


def _read_vjp(cts, node):
    return [stacks.put(node.inputs[1], cts[0]), None]


def _stack_vjp(cts, node):
    return [primitives.bind1("ad_gl_from_rows", [cts[0]])]


def _gather_vjp(cts, node):
    return [primitives.bind1("ad_gl_scatter", [stacks.empty_grad(), node.inputs[1], cts[0]]),
            None]


def _unstack_vjp(cts, node):
    v = node.node.inputs[1]
    outs = primitives.bind("ad_gl_pop_rows", [_grad_list(cts[0]), node.inputs[1]],
                           {"dtype": v.dtype, "shape": v.shape}).outputs
    return [outs[1], outs[0]]


primitives.defvjp("ta_write", _write_vjp)
primitives.defvjp("ta_read", _read_vjp)
primitives.defvjp("ta_stack", _stack_vjp)
primitives.defvjp("ta_gather", _gather_vjp)
primitives.defvjp("ta_unstack", _unstack_vjp)
primitives.nondifferentiable("ta_new", "ta_size")
_ = np
