"""Which TensorArrays `jit_compile=True` lowers to a preallocated array, and how.

A TensorArray is a Python object at run time; native code has arrays only. It lowers when
the graph provably writes every element exactly once before the one `stack` that reads it:
then an uninitialised `np.empty` buffer written in place is complete when stacked. Two
patterns qualify: a counter loop from 0 to the fixed size writing at the counter
(`fill_plan`, codegen's rule), and writes at constant indices in straight-line code (an
unrolled Python `for`, `chain_plan`).
"""

import numpy as np

from autograph.runtime.exec.codegen import (_constant_of, _counter_loop, _only_reader,
                                            _readers, _uses)

def fill_plan(graph, new, consts):
    """(while_loop, ta_write, ta_stack, None, buffer shape, dtype) when the TensorArray
    that ta_new `new` makes is filled by a counter loop from 0 to its fixed size, one
    write per element at the counter, then stacked once and not otherwise used (so an
    uninitialised buffer is complete after the loop); else None. Codegen's rule without
    its minimum loop length (a native loop has no per-iteration cost to amortise)."""
    if new.attrs.get("dynamic_size", True):
        return None
    consts = dict(consts)
    consts.update((id(nd.outputs[0]), nd.attrs["value"]) for nd in graph.nodes
                  if nd.op == "Const")
    size = consts.get(id(new.inputs[0]))
    if size is None or np.ndim(size) != 0 or np.asarray(size).dtype.kind not in "iu":
        return None
    loop, j = _only_reader(graph, new.outputs[0], "while_loop")
    n = 0 if loop is None else len(loop.outputs)
    if loop is None or j >= n or loop.attrs["maximum_iterations"] is not None:
        return None
    # (the loop's initial values left out: codegen's short-loop rule reads them)
    c = _counter_loop(loop, {k: v for k, v in consts.items()
                             if all(id(t) != k for t in loop.inputs[:n])})
    if c is None or c.extra is not None or c.step != 1 or c.shift != 0:
        return None
    cg, bg = loop.attrs["cond_graph"], loop.attrs["body_graph"]
    start, limit = consts.get(id(loop.inputs[c.k])), _constant_of(loop, cg, c.limit, consts)
    if start is None or limit is None or int(start) != 0 or int(limit) != int(size):
        return None
    write, p = _only_reader(bg, bg.inputs[j], "ta_write")
    if write is None or p != 0 or _uses(cg, cg.inputs[j]) or \
            write.inputs[1] is not bg.inputs[c.k] or \
            _readers(bg, write.outputs[0]) != [(None, j)]:
        return None
    value = write.inputs[2]
    if value.shape is None or None in value.shape or value.dtype.kind not in "biufc":
        return None
    stack, _ = _only_reader(graph, loop.outputs[j], "ta_stack")
    if stack is None or stack.attrs["dtype"] != value.dtype:
        return None
    return loop, write, stack, None, (int(size),) + tuple(value.shape), value.dtype


def chain_plan(graph, new, consts):
    """The plan (see fill_plan) of a TensorArray of a fixed size written at constant
    indices, each element once, by a chain of writes in `graph` itself (what an unrolled
    `for i in range(5): ta = ta.write(i, v)` stages), then stacked once; else None."""
    if new.attrs.get("dynamic_size", True):
        return None
    consts = dict(consts)
    consts.update((id(nd.outputs[0]), nd.attrs["value"]) for nd in graph.nodes
                  if nd.op == "Const")
    size = consts.get(id(new.inputs[0]))
    if size is None or np.ndim(size) != 0 or np.asarray(size).dtype.kind not in "iu":
        return None
    size, writes, written, handle, value = int(size), [], set(), new.outputs[0], None
    while True:
        readers = _readers(graph, handle)
        if len(readers) != 1 or readers[0][0] is None or readers[0][1] != 0:
            return None
        nd = readers[0][0]
        if nd.op == "ta_stack":
            break
        if nd.op != "ta_write" or id(nd.inputs[1]) not in consts:
            return None
        index = int(consts[id(nd.inputs[1])])
        index = index + size if index < 0 else index
        v = nd.inputs[2]
        if not 0 <= index < size or index in written or v.shape is None or None in v.shape \
                or (value is not None and (v.shape, v.dtype) != (value.shape, value.dtype)):
            return None
        written.add(index)
        writes.append(nd)
        value, handle = v, nd.outputs[0]
    if len(written) != size or value is None or nd.attrs["dtype"] != value.dtype or \
            value.dtype.kind not in "biufc":
        return None
    return None, writes, nd, None, (size,) + tuple(value.shape), value.dtype
