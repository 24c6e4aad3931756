"""Reads of an array that are over before an update overwrites it: the proof that lets
loop_inplace write a recurrence in place.

A prefix sum `out[i] = out[i - 1] + x[i]` stages, per iteration,

    r = getitem(out, i - 1);  s = add(r, x[i]);  out' = setitem(out, s, i)

`out` has two readers, the getitem and the update. Copying `out` for the update costs
O(n) per step (O(n^2) for the loop), yet writing into it changes nothing anybody sees:
every value read from the old `out` is computed before the update runs. That is the
property checked here, for one array value `t` that an update `u` is about to overwrite:

- follow everything that may share `t`'s memory (*aliases*): `t` itself, and the outputs
  of every node that reads an alias, except nodes whose kernels allocate their results
  (ufuncs, reductions, constructors: `makes_new`), which end the walk. A getitem,
  reshape, transpose, Identity, astype (`copy=False`), a control-flow node or anything
  unknown may return a view, so its outputs are aliases too;
- every node met on the walk must come before `u` in the graph's order (both executors
  emit a graph's nodes in that order), so it has read the old values when `u` writes;
- no alias may be the array of another update (it may write in place too), nor an
  output of the graph (the body's next loop value, or a branch's result), nor reach an
  effectful node that could keep it (a Variable's assign, a TensorArray write; `print`
  formats at once and is allowed);
- an alias may reach `u` itself only as a 0-d value (a scalar, read before the write), or,
  where the executor's assignment copes with overlapping memory (NumPy's `x[k] = v` does:
  `overlap_ok`), as a `setitem`'s value.

Nodes the device gives its own kernel are unknown (aliases). The walk is linear in the
nodes it meets; `Readers` indexes a graph once so that many updates share it.
"""

import numpy as np

from autograph.runtime.control_flow import is_effectful
from autograph.runtime.ir import primitives

# kernels that return arrays they allocated (besides every NumPy ufunc): reductions,
# linear algebra products, constructors, and shape queries (they read no data)
_ALLOCATES = frozenset({
    "sum", "prod", "mean", "max", "min", "all", "any", "std", "var", "argmax", "argmin",
    "cumulative_sum", "cumulative_prod", "matmul", "tensordot", "vecdot", "einsum",
    "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "arange",
    "shape_of", "size_of", "concat", "stack", "where", "clip", "sort", "argsort",
})
_KEEPS_NOTHING = frozenset({"print", "progress_open", "progress", "progress_close"})
_UPDATES = ("setitem", "ufunc_at")     # effectful, but keeps no reference to its inputs


def makes_new(node, overridden=()):
    """True when `node`'s outputs are arrays its kernel allocated, never its inputs or
    views of them."""
    op = node.op
    if op in overridden:
        return False
    if op in _ALLOCATES:
        return True
    kernel = primitives.lookup(op).kernel
    return isinstance(kernel, str) and isinstance(getattr(np, kernel, None), np.ufunc)


class Readers:
    """A graph's readers: id(tensor) -> [(node, input position)], with (None, k) for
    output k, and each node's position in the graph's order."""

    def __init__(self, graph):
        self.graph = graph
        readers = {}
        for nd in graph.nodes:
            for p, t in enumerate(nd.inputs):
                readers.setdefault(id(t), []).append((nd, p))
        for k, t in enumerate(graph.outputs):
            readers.setdefault(id(t), []).append((None, k))
        self.of = readers
        self.order = {id(nd): p for p, nd in enumerate(graph.nodes)}

    def get(self, t):
        return self.of.get(id(t), [])


def reads_done(readers, t, update, overridden=(), overlap_ok=False, skip=()):
    """True when every read of `t` (an array value) but `update`'s own `x` input (and the
    readers in `skip`: the chain's next link, checked by its caller) is over before
    `update` writes into `t`, and nothing that may share `t`'s memory outlives it (see the
    module docstring). `update` None: `t` is the last value of a chain, and the reads
    need only be over by the end of the graph."""
    limit = readers.order[id(update)] if update is not None else len(readers.order)
    stack = [(nd, p, t) for nd, p in readers.get(t)
             if not (nd is update and p == 0) and (nd, p) not in skip]
    seen = set()
    while stack:
        nd, p, value = stack.pop()
        if nd is None:
            return False                  # an alias is a result of the graph
        if nd is update:
            if value.shape == () or (overlap_ok and nd.op == "setitem" and p == 1):
                continue
            return False
        if id(nd) in seen:
            continue
        seen.add(id(nd))
        if readers.order[id(nd)] >= limit:
            return False                  # it reads after the write
        if nd.op not in _KEEPS_NOTHING and is_effectful(nd):
            return False
        if nd.op in _UPDATES and p == 0:
            return False                  # another update of it may write in place too
        if makes_new(nd, overridden):
            continue
        for out in nd.outputs:
            stack.extend((r, q, out) for r, q in readers.get(out))
    return True
