"""Shared pieces of the reverse-mode (VJP) rules of the NumPy primitives.

Each family registers its rules next to its primitives (`defvjp(name, rule)`,
`nondifferentiable(...)`, see autograph.runtime.ir.primitives); the helpers here turn an
output cotangent into an input cotangent of the right shape and dtype:

- `fit(ct, x, others)`: sum a broadcast cotangent back to the shape of input `x` (the
  `sum_to_shape` primitive, which reads lengths unknown while tracing when the graph runs),
  cast it to x's dtype, and give no cotangent (None) to integer and boolean inputs.
- `dims(x)`: x's shape as a list of Python ints and, for lengths unknown while tracing,
  int64 scalar tensors (reading only x's shape when the graph runs).
- `zeros(x)`: zeros of x's shape and dtype (the start of a scatter).

Complex numbers follow JAX's convention: a rule computes the transpose of the linear map
`dx -> dy` under the real pairing <a, b> = Re(sum(a * b)) (no conjugation). For a
holomorphic f the input cotangent is `ct * f'(x)`; for a real loss L of complex z the
cotangent is dL/dRe(z) - i dL/dIm(z), the conjugate of the steepest-ascent direction
(as `jax.grad`; TensorFlow returns its conjugate).
"""

from autograph.runtime.ir.primitives import bind1


class Ref:
    """Input or output `i` of the node a rule differentiates: its static dtype and shape
    without touching its value (inside a loop's backward pass, reading a primal value
    means storing it per iteration), and `.value`, the primal tensor (read on use)."""

    __slots__ = ("dtype", "shape", "weak", "_lazy", "_i")

    def __init__(self, static, lazy, i):
        self.dtype, self.shape, self.weak = static.dtype, static.shape, static.weak
        self._lazy, self._i = lazy, i

    @property
    def value(self):
        return self._lazy[self._i]

    def __repr__(self):
        return f"<Ref {self._i} {self.dtype} {self.shape}>"

    def __array__(self, *_, **__):
        # a rule that hands a Ref to NumPy would stage an object constant and give a
        # silently wrong gradient: refuse, so the rule is fixed to use `.value`
        raise TypeError(f"{self!r} is a gradient rule's reference to a primal value; use "
                        "its .value (the tensor) or its static .dtype/.shape")


def ins(node):
    """The node's inputs as Refs (static metadata now, values on use)."""
    static = getattr(node, "node", node).inputs
    return [Ref(t, node.inputs, i) for i, t in enumerate(static)]


def outs(node):
    static = getattr(node, "node", node).outputs
    return [Ref(t, node.outputs, i) for i, t in enumerate(static)]


def needs(node, i):
    """Whether input i wants a cotangent (the transform says which inputs are active)."""
    wanted = getattr(node, "needs", None)
    return wanted is None or bool(wanted[i])


def value(x):
    """A Ref's primal tensor (a Tensor is itself)."""
    return x.value if isinstance(x, Ref) else x


def differentiable(x):
    """Whether a tensor of x's dtype carries a cotangent (floating and complex only)."""
    return x.dtype.kind in "fc"


def dims(x):
    """x's shape: Python ints, and int64 scalar tensors for lengths unknown while tracing."""
    from autograph.runtime.numpy.shape_ops import dim
    if x.shape is None:
        raise NotImplementedError(
            f"a gradient rule needs the rank of {x!r}, unknown while tracing: an argument "
            "traced without a known rank (give it a TensorSpec with one), or a cond or loop "
            "that joins values of different ranks (a scalar and an array: make them the "
            "same shape, e.g. np.full_like)")
    return [d if d is not None else dim(value(x), i) for i, d in enumerate(x.shape)]


def _may_broadcast(x, shape, others):
    """Whether x may have been broadcast to `shape` along some axis. `others`: the
    operands x was broadcast against (None: unknown, e.g. broadcast_to's target): a
    length of x unknown while tracing cannot have been stretched where every other
    operand has length 1 or no axis."""
    if x.shape is None or shape is None or len(x.shape) != len(shape):
        return True
    n = len(shape)
    for i, (d, s) in enumerate(zip(x.shape, shape)):
        if d is not None and s is not None:
            if d != s:
                return True
            continue
        if d is not None and d != 1:
            continue      # a known length other than 1 is never stretched
        if others is None:
            return True
        for o in others:
            if o.shape is None:
                return True
            j = i - (n - len(o.shape))
            if j >= 0 and o.shape[j] != 1:
                return True
    return False


def sum_to(ct, x, others=None):
    """`ct` summed over the axes along which `x` was broadcast (the transpose of
    broadcasting `x` against `others` to ct's shape)."""
    if not _may_broadcast(x, ct.shape, others):
        return ct
    from autograph.runtime.numpy.shape_ops import shape_arg
    spec, dynamic = shape_arg(dims(x), "the shape of a cotangent")
    if ct.shape is not None and not dynamic and tuple(ct.shape) == spec:
        return ct
    return bind1("sum_to_shape", (ct,) + tuple(dynamic), {"shape": spec})


def cast_like(ct, x):
    """`ct` in x's dtype: a complex cotangent of a real input keeps its real part."""
    from autograph.runtime.numpy.elementwise import cast
    if ct.dtype == x.dtype:
        return ct
    if ct.dtype.kind == "c" and x.dtype.kind != "c":
        ct = bind1("real", (ct,))
    return cast(ct, x.dtype, weak=ct.weak and x.weak)


def fit(ct, x, others=None):
    """The cotangent of input `x` from `ct` (broadcast result shape, result dtype):
    None for no cotangent, else summed to x's shape and cast to x's dtype."""
    if ct is None or not differentiable(x):
        return None
    return cast_like(sum_to(ct, x, others), x)


def zeros(x, dtype=None):
    """Zeros of x's shape (lengths unknown while tracing are read when the graph runs)."""
    from autograph.runtime.numpy.array_ops import zeros as _zeros
    return _zeros(dims(x), dtype=dtype or x.dtype)


def expand_reduced(ct, x, axis, keepdims):
    """A reduction's cotangent `ct` broadcast back over x's shape (axis: tuple or None)."""
    from autograph.runtime.numpy.shape_ops import broadcast_to, expand_dims
    if axis is None and x.shape is None:
        # a reduction of everything needs no rank: its cotangent (a scalar, or all-ones
        # dimensions with keepdims) broadcasts against x
        import numpy as np
        return np.add(np.zeros_like(value(x)), ct)
    if axis is None:
        axis = tuple(range(len(x.shape)))
    if not keepdims and axis:
        ct = expand_dims(ct, tuple(axis))
    return broadcast_to(ct, dims(x))


def count(x, axis):
    """How many elements of x a reduction over `axis` sees: a Python int when known while
    tracing, else an int64 scalar tensor."""
    if axis is None and x.shape is None:
        import numpy as np
        return np.size(value(x))
    if axis is None:
        axis = tuple(range(len(x.shape)))
    n = 1
    for d in (dims(x)[a] for a in axis):
        n = n * d
    return n
