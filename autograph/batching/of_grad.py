"""vmap of a gradient: `ag.vmap(ag.grad(f, argnums), in_axes)`, per-example gradients.

The gradient of a loop keeps one stack of values per iteration (autodiff/stacks.py): a
runtime handle, which has no lane axis and cannot be batched (each lane stops after its
own number of iterations). So vmap of a gradient is computed the other way round, by an
exact identity: the elements are independent, so the gradient of

    sum over lanes i of f(a_i, b_i, ...)

with respect to the stacked differentiated arguments A = [a_i] has as its row i the
gradient of f at element i. The differentiated arguments are given a lane axis (a copy per
lane where they are unmapped), f is vmapped (compacted loops, partitioned conds), summed,
and differentiated once by the reverse-mode transform: one batched forward and one batched
backward pass, instead of one gradient per lane.

`ag.grad` marks the function it returns with `__ag_grad__ = (f, argnums, has_aux)`; a
function that only calls a gradient inside is batched as any other (its gradient stacks
then run one lane at a time: api.py).
"""

import numpy as np

from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.shape_ops import dim


def vmap_of_grad(spec, in_axes, out_axes, vmap):
    f, argnums, has_aux = spec
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    gradients = {}     # in_axes as applied -> the gradient function (traced once per signature)

    def gradient_of_sum(specs):
        key = repr(specs)       # (a spec may hold dicts and lists)
        if key not in gradients:
            from autograph.autodiff.api import grad
            from autograph.function import function
            per_lane = vmap(f, in_axes=specs)

            def summed(*a):
                out = per_lane(*a)
                if has_aux:
                    value, aux = out
                    return np.sum(value), aux
                return np.sum(out)
            summed.__name__ = f"summed_{getattr(f, '__name__', 'f')}"
            # (autograph=False: `summed` is ours; `f` is converted when vmap traces it)
            gradients[key] = grad(function(summed, autograph=False), argnums, has_aux)
        return gradients[key]

    def batched(*args):
        from autograph.batching.api import _leaf_axes
        specs = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        if len(specs) != len(args):
            raise ValueError(f"vmap in_axes {in_axes!r} has {len(specs)} entries but the "
                             f"gradient was called with {len(args)} positional arguments")
        axes = [_leaf_axes(s, a, "in_axes") for s, a in zip(specs, args)]
        mapped = [(leaf, ax) for a, ax_list in zip(args, axes)
                  for leaf, ax in zip(nest.flatten(a), ax_list) if ax is not None]
        if not mapped:
            raise ValueError("vmap: in_axes must map at least one argument (every one is None)")
        lanes = dim(*mapped[0]) if isinstance(mapped[0][0], Tensor) else \
            np.shape(mapped[0][0])[mapped[0][1]]
        args, specs = list(args), list(specs)
        for i in nums:         # every differentiated leaf gets its own copy per lane
            leaves = [np.moveaxis(leaf, ax, 0) if ax is not None else
                      np.broadcast_to(leaf, (lanes,) + np.shape(leaf))
                      for leaf, ax in zip(nest.flatten(args[i]), axes[i])]
            args[i] = nest.pack_sequence_as(args[i], leaves)
            specs[i] = 0

        out = gradient_of_sum(tuple(specs))(*args)
        if out_axes == 0:
            return out
        out_spec = _leaf_axes(out_axes, out, "out_axes")
        leaves = [np.moveaxis(leaf, 0, ax) if ax not in (None, 0) else leaf
                  for leaf, ax in zip(nest.flatten(out), out_spec)]
        return nest.pack_sequence_as(out, leaves)
    return batched
