"""Which names of a generated native function hold arrays Numba types C-contiguous, so the
lowering leaves out `np.ascontiguousarray` where it would change nothing.

BLAS (`matmul`, np.dot) wants C- or F-ordered operands and `reshape` a C-ordered array, so
the lowering writes `np.ascontiguousarray(x)` around them. On an array Numba already types
C-contiguous that call returns its argument as it is (numba's `_as_layout_array`), yet it
is one more call Numba types and links into the module for every distinct argument
type (LLVM then inlines it to nothing: the saving in compile time is small, docs/native.md),
and noise in the generated source that `to_code()` readers see. The result is the same
array, so leaving the call out changes no value (and no aliasing).

A name is noted here when the expression bound to it makes a new C-ordered array: a fused
kernel's outputs (each `np.empty` in the kernel; not a kernel writing into a Variable's
array, whose type is the Variable's), a 2-D `matmul` (np.dot's result is C), a reshape
through `np.ascontiguousarray(...).reshape(...)`, `np.empty`/`np.full`/`np.zeros`/
`np.ones` of a shape, a broadcast into `np.empty` (lower.py), and a row of a gradient
stack's buffer (`buf[i]` of a C-ordered buffer, grad.py). Names bound once only: a loop's
variables (rebound in its body) are never noted, nor the function's arguments (Numba types
a non-contiguous argument `A`).
"""

_NEW_ARRAY = ("np.empty(", "np.full(", "np.zeros(", "np.ones(")
_RESHAPES = ("reshape", "squeeze", "expand_dims")


def contiguous(low, expr):
    """`expr` as a C- or F-ordered array for BLAS: as it is when its name is noted."""
    if expr in low.c_order or expr.startswith("np.ascontiguousarray("):
        return expr
    return f"np.ascontiguousarray({expr})"


def note(low, name, node, expr):
    """Note `name` (just bound to `expr`, node's lowering) when that makes a C-ordered array."""
    out = node.outputs[0]
    if not out.shape:
        return
    if (node.op == "matmul" and expr.startswith("matmul(")) or \
            (node.op in _RESHAPES and ".reshape(" in expr and expr.endswith(")") and
             (expr.startswith("np.ascontiguousarray(") or expr.split(".reshape(")[0]
              in low.c_order)) or \
            expr.startswith(_NEW_ARRAY):
        low.c_order.add(name)


def note_kernel(low, k, env):
    """Note a fused kernel's outputs: each a fresh `np.empty` of the kernel (kernel.py),
    unless the kernel writes into Variables' arrays (its updates or deferred assigns)."""
    if k.updates() or k.deferred:
        return
    for t in k.outputs:
        if t.shape and id(t) in env:
            low.c_order.add(env[id(t)])


def reshape_in_place(low, node, ins, expr):
    """A reshape's `np.ascontiguousarray(x).reshape(...)` as `x.reshape(...)` when x is
    noted (Numba reshapes a C-ordered array as it is)."""
    if node.op in _RESHAPES and len(ins) == 1 and ins[0] in low.c_order:
        head = f"np.ascontiguousarray({ins[0]}).reshape("
        if expr.startswith(head):
            return f"{ins[0]}.reshape(" + expr[len(head):]
    return expr


def filled_scalar(x, env):
    """The scalar's name when array `x` is a 0-d value given dimensions of length 1
    (`expand_dims`/`reshape`: ops.py lowers it as `np.full(shape, scalar)`, the scalar's
    Numba type its dtype), so a broadcast of x is `np.full` of the broadcast's shape with
    the same scalar instead of `np.empty` and a copy loop; else None."""
    nd = x.node
    if nd is None or nd.op not in _RESHAPES or len(nd.inputs) != 1 or \
            nd.inputs[0].shape != () or not x.shape or \
            not all(isinstance(d, int) and d == 1 for d in x.shape) or \
            id(nd.inputs[0]) not in env or nd.outputs[0] is not x:
        return None
    name = env[id(nd.inputs[0])]
    return name if name.isidentifier() else None
