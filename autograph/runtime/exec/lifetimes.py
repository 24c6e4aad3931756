"""Where generated code may let go of an array, and which TensorArrays it may fill in place.

`Releases`: the function's top-level code is straight-line, and every node's result is a
local name that used to live until `return`: an unrolled loop of 10 matmuls of 1000x1000
kept all 20 intermediates (76 MiB against 7.6 MiB written by hand). After the last node
that reads a value, codegen writes `del name`, as a hand-written function drops a name by
rebinding it. Only arrays are released (a 0-d value is a few bytes and its `del` line
would only clutter scalar code), only names the function itself assigned (never a
parameter, a bound constant or an output), and a name that several tensors share (an
Identity, a TensorArray filled in place) only after the last read of any of them.

`chain_plan`: a TensorArray of fixed size written at constant indices, each once, in
straight-line code (what `for i in range(n): ta = ta.write(i, x)` over a Python range
unrolls into) and then stacked, is a preallocated buffer written in place, `buf[3] = x`.
"""

import numpy as np


class Releases:
    """The `del` lines of one straight-line graph body, decided node by node."""

    def __init__(self, graph, params, bound):
        self.graph_outputs = {id(t) for t in graph.outputs}
        self.params, self.bound = set(params), bound
        end = len(graph.nodes)
        last = {}
        for p, node in enumerate(graph.nodes):
            for t in node.inputs:
                last[id(t)] = p
        for t in graph.outputs:
            last[id(t)] = end
        self.last = last
        self.until = {}       # name -> the position of its last read so far
        self.due = {}         # position -> names whose last read may be there
        self.deleted = set()

    def after(self, p, node, env):
        """Names to `del` after node number `p` (emitted, so its outputs have names)."""
        for t in node.outputs:
            name = env.get(id(t))
            if name is None or name in self.params or name in self.bound or \
                    not name.isidentifier():
                continue
            if t.shape == () or id(t) in self.graph_outputs:
                self.params.add(name)        # never released (a scalar, or returned)
                continue
            end = max(self.last.get(id(t), p), self.until.get(name, -1))
            self.until[name] = end
            self.due.setdefault(end, []).append(name)
        out = []
        for name in self.due.pop(p, ()):
            if self.until.get(name) == p and name not in self.deleted and name not in self.params:
                self.deleted.add(name)
                out.append(name)
        return out


def chain_plan(graph, new, consts):
    """(writes, stack, buffer shape, dtype, indices) when the TensorArray that ta_new node
    `new` makes is written at constant indices, each exactly once, by a chain of ta_write
    nodes of `graph` (each handle read only by the next write) and then stacked once;
    else None."""
    if new.attrs.get("dynamic_size", True):
        return None
    size = _const(new.inputs[0], consts)
    if size is None or np.ndim(size) != 0 or np.asarray(size).dtype.kind not in "iu":
        return None
    readers = {}
    for node in graph.nodes:
        for p, t in enumerate(node.inputs):
            readers.setdefault(id(t), []).append((node, p))
    outputs = {id(t) for t in graph.outputs}
    handle, writes, indices, shape, dtype = new.outputs[0], [], [], None, None
    while True:
        found = readers.get(id(handle), [])
        if len(found) != 1 or id(handle) in outputs:
            return None
        node, p = found[0]
        if node.op == "ta_stack" and p == 0:
            break
        if node.op != "ta_write" or p != 0:
            return None
        index = _const(node.inputs[1], consts)
        value = node.inputs[2]
        if index is None or np.ndim(index) != 0 or value.shape is None or None in value.shape \
                or value.dtype.kind not in "biufc":
            return None
        if shape is None:
            shape, dtype = tuple(value.shape), value.dtype
        elif tuple(value.shape) != shape or value.dtype != dtype:
            return None
        writes.append(node)
        indices.append(int(index))
        handle = node.outputs[0]
    if sorted(indices) != list(range(int(size))) or node.attrs["dtype"] != dtype:
        return None
    return writes, node, (int(size),) + shape, dtype, indices


def _const(tensor, consts):
    if tensor.node.op == "Const":
        return tensor.node.attrs["value"]
    return consts.get(id(tensor))
