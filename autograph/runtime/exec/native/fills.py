"""Which TensorArrays `jit_compile=True` lowers to a preallocated array, and how.

A TensorArray is a Python object at run time; native code has arrays only. It lowers when
the graph provably writes every element exactly once before the one `stack` that reads it:
then an uninitialised `np.empty` buffer written in place is complete when stacked. Two
patterns qualify: a counter loop from 0 to the fixed size writing at the counter
(`fill_plan`, codegen's rule), and writes at constant indices in straight-line code (an
unrolled Python `for`, `chain_plan`).
"""

from autograph.runtime.exec.codegen import _fill_plan, _fixed_size, _readers


def fill_plan(graph, new, consts):
    """(while_loop, ta_write, ta_stack, _Counter, buffer shape, dtype) when the TensorArray
    that ta_new `new` makes is filled by a counter loop from 0 to its fixed size, one
    write per element at the counter, then stacked once and not otherwise used (so an
    uninitialised buffer is complete after the loop); else None. Codegen's rule without
    its minimum loop length (a native loop has no per-iteration cost to amortise)."""
    return _fill_plan(graph, new, consts, shortest=0)


def chain_plan(graph, new, consts):
    """The plan (see fill_plan) of a TensorArray of a fixed size written at constant
    indices, each element once, by a chain of writes in `graph` itself (what an unrolled
    `for i in range(5): ta = ta.write(i, v)` stages), then stacked once; else None."""
    fixed = _fixed_size(graph, new, consts)
    if fixed is None:
        return None
    (size, consts), writes, written, handle, value = fixed, [], set(), new.outputs[0], None
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
