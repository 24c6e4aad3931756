"""Primitives that refuse a batched input, each with its reason, and the few small rules
that fit no family (a tensor's shape, print).

Refused, because the batch would be ragged (each lane a different output shape, which one
array cannot hold): `nonzero`, `unique`, `bincount`, `repeat`'s indices and the constructors
whose shape is an input (`zeros`, `ones`, `full`, `arange`, `range`, a TensorArray's size,
`ta_concat`).
Refused, because a batched value has no single meaning there: a Variable assignment (a
Variable holds one value, vmap would assign one per lane), a random generator's seed or
construction (one generator state), a dataset's iterator (one stream). Refused, because
the value is a runtime handle with no lane axis: the gradient's per-iteration stacks (vmap
of a function whose graph holds them runs one lane at a time as a whole: api.py) and a
forward-mode tangent list.
"""

import numpy as np

from autograph.runtime.numpy import shape_ops
from autograph.batching.transform import defbatch, rebind, refuse

refuse(("nonzero", "unique", "bincount", "repeat_index"),
       "its output's length depends on the values, so each element would give a different "
       "shape (a ragged batch)")
refuse(("zeros", "ones", "full", "full_of_shape", "arange", "range"),
       "its shape is a per-element value, so each element would give a different shape (a "
       "ragged batch)")
refuse(("assign_variable", "update_variable"),
       "a Variable holds one value, and a per-element value would assign one per element")
refuse(("random_seed", "rng_new"), "a random generator has one state, not one per element")
refuse(("data_source", "data_iter_open", "data_iter_next", "data_iter_close",
        "data_shuffle_order", "data_shuffle_iteration"),
       "a dataset's iterator is one stream that every element would share; iterate the "
       "dataset outside the vmapped function and map over its batches")
refuse("ta_new", "its size is a per-element value, so each element would have a "
       "TensorArray of a different length (a ragged batch)")
refuse("ta_concat", "each element's TensorArray would join elements of per-element lengths "
       "(a ragged batch); use stack() when the elements have one shape")
# a graph holding these runs one lane at a time as a whole (api.py)
GRADIENT_STACKS = ("ad_stack_new", "ad_stack_push", "ad_stack_get", "ad_gl_new", "ad_gl_add",
                   "ad_gl_put", "ad_gl_pop", "ad_gl_from_rows", "ad_gl_scatter",
                   "ad_gl_pop_rows", "ad_gl_get", "ad_gl_gather", "ad_gl_set", "ad_gl_copy",
                   "ad_gl_set_rows", "ad_gl_shift", "ad_ckpt_new", "ad_ckpt_offer",
                   "ad_ckpt_restore")
refuse(GRADIENT_STACKS, "a gradient's per-iteration stack is a runtime handle with no lane axis")
refuse("jvp_zero_handle", "a forward-mode tangent list is a runtime handle with no lane axis")


def shape_of(frame, node, args, batched):
    """The element's shape: the batch's without the lane axis (the same for every lane)."""
    shape = shape_ops.shape_of(args[0])[1:]
    if node.op == "size_of":
        shape = np.prod(shape)
    return [(shape, False)]


def print_batched(frame, node, args, batched):
    """ag.print of a batched value prints the whole batch once, lanes along axis 0."""
    return [(t, False) for t in rebind(node, args)]


def progress_batched(frame, node, args, batched):
    """A progress bar of a loop whose range differs per lane follows the furthest lane
    (one bar for the batch): the smallest start, the largest end, counter and count."""
    lane = [(np.min if (node.op, k) == ("progress_open", 0) else np.max)(a, axis=0) if b else a
            for k, (a, b) in enumerate(zip(args, batched))]
    return [(t, False) for t in rebind(node, lane)]


defbatch(("shape_of", "size_of"), shape_of)
defbatch("print", print_batched)
defbatch(("progress_open", "progress", "progress_close"), progress_batched)
