"""Which broadcasts and which sums a fused chain's loop indexes directly (fused_chains).

A chain of shape S runs flat when every array operand has shape S. A bias against a batch
of rows, or a row's max kept as a column, broadcasts: such an operand is one block of S
that a two-deep loop over R = prod(S[:k]) rows of C = prod(S[k:]) elements reads with one
index (`splits`: "i", inner, `bias[c]`; "o", outer, `col[r]`). Every broadcast operand of
one chain must agree on k. A chain may end with the sum of one of its values over its
first k axes (`reduction`: a bias gradient's `sum_to_shape`), which the loop adds row by
row into C sums: the order NumPy adds a C-contiguous array in along axis 0, so the sums are
NumPy's bit for bit (fused_kernel.kernel_source writes the loop).
"""

import numpy as np


def splits(in_shape, shape):
    """{k: kind} for the splits 1 <= k < rank at which an array of `in_shape` broadcasts to
    `shape` as one block the two-deep loop indexes directly: "i" (inner) when it is
    shape[k:] (a bias against a batch of rows), "o" (outer) when it is shape[:k] followed
    by ones (a row's max, kept as a column). Empty: some other broadcast (not fused)."""
    n = len(shape)
    if in_shape is None or len(in_shape) > n or \
            not all(isinstance(d, int) for d in in_shape):
        return {}
    padded = (1,) * (n - len(in_shape)) + tuple(in_shape)
    found = {}
    for k in range(1, n):
        if padded == (1,) * k + shape[k:]:
            found[k] = "i"
        elif padded == shape[:k] + (1,) * (n - k):
            found[k] = "o"
    return found



def reduction(node, chain, overridden):
    """The split k when `node` is a `sum_to_shape` of a member of `chain` over its first k
    axes exactly (the axes sum_to_shape's kernel sums, so the fused sum adds what NumPy
    adds), keeping more than one element per row: NumPy then adds the rows in order,
    element by element from +0.0, as the loop does (a single kept element is summed
    pairwise instead, so it is left to NumPy)."""
    if node.op != "sum_to_shape" or node.op in overridden or len(node.inputs) != 1 or \
            id(node.inputs[0]) not in chain.ids:
        return None
    shape, target = chain.shape, node.attrs.get("shape")
    if not isinstance(target, tuple) or not all(isinstance(d, int) for d in target) or \
            len(target) > len(shape) or node.outputs[0].dtype != node.inputs[0].dtype:
        return None
    lead = len(shape) - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(target)
                                      if d == 1 and shape[lead + i] != 1)
    k = len(axes)
    padded = (1,) * lead + target
    if not 0 < k < len(shape) or axes != tuple(range(k)) or padded[k:] != shape[k:] or \
            int(np.prod(shape[k:])) < 2 or chain.split not in (None, k):
        return None
    return k
