"""Accumulating a loop's cotangent of a captured array row by row, not array by array.

A loop body that reads a loop-invariant array by index (`xs[t]`: an RNN's inputs, an
embedding table `E[ids]`) gets, per backward iteration, the cotangent of that read as a
*scatter*: zeros of the whole array with one row set (the rule of `getitem`, `take`,
`index_get`, ... in runtime/numpy). Adding that to the loop's running total costs a
full-size array per iteration, so the backward loop would be quadratic in the trip count.

`accumulate(acc, ct)` instead looks through the cotangent's sum (`add` nodes and
`ufunc_at` chains that `add_cts` staged) for such scatters and adds their *rows* into the accumulator with
`ufunc_at(acc, rows, index, ufunc="add")`, whose value is the same (the scatters select
each element once, or add repeats as `np.add.at` does). The graph stays functional: a
second differentiation sees `ufunc_at`, which has its own rule. The executors may update
the accumulator in place, because it is a loop variable whose old value nothing else
reads (runtime/exec/inplace.py proves that for codegen), so a step writes one row. The
scatters and adds the rewrite bypasses are dead and dropped by the optimiser.

`add(a, b)` (what `transform.add_cts` uses for arrays) does the same for two cotangents
of one value outside loops, e.g. a Python loop that tracing unrolls: the rows of one are
added into the other, a chain of `ufunc_at`s that codegen runs in place
(runtime/exec/loop_inplace.py), instead of one full-size sum per read.
"""

import numpy as np

from autograph.runtime.ir.graph import staged_for
from autograph.autodiff.transform import gradient_origin
from autograph.runtime.ir.primitives import bind1

_SCATTERS = ("setitem", "ufunc_at")


def _same(t, like):
    return t.dtype == like.dtype and t.shape is not None and like.shape is not None and \
        tuple(t.shape) == tuple(like.shape)


def _terms(ct, like):
    """The summands of cotangent `ct` of a value shaped like `like`: ("rows", rows, dynamic
    inputs, index, origin) for rows added at an index, ("dense", tensor) for the others. Looks
    through `add` nodes, `ufunc_at` adds and `setitem`s into zeros (what `add_cts` and the
    rules of indexing stage)."""
    node = ct.node
    if not _same(ct, like):
        return [("dense", ct)]
    if node.op == "add" and len(node.inputs) == 2 and all(_same(t, like) for t in node.inputs):
        return _terms(node.inputs[0], like) + _terms(node.inputs[1], like)
    if node.op == "zeros":
        return []
    rows = node.inputs[1] if node.op in _SCATTERS else None
    if rows is None or rows.dtype != like.dtype or \
            (node.op == "ufunc_at" and node.attrs.get("ufunc") != "add"):
        return [("dense", ct)]
    base = node.inputs[0]
    if node.op == "setitem" and base.node.op != "zeros":
        return [("dense", ct)]       # (an overwrite: not a sum)
    return _terms(base, like) + [("rows", rows, list(node.inputs[2:]), node.attrs["index"],
                                  node.origin)]


def accumulate(acc, ct, fit=None):
    """acc + ct, staged so that rows that `ct` adds at an index are added into `acc` alone
    (`ufunc_at`), dense terms first, so that the row updates form one chain ending at the
    result. `fit(ct, like)` casts or broadcasts a dense term to acc's dtype and shape."""
    if ct is None:
        return acc
    fit = fit or (lambda t, like: t)
    terms = _terms(ct, acc)
    if not any(term[0] == "rows" for term in terms):
        return fit(np.add(acc, ct), acc)
    out = acc
    for term in terms:
        if term[0] == "dense":
            out = np.add(out, fit(term[1], acc))
    for term in terms:
        if term[0] == "rows":
            _, rows, dynamic, index, origin = term
            with staged_for(gradient_origin(origin)):   # the read's line (backward work)
                out = bind1("ufunc_at", [out, rows] + dynamic,
                            {"index": index, "ufunc": "add"})
    return out


def add(a, b):
    """a + b for two cotangents of one value, rows at an index added by `ufunc_at` into
    the other (a chain that codegen updates in place: an unrolled loop reading `xs[t]`)."""
    if any(term[0] == "rows" for term in _terms(b, a)):
        return accumulate(a, b)
    if any(term[0] == "rows" for term in _terms(a, b)):
        return accumulate(b, a)
    return np.add(a, b)
