"""In-place updates of a loop's accumulators and recurrences in generated code (codegen;
native code asks the same questions).

Graphs are functional: `ufunc_at(x, rows, index)` and `setitem(x, v, index)` make a new
array, so their kernels copy `x` first. For a while_loop variable that the body updates
(`acc = ufunc_at(acc, rows, t)`: the backward loop's accumulator of a captured array read
by index, autodiff/accumulate.py; `out[i] = out[i - 1] + x[i]`: a recurrence), that copy
is the whole cost of a step, and makes the loop quadratic. The copy is needed only when
something else may still read the old value. `plan` finds, for loop variable k, a chain:

- from the body's placeholder of k, each value goes on to exactly one update (its `x`),
  or to an `if` whose branches each carry it to one output of the `if` the same way, and
  the last value is the body's output k;
- every other read of each value in the chain is over before the next update writes, and
  nothing that may share the value's memory outlives it (inplace_reads.reads_done: a
  scalar `out[i - 1]` read first is fine, a view kept past the write is not);
- the condition graph does not read the variable, and its static shape has at least one
  dimension (0-d values may be immutable NumPy scalars in generated code).

Then the chain owns its buffer from one iteration to the next, provided the buffer is the
loop's own: codegen copies the variable's initial value once when the loop starts (it may
be the caller's array or a constant of the graph), unless that value is a new array made
for the loop and read by nothing else (`owned`), and the updates write in place, written
as NumPy statements (`out[i] = v`). The loop's result is that buffer, which nothing else
holds. The interpreter (the reference) keeps the copying kernels.

The same holds outside loops for an update whose input is a new array (`straight_line`):
there no copy at all is needed.

Lifetimes (here with the in-place updates: codegen always loads both, and a first call
pays per module): where generated code may let go of an array, and which TensorArrays it
may fill in place.

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


def _reads():
    """runtime/exec/inplace_reads.py, imported where a graph has updates (a first call of
    code without any loads no more modules)."""
    from autograph.runtime.exec import inplace_reads
    return inplace_reads

_UPDATES = ("ufunc_at", "setitem")


def _key(index, dynamic):
    """The index as the array library reads it (updates.py's; imported on first use, so
    that compiling code without updates loads no more of the NumPy surface)."""
    from autograph.runtime.numpy.updates import _key as key
    return key(index, dynamic)


def _ufunc_at_into(xp, x, v, *dynamic, index, ufunc):
    key = _key(index, dynamic)
    if ufunc == "add" and not any(item[0] == "t" for item in index):
        x[key] += v        # a basic index selects each element once: what add.at does, faster
    else:
        getattr(xp, ufunc).at(x, key, v)
    return x


def _setitem_into(xp, x, v, *dynamic, index):
    x[_key(index, dynamic)] = v
    return x


KERNELS = {"ufunc_at": _ufunc_at_into, "setitem": _setitem_into}


def _copy(xp, x):
    return xp.asarray(x, copy=True)


def plan(loop, overridden=(), overlap_ok=False):
    """{loop variable index k: [the update nodes of its chain, in order]} for the loop
    variables of while_loop node `loop` that may be updated in place (see the module
    docstring). `overridden`: ops whose kernel the device replaces (left alone).
    `overlap_ok`: the executor's assignment copes with a value overlapping its target
    (inplace_reads)."""
    cg, bg = loop.attrs["cond_graph"], loop.attrs["body_graph"]
    n = len(loop.outputs)
    if not any(nd.op in _UPDATES for nd in bg.walk()):
        return {}
    readers = _reads().Readers(bg)
    cond_reads = {id(t) for nd in cg.nodes for t in nd.inputs} | {id(t) for t in cg.outputs}
    chains = {}
    for k in range(n):
        ph = bg.inputs[k]
        if ph.shape is None or len(ph.shape) == 0 or id(cg.inputs[k]) in cond_reads:
            continue
        found = _chain(readers, ph, overridden, overlap_ok)
        if found is not None and found[0] == k and found[1]:
            chains[k] = found[1]
    return chains


def _chain(readers, ph, overridden, overlap_ok):
    """(r, updates) when the value `ph` of readers' graph reaches the graph's output r
    through a chain of updates, each writing into the value the one before made, where
    every other read of each value is over before the next update writes
    (inplace_reads.reads_done). A link may also be an `if` (a cond node) whose branches
    each carry the value to one same output of the cond that way (or pass it through);
    their updates join the list. None when there is no such chain."""
    chain, t = [], ph
    while True:
        found = readers.get(t)
        ends = [p for nd, p in found if nd is None]
        if ends:                          # the graph's result: the chain ends here
            if len(ends) != 1 or not _reads().reads_done(
                    readers, t, None, overridden, overlap_ok, skip=((None, ends[0]),)):
                return None
            return ends[0], chain
        nxt = [(nd, p) for nd, p in found if p == 0 and nd.op in _UPDATES and
               nd.op not in overridden and len(nd.outputs) == 1 and
               nd.outputs[0].dtype == ph.dtype]
        if not nxt:      # an `if` that updates it (an `if` that only reads it is a read)
            nxt = [(nd, p) for nd, p in found if p >= 1 and nd.op == "cond"]
        if len(nxt) != 1:
            return None
        nd, p = nxt[0]
        if not _reads().reads_done(readers, t, nd, overridden, overlap_ok, skip=((nd, p),)):
            return None
        if nd.op == "cond":
            through = _through_cond(nd, p, ph.dtype, overridden, overlap_ok)
            if through is None:
                return None
            r, updates = through
            chain.extend(updates)
            t = nd.outputs[r]
        else:
            chain.append(nd)
            t = nd.outputs[0]


def _through_cond(cond, p, dtype, overridden, overlap_ok):
    """(the cond's output r, the updates of both branches) when each branch carries its
    input p - 1 to output r by a chain (_chain), else None."""
    r, updates = None, []
    for key in ("true_graph", "false_graph"):
        branch = cond.attrs[key]
        found = _chain(_reads().Readers(branch), branch.inputs[p - 1], overridden, overlap_ok)
        if found is None or (r is not None and found[0] != r):
            return None
        r = found[0]
        updates.extend(found[1])
    if cond.outputs[r].dtype != dtype:
        return None
    return r, updates


def emit_loop(compiler, loop, loop_vars, depth):
    """Before `loop`'s code: copy the initial values of the loop variables updated in
    place (but those the loop owns already: `owned`), and register their update nodes to
    be emitted with the in-place kernels (the compiler's `fills`: id(node) -> emitter)."""
    chains = plan(loop, compiler.device.kernels, overlap_ok=compiler.numpy)
    if not chains:
        return
    copy = compiler.bind("copy_loop_value", _copy)
    mine = owned(loop, chains, compiler.device.kernels)
    for k, chain in chains.items():
        if k not in mine:
            compiler.emit(depth, f"{loop_vars[k]} = {copy}(xp, {loop_vars[k]})")
        for nd in chain:
            compiler.fills[id(nd)] = _emitter(compiler)


def owned(loop, ks, overridden=()):
    """The loop variables among `ks` whose initial value is an array made just for the
    loop: a new array (or an update of one) of the loop's own graph that nothing else
    reads, neither a node nor an output. The loop may write into it without the copy
    (`out = np.zeros(n); out[0] = x[0]; for i ...: out[i] = ...` copies nothing)."""
    graph, mine = loop.graph, set()
    for k in ks:
        init = loop.inputs[k]
        made_by = init.node
        if made_by.graph is not graph or not (
                _reads().makes_new(made_by, overridden) or
                (made_by.op in _UPDATES and made_by.op not in overridden)):
            continue
        if sum(t is init for t in loop.inputs) != 1 or any(t is init for t in graph.outputs):
            continue
        if any(t is init for nd in graph.nodes if nd is not loop for t in nd.inputs):
            continue
        mine.add(k)
    return mine


def straight_line(graph, overridden=(), overlap_ok=False):
    """The update nodes of `graph` (not inside its loops) that may write into their input
    in place: its `x` is made in this graph by a kernel returning a new array (`zeros`,
    a ufunc, ..., or an update: a copy, or an update in place of such an array), and
    every other read of it is over before the update writes (inplace_reads.reads_done:
    nested control flow takes what it reads as inputs; an output of the graph is never
    overwritten). A chain `ufunc_at(ufunc_at(zeros, r1), r2) ...` (rows of `xs` that an
    unrolled loop reads, summed by autodiff/accumulate.py) then writes each row once."""
    readers = None
    updates = []
    for nd in graph.nodes:
        if nd.op not in _UPDATES or nd.op in overridden or not nd.inputs:
            continue
        x = nd.inputs[0]
        if x.shape is None or len(x.shape) == 0 or x.node.graph is not graph or \
                nd.outputs[0].dtype != x.dtype:
            continue
        made_by = x.node
        if not (_reads().makes_new(made_by, overridden) or
                (made_by.op in _UPDATES and made_by.op not in overridden)):
            continue
        if readers is None:
            readers = _reads().Readers(graph)
        if _reads().reads_done(readers, x, nd, overridden, overlap_ok):
            updates.append(nd)
    return updates


def emit_graph(compiler, graph):
    """Register the in-place emitter for `graph`'s straight-line updates (see above)."""
    for nd in straight_line(graph, compiler.device.kernels, overlap_ok=compiler.numpy):
        compiler.fills[id(nd)] = _emitter(compiler)


def _emitter(compiler):
    def emit(node, ins, env, depth):
        out_t = node.outputs[0]
        key = compiler.index_text(node.attrs["index"], ins[2:])
        statement = None
        if key is not None and node.op == "setitem":
            statement = f"{ins[0]}[{key}] = {ins[1]}"
        elif key is not None and node.attrs["ufunc"] in _AUGMENTED:
            # a basic index selects each element once: what ufunc.at does
            statement = f"{ins[0]}[{key}] {_AUGMENTED[node.attrs['ufunc']]}= {ins[1]}"
        if statement is not None and ins[0].isidentifier():
            # the statement NumPy code writes: the result is the updated array, by its name
            compiler.emit(depth, statement)
            compiler.preferred.pop(id(out_t), None)
            env[id(out_t)] = ins[0]
            return
        fn = compiler.bind(f"k_{node.op}_into", KERNELS[node.op])
        args = ["xp"] + list(ins)
        for key, value in node.attrs.items():
            args.append(f"{key}={compiler.bind(f'{node.name}_{key}', value)}")
        out = compiler.outputs(node, env)[0]
        compiler.emit(depth, f"{out} = {fn}({', '.join(args)})")
    return emit


_AUGMENTED = {"add": "+", "subtract": "-", "multiply": "*"}


# -- lifetimes ------------------------------------------------------------------------------

class Releases:
    """The `del` lines of one straight-line graph body, decided node by node."""

    def __init__(self, graph, params, bound, moved=None):
        """`moved`: {id(node): position} of nodes emitted later than they stand (a fused
        chain's members read their inputs at its call: see fused_chains)."""
        self.graph_outputs = {id(t) for t in graph.outputs}
        self.params, self.bound = set(params), bound
        end = len(graph.nodes)
        last = {}
        for p, node in enumerate(graph.nodes):
            if moved and id(node) in moved:
                p = moved[id(node)]
            for t in node.inputs:
                last[id(t)] = max(p, last.get(id(t), p))
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


def readers_of(graph):
    """id(tensor) -> [(node, input position)] of every tensor `graph`'s nodes read."""
    readers = {}
    for node in graph.nodes:
        for p, t in enumerate(node.inputs):
            readers.setdefault(id(t), []).append((node, p))
    return readers


def chain_plan(graph, new, consts, readers=None):
    """(writes, stack, buffer shape, dtype, indices) when the TensorArray that ta_new node
    `new` makes is written at constant indices, each exactly once, by a chain of ta_write
    nodes of `graph` (each handle read only by the next write) and then stacked once;
    else None. `readers`: `readers_of(graph)`, when the caller asks for many TensorArrays
    of one graph (built once, not once per TensorArray: a Hessian's graph holds ~100)."""
    if new.attrs.get("dynamic_size", True):
        return None
    size = _const(new.inputs[0], consts)
    if size is None or np.ndim(size) != 0 or np.asarray(size).dtype.kind not in "iu":
        return None
    readers = readers_of(graph) if readers is None else readers
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
