"""The per-lane rule: a primitive run once per lane in a staged loop, its results stacked.

For primitives with no vectorised rule yet (linear algebra, FFTs, polynomial and set
helpers, random draws with batched parameters, indexing with several per-lane indices)
the batch is computed as TensorFlow's `vectorized_map` falls back to: a `while_loop` over
the lanes whose body applies the primitive to lane `i` and writes its outputs into
TensorArrays, stacked after the loop. The result is exact and its work is the batch size
times one call; what it costs is the per-call overhead. Outputs must have the same shape
on every lane (a lane whose shape differs fails when the TensorArray stacks them).
"""

import numpy as np

from autograph.runtime import control_flow
from autograph.runtime.ir import primitives
from autograph.runtime.tensor_array import TensorArray
from autograph.batching.transform import defbatch, refused_error

HANDLE = np.dtype(object)


def lane_loop(frame, node, args, batched, fn=None):
    """`fn(lane_args) -> outputs` (default: the node's primitive) for every lane."""
    if any(t.dtype == HANDLE for t in node.outputs):
        raise refused_error(node, "its output is a handle (a list-like runtime object), "
                            "which has no lane axis")
    fn = fn or (lambda lane: list(primitives.bind(node.op, lane, node.attrs).outputs))
    n = frame.size

    def cond(i, *_):
        return i < n

    def body(i, *tas):
        lane = [a[i] if b else a for a, b in zip(args, batched)]
        outs = fn(lane)
        return [i + 1] + [ta.write(i, o) for ta, o in zip(tas, outs)]

    tas = [TensorArray(t.dtype, size=n, element_shape=t.shape) for t in node.outputs]
    start = primitives.constant(np.int64(0))
    _, *tas = control_flow.while_loop(cond, body, [start] + tas)
    return [(ta.stack(), True) for ta in tas]


# No vectorised rule yet: correct one lane at a time (docs/vmap.md lists them)
PER_LANE = (
    # linear algebra and transforms
    "tensordot", "solve", "eigh", "eigvalsh", "qr", "svd", "svdvals", "pinv", "matrix_rank",
    "lstsq", "diagonal", "tril", "triu", "det", "slogdet", "inv", "cholesky", "eig", "fft",
    "polymul", "searchsorted", "take_along_axis", "add_along_axis",
    # random draws whose parameters differ per lane, in lane order
    "random",
    # checks that raise for one lane (the message names the value, as without vmap)
    "assert", "check_bound",
    # a custom gradient's (or custom JVP's) forward function is a graph of its own
    "custom_gradient", "custom_jvp",
    # assumed shapes of the gradient of a cond (autodiff/conds.py)
    "ad_assume_shape",
    # a loaded model's bounded loop counter (saved_model/loop_limit.py): per lane, so the
    # lane that reaches the bound raises
    "loop_count",
)
defbatch(PER_LANE, lane_loop)
