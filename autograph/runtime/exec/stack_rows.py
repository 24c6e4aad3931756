"""A value a differentiated loop stores, computed straight into its stack row (`out=` in
generated NumPy code).

A stack whose values are the rows of one buffer (autodiff/stack_buffers.py) copies each
pushed array into its row. When the pushed value is the result of a NumPy ufunc in the
same loop body (an RNN's state: `h = tanh(h @ W + x_t)`, pushed for the backward pass),
codegen writes

    h = k_tanh(add, out=k_ad_stack_next(states_1, add, h_row))
    ...
    states_1 = k_ad_stack_push(xp, states_1, trip_count, h)

`ad_stack_next` (autodiff/stacks.py) lends the row after the highest one pushed so far
when the stack is buffered and the row has the result's static shape and dtype (`h_row`),
and otherwise returns the memory the node would have used anyway (a dead input that
exec/buffer_reuse.py chose, or None: a new array). The push that follows finds the value
already in its row and copies nothing; a push of anything else where a row was lent turns
the stack back into references (the lent row is never written twice). The values are
those of the ufunc without `out=` (NumPy computes an elementwise ufunc into any array of
its result's shape and dtype).

Which nodes (`plan`): a ufunc of one result, no attributes, not overridden by the device,
of a fully known static shape with at least one dimension and a numeric dtype, whose
result is the value of an `ad_stack_push` of the same graph whose stack is a graph input
or made before the node. Writing into the row aliases nothing new: the value already was
the stack's (a push keeps a reference), so exec/inplace_reads.py and exec/buffer_reuse.py
never write into it after it is made, as before.
"""

import numpy as np

from autograph.runtime.exec.buffer_reuse import _ufunc_op
from autograph.runtime.ir import primitives


def plan(graph, overridden=()):
    """{id(node): the stack handle tensor its result is pushed onto} for `graph`'s nodes
    (none when the device's push kernel offers no `next_row`)."""
    if "ad_stack_push" in overridden or _next_row() is None:
        return {}
    pushed = {}
    for nd in graph.nodes:
        if nd.op == "ad_stack_push" and len(nd.inputs) == 3:
            pushed.setdefault(id(nd.inputs[2]), nd.inputs[0])
    if not pushed:
        return {}
    order = {id(nd): p for p, nd in enumerate(graph.nodes)}
    found = {}
    for p, nd in enumerate(graph.nodes):
        if len(nd.outputs) != 1:
            continue
        out = nd.outputs[0]
        handle = pushed.get(id(out))
        if handle is None or out.shape is None or not out.shape or None in out.shape or \
                out.dtype.kind not in "biufc" or not _ufunc_op(nd, overridden):
            continue
        made = order.get(id(handle.node))
        if handle.node.op != "Placeholder" and (made is None or made >= p):
            continue
        found[id(nd)] = handle
    return found


def _next_row():
    try:
        return getattr(primitives.lookup("ad_stack_push").kernel, "next_row", None)
    except NotImplementedError:
        return None


def out_expression(codegen, node, handle_name, fallback):
    """The `out=` argument of `node`: its stack's next row, else `fallback`."""
    out = node.outputs[0]
    fn = getattr(codegen, "stack_next_row", None)     # (bound once per compilation)
    if fn is None:
        fn = codegen.stack_next_row = codegen.bind("k_ad_stack_next", _next_row())
    # (plain data: the trace cache keeps it; stacks.next_row compares it with the buffer's)
    row = codegen.bind(f"{node.name}_row", (tuple(int(d) for d in out.shape),
                                            np.dtype(out.dtype).str))
    return f"{fn}({handle_name}, {fallback or 'None'}, {row})"
