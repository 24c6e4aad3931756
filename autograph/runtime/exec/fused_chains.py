"""Chains of elementwise operations fused into one loop in generated NumPy code (without
`jit_compile`), when Numba is installed.

Adam's update of one parameter, as staged, is eleven NumPy calls on parameter-sized arrays
(`m = b1*m + (1-b1)*g`, `v = b2*v + (1-b2)*g*g`, `alpha*m / (sqrt(v) + eps)`): each walks
the whole array and writes a temporary. `plan` finds such runs in a graph; codegen emits
each as one call, `m_new, v_new, delta = k_chain(m, g, v, b1, ...)`, of a
`fused_kernel.Chain`, which runs one Numba loop over the flattened arrays: every
intermediate stays in a register and the arrays are read once.

A *chain* is a maximal run of consecutive nodes of one graph (constants, Variable reads
and Variable assigns in between are allowed, as in native/fuse.py, and views (a
transpose, a reshape) of values made before the run: none of them writes memory) that are
all

- one of `OPS` (IEEE-exact arithmetic: the loop computes, element by element, the same
  float32/float64 operations NumPy does, so the results are bitwise NumPy's; no
  transcendental function, whose Numba and NumPy versions may differ in the last bit),
  without attributes and not overridden by the device;
- of a float32 or float64 result of a static shape S (at least one dimension), with every
  input an array of that dtype and either of exactly S, or broadcasting to S as one block
  (`fused_blocks.splits`: S[k:], a bias repeated over the rows, or S[:k] followed by
  ones, a column repeated along each row; every such input of a chain at the same k), or a
  0-d value of that dtype. Without broadcasts the loop runs over S flattened; with them it
  is two deep, R = prod(S[:k]) rows of C = prod(S[k:]) (fused_kernel.kernel_source).

A chain may end with a `sum_to_shape` of one of its values over exactly its first k axes
(`fused_blocks.reduction`: a bias gradient), kept as C sums the loop adds each row into,
in row order from +0.0: NumPy's order for `sum(axis=0)` of a C-contiguous array, so the
sums are NumPy's bit for bit. With C = 1 NumPy sums pairwise instead: not fused.

A chain of at least `MIN_MEMBERS` nodes (two from `PAIR` elements) is fused when that
pays (`_pays`: long, or on large arrays; a short chain on small arrays costs more in calls
than it saves). Its kernel's source depends only on the chain's structure (operations
and how they connect, which operands broadcast how), never on shapes or constants' values
(those are arguments): the Adam update of every parameter of every program is one kernel,
compiled once per machine (Numba's `cache=True`, in autograph's cache folder; see
fused_kernel). Assigns met inside the run are emitted after the chain's call (their values
are its outputs); a read of a Variable assigned inside the run ends it.

Everything else (other broadcasts, other reductions, transcendental functions, other
dtypes) runs as before. The tests compare the fused programs with the interpreter
(tests/runtime/test_fused_chains.py, test_fused_broadcasts.py); benchmarks case 14
measures what it saves.
"""

import numpy as np

from autograph.runtime.exec import fused_blocks

_ARITHMETIC = {"add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
               "divide": "{0} / {1}", "negative": "-{0}", "positive": "+{0}",
               "square": "{0} * {0}"}
_COMPARE = {"greater": ">", "greater_equal": ">=", "less": "<", "less_equal": "<=",
            "equal": "==", "not_equal": "!="}
# op -> (one element's expression in the Numba loop, the whole arrays' in NumPy)
OPS = {op: (e, e) for op, e in _ARITHMETIC.items()}
OPS.update({op: (f"{{0}} {c} {{1}}", f"{{0}} {c} {{1}}") for op, c in _COMPARE.items()})
OPS.update({
    "sqrt": ("np.sqrt({0})", "np.sqrt({0})"),
    "where": ("({1} if {0} else {2})", "np.where({0}, {1}, {2})"),
    # NumPy's maximum/minimum: NaN from either side propagates, and of two equal values
    # (+0.0 and -0.0) the second is the result
    "maximum": ("({0} if ({0} > {1} or {0} != {0}) else {1})", "np.maximum({0}, {1})"),
    "minimum": ("({0} if ({0} < {1} or {0} != {0}) else {1})", "np.minimum({0}, {1})"),
    # a Variable's assign_add / assign_sub (update_variable): its value and the delta
    "update_add": ("{0} + {1}", "{0} + {1}"),
    "update_subtract": ("{0} - {1}", "{0} - {1}"),
})
MIN_MEMBERS = 3
LONG, LARGE = 8, 1 << 15       # see _pays
PAIR = 1 << 15
_VIEWS = ("permute_dims", "reshape", "expand_dims", "squeeze", "getitem", "broadcast_to")
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class Chain:
    """One fused run: members in graph order, its external inputs (arrays then scalars),
    the member outputs read after it, and the assigns emitted after its call."""

    def __init__(self, shape):
        self.shape = shape
        self.split = None         # k: arrays broadcast as shape[k:] or shape[:k] (fused_blocks)
        self.members = []
        self.ids = set()          # id(member output)
        self.deferred = []        # assign_variable nodes met inside the run
        self.arrays = []          # external array inputs (tensors), in first-read order
        self.scalars = []         # external 0-d inputs
        self.outputs = []         # member outputs read after the chain
        self.kinds = ""           # per array: "f" full, "i" inner block, "o" outer (fused_blocks)

    def accepts(self, node, splits=()):
        """Take `node` when it makes this chain's shape and its broadcast inputs (their
        `fused_blocks.splits`) agree with the chain's split."""
        out = node.outputs[0]
        if tuple(out.shape) != self.shape:
            return False
        ks = {self.split} if self.split is not None else None
        for found in splits:
            ks = set(found) if ks is None else ks & set(found)
        if ks is not None and not ks:
            return False
        if ks is not None:
            self.split = min(ks)
        self.members.append(node)
        self.ids.add(id(out))
        return True

    def source(self):
        """(Numba loop body lines, NumPy body lines, result names): the expressions with
        arrays named x<k>, scalars s<k>, member values v<k>; the same text for the same
        structure (shapes and constants' values are arguments)."""
        names = {}
        for k, t in enumerate(self.arrays):
            names[id(t)] = f"x{k}"
        for k, t in enumerate(self.scalars):
            names[id(t)] = f"s{k}"
        loop, whole, self.reductions = [], [], []
        for n, node in enumerate(self.members):
            ins = [names[id(t)] for t in node.inputs]
            names[id(node.outputs[0])] = f"v{n}"
            if node.op == "sum_to_shape":      # summed over the rows, after the loop body
                self.reductions.append((f"v{n}", ins[0]))
                whole.append(f"v{n} = np.sum({ins[0]}, axis={tuple(range(self.split))})")
                continue
            one, every = OPS[node.op]
            loop.append(f"v{n} = {one.format(*ins)}")
            whole.append(f"v{n} = {every.format(*ins)}")
        return loop, whole, [names[id(t)] for t in self.outputs]


class _Value:
    """A Variable's value around a fused update: `old` read just before the chain's call,
    `new` (a chain output) assigned just after it."""

    def __init__(self, update, kind):
        self.update, self.kind = update, kind
        delta = update.inputs[0]
        self.shape, self.dtype = delta.shape, delta.dtype
        self.node = self


class _Update:
    """update_variable (`w -= delta`) as a chain member: new = old -/+ delta."""

    def __init__(self, node):
        self.original = node
        self.op = "update_" + node.attrs["op"]
        self.name, self.origin = node.name, node.origin
        self.inputs = (_Value(node, "old"), node.inputs[0])
        self.outputs = (_Value(node, "new"),)
        self.outputs[0].name = node.name


def _update(node, overridden):
    """update_variable as a member when it is add/subtract of a delta of the Variable's
    own shape and dtype (so NumPy would neither broadcast nor cast)."""
    if node.op != "update_variable" or node.op in overridden or len(node.inputs) != 1:
        return None
    attrs = node.attrs
    delta = node.inputs[0]
    var = attrs.get("variable")
    var = var() if callable(var) else None
    if var is None or attrs.get("op") not in ("add", "subtract") or \
            not (attrs.get("operand_dtype") == attrs.get("dtype") == delta.dtype) or \
            delta.dtype not in _FLOATS or var.dtype != delta.dtype or \
            delta.shape is None or not delta.shape or tuple(var.shape) != tuple(delta.shape) \
            or not all(isinstance(d, int) for d in delta.shape):
        return None
    return _Update(node)


def _original(member):
    return getattr(member, "original", member)


def _pays(chain):
    """A fused call costs ~5 us more than one NumPy call (the Python wrapper and Numba's
    dispatch), NumPy ~1 us per operation plus a pass over memory: fusing pays for long
    chains, and for short ones on large arrays (measured: 3 ops on 2,048 float64 run
    4.6 us in NumPy with out=, 6.6 us fused)."""
    n, size = len(chain.members), int(np.prod(chain.shape))
    if n == 2 and size >= PAIR:     # one pass instead of two (a bias add and its ReLU,
        return True                 # 128x256 float32: 44-60 us unfused, 20-31 us fused)
    return n >= MIN_MEMBERS and (n >= LONG or size * n >= LARGE)


def _variable(node):
    ref = node.attrs.get("variable")
    return id(ref()) if callable(ref) else None


def _dtype_ok(node):
    """The node computes in one float dtype D, as NumPy would with these input dtypes: an
    arithmetic result of D from inputs of D, a comparison of two D, where(bool, D, D)."""
    out = node.outputs[0].dtype
    ins = [t.dtype for t in node.inputs]
    if node.op in _COMPARE:
        return out == np.bool_ and ins[0] in _FLOATS and ins[1] == ins[0]
    if out not in _FLOATS:
        return False
    if node.op == "where":
        return ins[0] == np.bool_ and ins[1] == out and ins[2] == out
    return all(d == out for d in ins)


def _fusible(node, overridden):
    """None when `node` cannot be a member; else the `fused_blocks.splits` of its
    broadcast inputs."""
    if node.op not in OPS or node.attrs or len(node.outputs) != 1 or node.op in overridden:
        return None
    out = node.outputs[0]
    shape = out.shape
    if shape is None or not shape or not all(isinstance(d, int) for d in shape) or \
            not _dtype_ok(node):
        return None
    splits = []
    for t in node.inputs:
        if t.shape == ():
            if t.node.op == "Const" and np.asarray(t.node.attrs["value"]).dtype != t.dtype:
                return None
        elif t.shape != shape:
            found = fused_blocks.splits(t.shape, tuple(shape))
            if not found:
                return None
            splits.append(found)
    return splits


def plan(graph, overridden=()):
    """{id(last member): Chain}, and {id(node): Chain} of every other member and deferred
    assign (skipped where they stand), for `graph`'s own nodes."""
    runs, current, assigned = [], None, set()
    for node in graph.nodes:
        if node.op == "Const":
            continue
        if current is not None and node.op == "read_variable":
            if _variable(node) in assigned:
                current = None
            continue
        if current is not None and node.op in _VIEWS and \
                not any(id(t) in current.ids for t in node.inputs):
            continue          # a view of values made before the run: stays where it is
        if current is not None and node.op == "assign_variable" and \
                _variable(node) is not None:
            assigned.add(_variable(node))
            current.deferred.append(node)
            continue
        k = current and fused_blocks.reduction(node, current, overridden)
        if k:
            current.split = k
            current.members.append(node)       # the chain's last member: its sum
            current.ids.add(id(node.outputs[0]))
            current = None
            continue
        update = _update(node, overridden)
        splits = ()
        if update is not None and current is not None and \
                any(isinstance(n, _Update) for n in current.members):
            current = None             # one update per chain (one lock held at a time)
        if update is not None:
            assigned.add(_variable(node))
            node = update
        else:
            splits = _fusible(node, overridden)
            if splits is None:
                current = None
                continue
        if current is None or not current.accepts(node, splits):
            out = node.outputs[0]
            current = Chain(tuple(out.shape))
            assigned = {_variable(node.original)} if update is not None else set()
            current.accepts(node, splits)
            runs.append(current)
    runs = [c for c in runs if _pays(c)]
    if not runs:
        return {}, {}
    member_of = {id(n): c for c in runs for n in c.members}
    member_of.update((id(n.original), c) for c in runs for n in c.members
                     if isinstance(n, _Update))
    outside = {}
    for node in graph.nodes:
        c = member_of.get(id(node))
        for t in node.inputs:
            owner = member_of.get(id(t.node))
            if owner is not None and owner is not c:
                outside[id(t)] = t
    for t in graph.outputs:
        if id(t.node) in member_of:
            outside[id(t)] = t
    for c in runs:            # a fused update's new value is assigned after the call
        outside.update((id(n.outputs[0]), n.outputs[0]) for n in c.members
                       if isinstance(n, _Update))
    last, skipped = {}, {}
    order = {id(n): p for p, n in enumerate(graph.nodes)}
    order.update((id(n), order[id(n.original)]) for c in runs for n in c.members
                 if isinstance(n, _Update))
    for c in runs:
        seen = set()
        for node in c.members:
            for t in node.inputs:
                if id(t) in c.ids or id(t) in seen:
                    continue
                seen.add(id(t))
                if t.shape == ():
                    c.scalars.append(t)
                    continue
                c.arrays.append(t)
                c.kinds += "f" if tuple(t.shape) == c.shape else \
                    fused_blocks.splits(t.shape, c.shape)[c.split]
        c.outputs = [n.outputs[0] for n in c.members if id(n.outputs[0]) in outside]
        end = order[id(c.members[-1])]
        c.deferred = [n for n in c.deferred if order[id(n)] < end]
        if not c.outputs or not c.arrays:
            continue
        last[id(_original(c.members[-1]))] = c
        for node in c.members[:-1] + c.deferred:
            skipped[id(_original(node))] = c
    return last, skipped


def moved_reads(last, skipped, graph):
    """{id(node): position} of the skipped nodes: they read their inputs where the chain's
    call stands (the last member's position), which is when those inputs may be dropped."""
    order = {id(n): p for p, n in enumerate(graph.nodes)}
    return {key: order[id(_original(c.members[-1]))] for key, c in skipped.items()}


def emit(compiler, chain, env, depth):
    """Write `chain`'s call at its last member (codegen's _Compiler), binding its outputs
    in `env`, then the assigns deferred to after it."""
    from autograph.runtime.exec import fused_kernel
    loop, whole, results = chain.source()
    update = None
    values = chain.arrays + chain.scalars
    for at, t in enumerate(values):
        if isinstance(t, _Value):
            new = [k for k, o in enumerate(chain.outputs)
                   if isinstance(o, _Value) and o.update is t.update]
            update = (at, new[0])
    checked = [f"v{n}" for n, node in enumerate(chain.members)
               if node.outputs[0].dtype.kind == "f" and node.op != "sum_to_shape"]
    layout = None if chain.split is None else (chain.split, chain.kinds, chain.reductions)
    fn = fused_kernel.Chain(chain.shape, [t.dtype for t in chain.scalars],
                            [t.dtype for t in chain.outputs], len(chain.arrays), loop,
                            whole, results, update, checked, layout,
                            [tuple(t.shape) for t in chain.outputs])
    name = compiler.bind("k_chain", fn)
    args, var = [], None
    for t in values:
        if isinstance(t, _Value):   # a fused update's Variable: the chain reads and writes it
            var = compiler.fresh(t.update.name + "_var")
            fetch = compiler.bind("k_fused_variable", fused_kernel.variable)
            attrs = t.update.attrs
            ref = compiler.bind(f"{t.update.name}_variable", attrs["variable"])
            compiler.emit(depth, f"{var} = {fetch}(xp, variable={ref}, "
                                 f"name={attrs['name']!r}, function={attrs['function']!r})")
            args.append(var)
        else:
            args.append(env[id(t)])
    outs = []
    for t in chain.outputs:
        if isinstance(t, _Value):
            continue                # assigned by the chain itself
        outs.append(compiler.preferred.pop(id(t), None) or compiler.fresh(t.node.name))
        env[id(t)] = outs[-1]
    call = f"{name}({', '.join(args)})"
    if outs:
        targets = outs[0] + "," if len(outs) == 1 else ", ".join(outs)
        call = f"{targets} = {call}"
    compiler.emit(depth, call)
    if var is not None:
        compiler.emit(depth, f"del {var}")
    for node in chain.deferred:
        compiler.node = (node.name, node.op, node.origin)
        compiler.call(node, [env[id(t)] for t in node.inputs], env, depth)
