"""In-place updates of a loop's accumulators in generated code (codegen).

Graphs are functional: `ufunc_at(x, rows, index)` and `setitem(x, v, index)` make a new
array, so their kernels copy `x` first. For a while_loop variable that the body only
updates (`acc = ufunc_at(acc, rows, t)`: the backward loop's accumulator of a captured
array read by index, autodiff/accumulate.py), that copy is the whole cost of a step, and
makes the loop quadratic. The copy is needed only when something else may still read the
old value, and for such a loop variable nothing can:

- the body's placeholder of loop variable k has one consumer: the first update's `x`;
- each update's output has one consumer: the next update's `x`, or, for the last one,
  the body's output k (and no other output);
- the condition graph does not read the variable, and its static shape has at least one
  dimension (0-d values may be immutable NumPy scalars in generated code).

Then the chain owns its buffer from one iteration to the next, provided the buffer is the
loop's own: codegen copies the variable's initial value once when the loop starts (it may
be the caller's array or a constant of the graph), and the updates write in place. The
loop's result is that buffer, which nothing else holds. The interpreter (the reference)
keeps the copying kernels.

The same holds outside loops for an update whose input is a new array nothing else reads
(`straight_line`): there no copy at all is needed.
"""

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


def plan(loop, overridden=()):
    """{loop variable index k: [the update nodes of its chain, in order]} for the loop
    variables of while_loop node `loop` that may be updated in place (see the module
    docstring). `overridden`: ops whose kernel the device replaces (left alone)."""
    cg, bg = loop.attrs["cond_graph"], loop.attrs["body_graph"]
    n = len(loop.outputs)
    readers = {}                              # id(tensor) -> [(node or None, position)]
    for nd in bg.nodes:
        for p, t in enumerate(nd.inputs):
            readers.setdefault(id(t), []).append((nd, p))
    for k, t in enumerate(bg.outputs):
        readers.setdefault(id(t), []).append((None, k))
    cond_reads = {id(t) for nd in cg.nodes for t in nd.inputs} | {id(t) for t in cg.outputs}
    chains = {}
    for k in range(n):
        ph = bg.inputs[k]
        if ph.shape is None or len(ph.shape) == 0 or id(cg.inputs[k]) in cond_reads:
            continue
        chain, t = [], ph
        while True:
            found = readers.get(id(t), [])
            if len(found) != 1:
                break
            nd, p = found[0]
            if nd is None:
                if p == k and chain:
                    chains[k] = chain
                break
            if nd.op not in _UPDATES or nd.op in overridden or p != 0 or \
                    len(nd.outputs) != 1 or nd.outputs[0].dtype != ph.dtype:
                break
            chain.append(nd)
            t = nd.outputs[0]
    return chains


def emit_loop(compiler, loop, loop_vars, depth):
    """Before `loop`'s code: copy the initial values of the loop variables updated in
    place, and register their update nodes to be emitted with the in-place kernels (the
    compiler's `fills`: id(node) -> emitter)."""
    chains = plan(loop, compiler.device.kernels)
    if not chains:
        return
    copy = compiler.bind("copy_loop_value", _copy)
    for k, chain in chains.items():
        compiler.emit(depth, f"{loop_vars[k]} = {copy}(xp, {loop_vars[k]})")
        for nd in chain:
            compiler.fills[id(nd)] = _emitter(compiler)


_FRESH = ("zeros", "ones", "full")    # kernels that always return a new array


def straight_line(graph, overridden=()):
    """The update nodes of `graph` (not inside its loops) that may write into their input
    in place: its `x` is made in this graph by a kernel returning a new array (`zeros`,
    ..., or an update: a copy, or an update in place of such an array) and read by nothing
    else, neither a node (nested control flow takes what it reads as inputs) nor an
    output. A chain `ufunc_at(ufunc_at(zeros, r1), r2) ...` (rows of `xs` that an unrolled
    loop reads, summed by autodiff/accumulate.py) then writes each row once."""
    readers = {}
    for nd in graph.nodes:
        for t in nd.inputs:
            readers[id(t)] = readers.get(id(t), 0) + 1
    for t in graph.outputs:
        readers[id(t)] = readers.get(id(t), 0) + 1
    updates = []
    for nd in graph.nodes:
        if nd.op not in _UPDATES or nd.op in overridden or not nd.inputs:
            continue
        x = nd.inputs[0]
        if readers.get(id(x)) != 1 or x.shape is None or len(x.shape) == 0 or \
                any(t is x for t in nd.inputs[1:]) or x.node.graph is not graph or \
                nd.outputs[0].dtype != x.dtype:
            continue
        made_by = x.node.op
        if made_by in _FRESH or (made_by in _UPDATES and made_by not in overridden):
            updates.append(nd)
    return updates


def emit_graph(compiler, graph):
    """Register the in-place emitter for `graph`'s straight-line updates (see above)."""
    for nd in straight_line(graph, compiler.device.kernels):
        compiler.fills[id(nd)] = _emitter(compiler)


def _emitter(compiler):
    def emit(node, ins, env, depth):
        fn = compiler.bind(f"k_{node.op}_into", KERNELS[node.op])
        args = ["xp"] + list(ins)
        for key, value in node.attrs.items():
            args.append(f"{key}={compiler.bind(f'{node.name}_{key}', value)}")
        out = compiler.outputs(node, env)[0]
        compiler.emit(depth, f"{out} = {fn}({', '.join(args)})")
    return emit
