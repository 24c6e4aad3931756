"""The gradient of a loop-invariant weight as one product after the backward loop, where
that pays: a small batch against the weight's size.

A loop body `h = tanh(h @ W + x_t)` gives, per backward iteration, the cotangent of the
captured weight `W` (or of a watched `ag.Variable` read in the loop) as `h_{t-1}.T @ dz_t`, (K, B) @ (B, H), and the backward loop adds it
into an accumulator. With a batch B much smaller than K and H that is a rank-B update of
the whole K x H accumulator every step, memory-bound: at B = 1, H = 256, T = 1000, 298 ms
for the accumulation, where one (K, T*B) @ (T*B, H) product over the stored factors
takes 5.5 ms (`python -m benchmarks.loop_weight_gradients --shapes`). So when the
cotangent is exactly `matmul(permute_dims(X, (1, 0)), G)` with static 2-D shapes (B, K)
and (B, H), the backward loop writes X and G into two TensorArrays
(one row each per step: `ta_write` at the step's index) instead of accumulating, and after
the loop the cotangent is

    reshape(stack(Xs), (-1, K)).T @ reshape(stack(Gs), (-1, H))

the same sum in another order (results agree to rounding), when `_pays` says so (a batch
of one, or a small batch against an accumulator too big for the near caches). It costs
T * B * (K + H) stored values, which at such a batch is small against the states the loop
already keeps.
At a larger batch (benchmark case 11: B = 32, K = H = 64) the per-step products read
factors that are in cache and the large product streams them from memory, and it does
not pay (benchmarks/results/20261127-loop-weight-gradients.md): those loops are left as
they are. Everything staged is ordinary TensorArray and NumPy nodes, with their own rules:
the gradient runs in every executor, in native code, and can be differentiated again.
"""

import numpy as np

from autograph.runtime.ir import primitives

MIN_RATIO = 8               # (see _pays)
MIN_ACCUMULATOR = 1 << 18   # bytes


def _pays(b, k, h, itemsize):
    """Measured (one core, `python -m benchmarks.loop_weight_gradients`-style A/B of the
    whole value_and_grad, T = 1000): B = 1 wins at every size (rank-1 updates: H = 64
    2.3x, H = 256 8.4x faster); B = 4 and 8 at H = 256 win (2.0x, 1.5x), where the K x H
    accumulator (512 KiB) no longer stays in the near caches; B = 4 and 8 at H = 128
    (128 KiB) lose 5-9%, B = 2, 3 at H = 64 are even to 10% better, B = 32 at H = 64 (case
    11) loses."""
    return b == 1 or (k * h * itemsize >= MIN_ACCUMULATOR and MIN_RATIO * b < min(k, h))


def factors(ct, like):
    """(X, G) when cotangent `ct` of a capture shaped like `like` is X.T @ G of 2-D static
    shapes where the batch is small enough; else None."""
    if ct is None or ct.node.op != "matmul" or ct.node.attrs or len(ct.node.inputs) != 2:
        return None
    a, g = ct.node.inputs
    if a.node.op != "permute_dims" or tuple(a.node.attrs.get("axes", ())) != (1, 0):
        return None
    x = a.node.inputs[0]
    shapes = (x.shape, g.shape, ct.shape, like.shape)
    if any(s is None or len(s) != 2 or None in s for s in shapes):
        return None
    (b, k), (b2, h) = x.shape, g.shape
    if b != b2 or tuple(ct.shape) != (k, h) or tuple(like.shape) != (k, h):
        return None
    if not (x.dtype == g.dtype == ct.dtype == like.dtype) or x.dtype.kind not in "fc":
        return None
    if not _pays(b, k, h, x.dtype.itemsize):
        return None
    return x, g


def new_rows(trips):
    """A TensorArray handle of `trips` elements (staged before the backward loop)."""
    return primitives.bind1("ta_new", [trips], {"dynamic_size": False})


def write_row(handle, index, value):
    return primitives.bind1("ta_write", [handle, index, value])


def product(xs_handle, gs_handle, x, g):
    """The cotangent after the loop: reshape(stack(Xs)).T @ reshape(stack(Gs))."""
    (_, k), (_, h) = x.shape, g.shape
    xs = primitives.bind1("ta_stack", [xs_handle], {"dtype": x.dtype,
                                                    "element_shape": tuple(x.shape),
                                                    "size": None})
    gs = primitives.bind1("ta_stack", [gs_handle], {"dtype": g.dtype,
                                                    "element_shape": tuple(g.shape),
                                                    "size": None})
    return np.matmul(np.permute_dims(np.reshape(xs, (-1, k)), (1, 0)),
                     np.reshape(gs, (-1, h)))
