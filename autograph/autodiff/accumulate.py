"""Accumulating a loop's cotangent of a captured array row by row, not array by array.

A loop body that reads a loop-invariant array by index (`xs[t]`: an RNN's inputs, an
embedding table `E[ids]`) gets, per backward iteration, the cotangent of that read as a
*scatter*: zeros of the whole array with one row set (the rule of `getitem`, `take`,
`index_get`, ... in runtime/numpy). Adding that to the loop's running total costs a
full-size array per iteration, so the backward loop would be quadratic in the trip count.

`accumulate(acc, ct)` instead looks through the cotangent's sum (`add` nodes that
`add_cts` staged) for such scatters and adds their *rows* into the accumulator with
`ufunc_at(acc, rows, index, ufunc="add")`, whose value is the same (the scatters select
each element once, or add repeats as `np.add.at` does). The graph stays functional: a
second differentiation sees `ufunc_at`, which has its own rule. The executors may update
the accumulator in place, because it is a loop variable whose old value nothing else
reads (runtime/exec/inplace.py proves that for codegen), so a step writes one row. The
scatters and adds the rewrite bypasses are dead and dropped by the optimiser.
"""

import numpy as np

from autograph.runtime.ir.primitives import bind1

_SCATTERS = ("setitem", "ufunc_at")


def _same(t, like):
    return t.dtype == like.dtype and t.shape is not None and like.shape is not None and \
        tuple(t.shape) == tuple(like.shape)


def _terms(ct, like):
    """The summands of cotangent `ct` (a tree of `add` nodes of same-shaped values)."""
    node = ct.node
    if node.op == "add" and len(node.inputs) == 2 and _same(ct, like) and \
            all(_same(t, like) for t in node.inputs):
        return _terms(node.inputs[0], like) + _terms(node.inputs[1], like)
    return [ct]


def scatter_of(t, like):
    """(rows, dynamic index inputs, index attrs) when `t` is rows written into zeros of
    `like`'s shape (`setitem` or `ufunc_at` add on a `zeros` node), else None."""
    node = t.node
    if node.op not in _SCATTERS or not _same(t, like):
        return None
    if node.op == "ufunc_at" and node.attrs.get("ufunc") != "add":
        return None
    base, rows = node.inputs[0], node.inputs[1]
    if base.node.op != "zeros" or rows.dtype != like.dtype:
        return None
    return rows, list(node.inputs[2:]), node.attrs["index"]


def accumulate(acc, ct, fit):
    """acc + ct, staged so that scatters in `ct` add only their rows into `acc` (dense
    terms first, so the row updates form one chain ending at the loop's output). `fit(ct,
    like)` casts or broadcasts a dense term to the accumulator's dtype and shape."""
    if ct is None:
        return acc
    terms = _terms(ct, acc)
    scatters = [s for s in (scatter_of(t, acc) for t in terms) if s is not None]
    if not scatters:
        return fit(np.add(acc, ct), acc)
    out = acc
    for t in terms:
        if scatter_of(t, acc) is None:
            out = np.add(out, fit(t, acc))
    for rows, dynamic, index in scatters:
        out = bind1("ufunc_at", [out, rows] + dynamic, {"index": index, "ufunc": "add"})
    return out
