"""JVP rules of the structural primitives: identities and casts, TensorArrays, the
reverse pass's stacks and gradient lists, and custom gradients.

A handle's tangent is a handle of the same kind holding tangents: a TensorArray of
tangents beside the TensorArray, a stack of tangents beside a stack, a gradient list of
tangents beside a gradient list. Every handle primitive is linear in its handles and
values (indices and shape templates pass through), so `deflinear` gives its rule; a zero
tangent handle is made on demand by `jvp_zero_handle` (a fresh list of zeros shaped like
the primal's current elements, made where a nonzero tangent first meets it). That is
what carries forward mode through a reverse pass's loops: the forward-over-reverse
Hessian-vector product pushes tangents onto tangent stacks as the forward loop pushes
values, and the backward loop reads both.

`custom_gradient`: its JVP is the transpose of the user's gradient function (so forward
and reverse mode agree with the gradient the user gave).
"""

import numpy as np

from autograph.autodiff import custom, gradlists, stacks, tensor_arrays  # noqa: F401
from autograph.autodiff.jvp_table import deflinear, deftransposed
from autograph.autodiff.stacks import GradList, Stack
from autograph.runtime import tensor_array
from autograph.runtime.ir import primitives

HANDLE = np.dtype(object)


def _zero(xp, v):
    if v is None:
        return None
    if isinstance(v, GradList):
        return GradList()
    if isinstance(v, Stack):
        return Stack([_zero(xp, x) for x in v.items])
    if isinstance(v, tensor_array._Storage):
        new = tensor_array._Storage(len(v), v.dynamic)
        for i in range(len(v)):
            x = v.read(xp, i)
            if x is not None:
                new.write(xp, i, _zero(xp, x))
        return new
    return xp.zeros_like(v)


primitives.register("jvp_zero_handle", lambda h: [(HANDLE, (), False)],
                    lambda xp, h: _zero(xp, h), effectful=True,
                    doc="a zero tangent for a handle: a fresh list of the same kind, its "
                        "elements zeros shaped like the handle's")
primitives.nondifferentiable("jvp_zero_handle")

for _name in ("Identity", "Cast", "ad_assume_shape", "ta_read", "ta_stack", "ta_gather",
              "ta_concat", "ad_stack_get", "ad_gl_pop", "ad_gl_get", "ad_gl_gather",
              "ad_gl_pop_rows", "ad_gl_from_rows", "ad_gl_copy", "ad_gl_shift",
              "ta_pop", "ta_nonempty"):
    deflinear(_name, (0,))
for _name in ("ta_write", "ta_insert", "ad_stack_push", "ad_gl_put", "ad_gl_scatter",
              "ad_gl_set"):
    deflinear(_name, (0, 2))
for _name in ("ta_unstack", "ad_gl_add", "ad_gl_set_rows"):
    deflinear(_name, (0, 1))

deftransposed("custom_gradient")
