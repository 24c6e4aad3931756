"""Dead buffers written again: which elementwise nodes of a graph may put their result into
the memory of an input nobody reads any more (`out=` in generated NumPy code).

A training step is chains of elementwise operations on whole parameter-sized arrays.
Adam's update of one parameter, as staged, is ~12 NumPy calls, and each allocates its
result, walks it once and drops an input that is never read again:

    add_6 = multiply_9 + multiply_10        # multiply_9 and multiply_10 die here

NumPy's ufuncs take `out=`: `add_6 = k_add(multiply_9, multiply_10, out=multiply_9)`
computes the same values into `multiply_9`'s memory, which is still in cache, and
allocates nothing. Writing into an input is safe only when that memory is *dead* at the
node: nobody can read the old values afterwards. `plan` proves that, for input `t` of an
elementwise node `n`, from the graph alone:

- `t` owns its memory: its producer is a node of this graph whose kernel allocates its
  result (`inplace_reads.makes_new`: a ufunc, a reduction, a matmul, a constructor). Not a
  graph input (the user's array, a loop's carried value, a captured outer value), not a
  constant, not a Variable's read (`read_variable` returns the Variable's own array), not
  a view (getitem, reshape, transpose, broadcast_to), not anything unknown;
- every read of `t` and of anything that may share its memory (the views taken of it,
  followed transitively: `inplace_reads.reads_done`) comes before `n` in the graph's order,
  which is the order the generated code runs; none of them is a result of the graph, an
  effectful node that could keep a reference (a Variable's `assign` keeps its value: the
  Adam moments are assigned, so they are never overwritten), or another in-place update;
- `n` reads `t` itself, not a view of it, and `n`'s result has exactly `t`'s static shape
  and dtype (no broadcast into a larger array, no casting), at least one dimension (a 0-d
  result is a NumPy scalar, not a buffer), and `t` is not weakly typed;
- `n` is a NumPy ufunc without attributes that the device does not override, so `out=`
  means what it means in NumPy: the values are those of the call without it (NumPy
  computes elementwise ufuncs correctly when `out` is one of the inputs).

`update_variable` (assign_add/assign_sub: `w -= lr * g`) is planned the same way: its
delta, when dead and owned and of the Variable's shape and dtype, receives the new value
(`into=True`: the kernel checks the shapes and dtypes again at run time).

Only the NumPy device uses the plan (`codegen`); the interpreter and other devices keep
allocating. `benchmarks` case 14 measures what it saves; `tests/runtime/test_buffer_reuse.py`
counts the buffers and checks results against the interpreter, including graphs where
writing in place would be wrong (an input read later, a view of it alive, an assigned
value, a returned value).
"""

import numpy as np

from autograph.runtime.ir import primitives
from autograph.runtime.exec import inplace_reads


def _ufunc_op(node, overridden):
    """True when `node` runs a NumPy ufunc of one result without attributes."""
    if node.attrs or len(node.outputs) != 1 or node.op in overridden:
        return False
    try:
        kernel = primitives.lookup(node.op).kernel
    except NotImplementedError:
        return False
    return isinstance(kernel, str) and isinstance(getattr(np, kernel, None), np.ufunc)


def _fits(t, out):
    """`out` may live in `t`'s memory: same static shape (at least 1-d) and dtype."""
    shape = t.shape
    return (shape is not None and len(shape) > 0 and shape == out.shape
            and all(isinstance(d, int) for d in shape) and t.dtype == out.dtype
            and not t.weak)


def _candidates(node, overridden):
    """Input positions of `node` whose memory could take its result, in order."""
    if node.op == "update_variable":
        ok = (len(node.inputs) == 1 and _fits(node.inputs[0], node.inputs[0])
              and node.attrs.get("operand_dtype") == node.attrs.get("dtype")
              and node.inputs[0].dtype == node.attrs.get("dtype"))
        return (0,) if ok else ()
    if not _ufunc_op(node, overridden):
        return ()
    out = node.outputs[0]
    return tuple(p for p, t in enumerate(node.inputs) if _fits(t, out))


def plan(graph, overridden=()):
    """{id(node): position of the input whose memory receives the node's result} for
    `graph`'s nodes (not those of its subgraphs: each is planned when it is emitted)."""
    found = {}
    readers = None
    own = None
    for node in graph.nodes:
        positions = _candidates(node, overridden)
        if not positions:
            continue
        if readers is None:
            readers = inplace_reads.Readers(graph)
            own = {id(nd) for nd in graph.nodes}
        for p in positions:
            t = node.inputs[p]
            producer = t.node
            if id(producer) not in own or not inplace_reads.makes_new(producer, overridden):
                continue
            direct = {(node, q) for q, u in enumerate(node.inputs) if u is t}
            if inplace_reads.reads_done(readers, t, node, overridden, skip=direct):
                found[id(node)] = p
                break
    return found
