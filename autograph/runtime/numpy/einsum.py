"""numpy.einsum on symbolic tensors, composed: each operand's repeated labels become
diagonals, every operand is laid out over all labels (size-1 axes for labels it lacks),
the product is taken with broadcasting, and the labels not in the output are summed."""

import numpy as np

from autograph.runtime.ir.dtypes import BOOL
from autograph.runtime.numpy.elementwise import as_tensor, cast, common, ufunc
from autograph.runtime.numpy.reductions import reduction
from autograph.runtime.numpy.shape_ops import need_rank, reshape, transpose


def _parse(subscripts, count):
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise NotImplementedError("numpy.einsum with '...' is not supported while tracing; "
                                  "name every axis")
    if "->" in spec:
        ins, out = spec.split("->")
    else:
        ins = spec
        letters = ins.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = ins.split(",")
    if len(terms) != count:
        raise ValueError(f"numpy.einsum: {len(terms)} operand subscripts for {count} operands")
    return terms, out


def _take_diagonals(x, labels):
    from autograph.runtime.numpy.linalg import diagonal
    while len(set(labels)) < len(labels):
        for i, c in enumerate(labels):
            j = labels.find(c, i + 1)
            if j >= 0:
                x = diagonal(x, 0, i, j)   # the shared axis goes last
                labels = labels[:i] + labels[i + 1:j] + labels[j + 1:] + c
                break
    return x, labels


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    if out is not None:
        raise TypeError("numpy.einsum(..., out=...) cannot write into a symbolic tensor")
    if not operands or not isinstance(operands[0], str):
        raise NotImplementedError("numpy.einsum: only the subscripts-string form is "
                                  "supported while tracing")
    terms, out_labels = _parse(operands[0], len(operands) - 1)
    tensors, result_dtype, _ = common(operands[1:])
    if dtype is not None:
        result_dtype = np.dtype(dtype)
        tensors = [cast(t, result_dtype) for t in tensors]
    laid, all_labels = [], []
    for t, labels in zip(tensors, terms):
        if need_rank(t, "numpy.einsum") != len(labels):
            raise ValueError(f"numpy.einsum: operand has {len(t.shape)} dimensions, "
                             f"subscripts {labels!r}")
        t, labels = _take_diagonals(t, labels)
        laid.append((t, labels))
        all_labels += [c for c in labels if c not in all_labels]
    product = None
    for t, labels in laid:
        present = [c for c in all_labels if c in labels]
        t = transpose(t, tuple(labels.index(c) for c in present))
        t = reshape(t, tuple(t.shape[present.index(c)] if c in labels else 1
                             for c in all_labels)) if len(present) < len(all_labels) else t
        product = t if product is None else ufunc(
            np.logical_and if result_dtype == BOOL else np.multiply, product, t)
    summed = tuple(i for i, c in enumerate(all_labels) if c not in out_labels)
    kept = [c for c in all_labels if c in out_labels]
    if summed:
        product = reduction("any" if result_dtype == BOOL else "sum", product, summed)
    product = cast(product, result_dtype)
    order_ = tuple(kept.index(c) for c in out_labels)
    return transpose(product, order_) if order_ else product
