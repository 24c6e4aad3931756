"""Loop-invariant transposes that a loop's matmuls read are made contiguous once, before it.

The backward loop of `h @ W` computes `ct @ W.T` every step. `W.T` is loop-invariant, so
`optimize.hoist_invariants` moves it before the loop, but it stays what NumPy's
`transpose` gives: a strided view (Fortran order). A matmul whose operand is such a view
runs BLAS's transposed-operand kernel, and for the small products of a recurrence
(32x64 @ 64x64) that costs 1.4x the same product on a C-ordered matrix (11.1 us against
7.9 us, OpenBLAS, one thread). Copying the transpose once into C order before the loop
costs one pass over W; every iteration then runs the faster kernel
(benchmarks/loop_gradient_layout.py measures both).

`contiguous_operands(graph)` does that for every while_loop node of `graph`: a capture
whose outer value is a `permute_dims` node (hoisted there or written so by the user) and
that a `matmul` of the loop body reads gets, in the graph that holds the loop, a C-ordered
copy: `reshape(reshape(t, (-1,)), shape)`: NumPy's reshape of a non-contiguous array to
one axis copies it in C order, and the reshape back is a view of that copy. The values are
the same, so every executor (codegen, the interpreter, native code) stays correct; only
static shapes are handled. The body and its placeholders are unchanged: the loop gets
the copy in place of the view as its input.

Memory: one copy of each such matrix per loop run (the size of an input the loop already
reads), never anything per iteration. In nested loops the copy moves out of the outer
loops with the transpose (a reshape between static shapes of one size is in hoisting's
SAFE set: it cannot raise).
"""

_READERS = frozenset({"matmul"})


def contiguous_operands(graph):
    """Give each while_loop of `graph` (not its subgraphs: optimize recurses) a C-ordered
    copy of every captured transpose its body's matmuls read. Returns how many."""
    made = 0
    for node in list(graph.nodes):
        if node.op == "while_loop":
            made += _loop(graph, node)
    return made


def _loop(graph, loop):
    bg, cg = loop.attrs["body_graph"], loop.attrs["cond_graph"]
    n = len(loop.outputs)
    n_caps = len(bg.inputs) - n
    read = {id(t) for nd in bg.nodes if nd.op in _READERS for t in nd.inputs}
    made = 0
    inputs = list(loop.inputs)
    for i in range(n_caps):
        ph, outer = bg.inputs[n + i], inputs[n + i]
        if id(ph) not in read or not _strided_transpose(outer):
            continue
        copy = _c_ordered(graph, loop, outer)
        inputs[n + i] = copy
        for g in (bg, cg):         # (what readers such as the DOT view follow)
            g.captures.pop(id(outer), None)
            g.captures[id(copy)] = (copy, g.inputs[n + i])
        made += 1
    if made:
        loop.inputs = type(loop.inputs)(inputs)
    return made


def _strided_transpose(t):
    """A permute_dims output of static shape whose last axis is not its input's last: its
    matrices' rows are strided, so BLAS runs its transposed kernel on them (a permutation
    keeping the last axis leaves rows contiguous, which BLAS reads as they are)."""
    nd = t.node
    if nd.op != "permute_dims" or t.shape is None or None in t.shape or len(t.shape) < 2:
        return False
    axes = tuple(nd.attrs["axes"])
    return axes[-1] != len(axes) - 1 and all(d > 1 for d in t.shape[-2:]) and \
        all(d > 0 for d in t.shape)


def _c_ordered(graph, loop, t):
    """`reshape(reshape(t, (-1,)), t.shape)` placed just before `loop` in `graph`."""
    size = 1
    for d in t.shape:
        size *= d
    flat = graph._append("reshape", [t], {"shape": (-1,)}, [(t.dtype, (size,), t.weak)],
                         f"{t.node.name}_flat", t.node.origin)
    back = graph._append("reshape", [flat.outputs[0]], {"shape": tuple(t.shape)},
                         [(t.dtype, tuple(t.shape), t.weak)], f"{t.node.name}_contiguous",
                         t.node.origin)
    for nd in (flat, back):
        graph.nodes.remove(nd)
    at = graph.nodes.index(loop)
    graph.nodes[at:at] = [flat, back]
    return back.outputs[0]

