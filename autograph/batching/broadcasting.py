"""Batching rules of the elementwise family: every ufunc (NumPy's and SciPy's), casts,
`where`, `clip` and the other primitives whose inputs broadcast against each other.

The lane axis is axis 0 of every batched input. NumPy broadcasts from the right, so a
batched input whose element has fewer axes than the widest element gets unit axes right
after the lane axis; unbatched inputs broadcast as they are. One node, no copies.
"""

import numpy as np

from autograph.batching.transform import defbatch, deffamily, rank, rebind

# the elementwise primitives not made by elementwise.Elementwise (which are found by their
# shape rule: `is_elementwise`) nor named special_* (SciPy's ufuncs)
NAMES = ("Cast", "astype", "where", "clip", "round_decimals", "real", "imag", "Identity",
         "stop_gradient", "positive_bool", "gcd", "lcm", "nextafter", "spacing",
         "zeros_like", "ones_like", "full_like")


def align(node, args, batched):
    """The inputs with unit axes after the lane axis, so that they broadcast per lane."""
    ranks = [rank(a, node) - (1 if b else 0) for a, b in zip(args, batched)]
    widest = max(ranks)
    out = []
    for a, b, r in zip(args, batched, ranks):
        if b and r < widest:
            a = np.expand_dims(a, tuple(range(1, 1 + widest - r)))
        out.append(a)
    return out


def elementwise(frame, node, args, batched):
    return [(t, True) for t in rebind(node, align(node, args, batched))]


def is_elementwise(prim):
    """Is `prim` a ufunc of the NumPy surface or SciPy's (its shape rule says so)?"""
    owner = getattr(prim.infer, "__self__", None)
    return (type(owner).__name__ == "Elementwise" and
            type(owner).__module__ == "autograph.runtime.numpy.elementwise") or \
        prim.name.startswith("special_")


defbatch(NAMES, elementwise)
deffamily(is_elementwise, elementwise)
