"""The source of one fused kernel (native_fuse.Kernel): a Numba function of its own.

    @njit(cache=True, error_model='numpy', boundscheck=False)
    def fused(a0, a1):
        if a0.shape != (8, 32): raise ValueError(...)       # once, before any loop
        o0 = np.empty((8, 32), np.float64)                  # values read after the kernel
        for i0 in range(8):                                 # S[:-1]
            s0 = np.float64(0)
            for j in range(32):                             # inner loop 0
                v0 = np.float64(a0[i0, j] + a1[j])
                o0[i0, j] = v0
                s0 = np.float64(s0 + v0)
            v1 = np.float64(s0 / np.float64(32))            # a row value (mean)
            for j in range(32):                             # inner loop 1
                v2 = np.float64(o0[i0, j] - v1)
                ...
        return o0

A FULL value (shape S) is a scalar local of the inner loop that computes it; one that a
later inner loop reads again is stored (into its output array, or into a row buffer of
S[-1] elements reused by every row). Inputs broadcast by indexing: a size-1 dimension is
read at 0, a missing leading one not at all.
"""

import keyword

import numpy as np

from autograph.runtime.exec import inplace_reads
from autograph.runtime.exec.native import inplace as native_inplace
from autograph.runtime.exec.native import kernel_modules, vector_math as native_math
from autograph.runtime.exec.native.fuse import _REDUCTIONS, FLAT, FULL, scalar_expr
from autograph.runtime.exec.native.ops import dtype_name, scalar_of

_HEAD = "@unlinked.njit(cache=True, error_model='numpy', boundscheck=False)"   # (unlinked.py)


class _Body(list):
    """Kernel lines as (depth, text, node): the node that made each line names the
    operation and the user's line if Numba refuses it."""
    node = None

    def append(self, item):
        super().append(item + (self.node,))

    def extend(self, items):
        for item in items:
            self.append(item)


def emit(low, k, env, depth, into=None, alias=None):
    """Write kernel `k` as a module of its own (kernel_modules.py: one per text, compiled
    once per machine) that `low`'s module imports under a fresh local name, and one call in
    the body binding its outputs in `env`. `into`: {id(output): the main function's array
    it is written into}; `alias`: {main-function name: another name of the same array,
    passed instead} (both native/inplace.py)."""
    for node in k.members:
        for t in node.outputs:
            low.check_tensor(node, t)
    source = KernelSource(k, kernel_modules.NAME, env, into, alias)
    lines = source.build()
    module = kernel_modules.KernelModule(
        lines, [None if n is None else (n.name, n.op, n.origin) for n in source.owners],
        source.pairwise)
    local = low.kernel_names.get(module.module_name)
    if local is None:
        local = low.kernel_names[module.module_name] = low.fresh("fused")
        low.kernels.append((module, local))
    outs = []
    for t in k.outputs:
        outs.append(low.fresh(t.node.name))
        env[id(t)] = outs[-1]
    low.emit(depth, f"{', '.join(outs)} = {local}({', '.join(source.call_args())})")


def emit_run(low, k, graph, env, depth, readers):
    """Kernel `k` of `graph` with its Variable writes: the old values of fused updates
    passed in (fuse_updates.py), the outputs written into Variables' arrays where
    native/inplace.py allows, then the deferred assigns and the updates' new values
    given to the Variables' locals, in the graph's order. Returns `readers` (the graph's
    inplace_reads.Readers, made on first need)."""
    for update in k.updates():
        env[id(update.inputs[0])] = low.variable_local(update.original)
    into, alias = {}, {}
    if k.updates() or k.deferred:
        if readers is None:
            readers = inplace_reads.Readers(graph)
        into, alias = native_inplace.plan(low, k, graph, readers, depth, env)
    emit(low, k, env, depth, into, alias)
    for assign in k.deferred:   # (native_fuse.plan)
        low.node = (assign.name, assign.op, assign.origin)
        if hasattr(assign, "original"):    # a fused update's value
            var = assign.variable
            low.emit(depth, f"{low.variable_local(assign.original)} = "
                            f"{env[id(assign.outputs[0])]}")
            if id(var) not in low.assigned:
                low.assigned.append(id(var))
        else:
            low.variable(assign, env, depth)
    return readers


def _is_name(expr):
    return expr.isidentifier() and not keyword.iskeyword(expr)


class KernelSource:
    """Writes kernel `k` as function `name`; `call_args` are the main function's
    expressions it is called with, `outputs` the tensors it returns (in order)."""

    def __init__(self, k, name, env, into=None, alias=None):
        self.k, self.name, self.env = k, name, env
        self.into, self.alias = into or {}, alias or {}
        self.shape = k.shape
        self.rank = len(k.shape)
        self.params = {}        # main-function name -> parameter name
        self.param_shapes = {}  # parameter name -> static shape (arrays only)
        self.value = {}         # id(tensor) -> local of a member's value
        self.stored = {}        # id(tensor) -> array it is stored in (output or buffer)
        self.lines = []
        self.pairwise = set()   # dtypes of float sums added in NumPy's order (native_math)
        self.owners = []        # the node behind each line of the function (or None)

    # -- reading values ---------------------------------------------------------------------

    def loop_index(self, row):
        outer = [f"i{d}" for d in range(self.rank - 1)]
        return outer + (["0"] if row else ["j"])

    def param(self, expr, shape):
        """The parameter that the main function's `expr` is passed as."""
        name = self.params.get(expr)
        if name is None:
            name = self.params[expr] = f"a{len(self.params)}"
            if shape:
                self.param_shapes[name] = tuple(shape)
        return name

    def external(self, t, row):
        expr = self.env[id(t)]
        if not _is_name(expr):
            return f"({expr})"           # a literal constant
        name = self.param(self.alias.get(expr, expr), t.shape)
        if not t.shape:
            return name
        idx = self.loop_index(row)
        lead = len(idx) - len(t.shape)
        key = ('0' if d == 1 else idx[lead + i] for i, d in enumerate(t.shape))
        return f"{name}[{', '.join(key)}]"

    def read(self, t, phase, row=False):
        """`t` (an input of a member computed in inner loop / row section `phase`)."""
        key = id(t)
        if key not in self.k.kind:
            return self.external(t, row)
        if self.k.kind[key] != FULL or self.k.phase[key] == phase:
            return self.value[key]
        return self.stored_at(key)

    def stored_at(self, key):
        array = self.stored[key]
        if array.startswith("b"):
            return f"{array}[j]"
        return f"{array}[{', '.join(self.loop_index(False))}]"

    # -- the function -------------------------------------------------------------------------

    def build(self):
        k = self.k
        members = k.members
        out_ids = {id(t) for t in k.outputs}
        later = set()         # FULL values read in a later inner loop than their own
        for node in members:
            here = k.phase[id(node.outputs[0])]
            if node.op in _REDUCTIONS:
                here -= 1     # it reads its input in the loop before its value's phase
            for t in node.inputs:
                if k.kind.get(id(t)) == FULL and k.phase[id(t)] < here:
                    later.add(id(t))
        body = _Body()
        for n, node in enumerate(members):
            self.value[id(node.outputs[0])] = f"v{n}"
        allocs = []
        for n, node in enumerate(members):
            t = node.outputs[0]
            key = id(t)
            if key in out_ids and t.shape and key in self.into:   # its Variable's array
                self.stored[key] = f"o{n}"
                allocs.append(f"o{n} = {self.param(self.into[key], t.shape)}")
            elif key in out_ids and t.shape:
                self.stored[key] = f"o{n}"
                allocs.append(f"o{n} = np.empty({tuple(t.shape)!r}, {dtype_name(t.dtype)})")
            elif key in later:
                self.stored[key] = f"b{n}"
                allocs.append(f"b{n} = np.empty({self.shape[-1]}, {dtype_name(t.dtype)})")
            if self.pairwise_of(node):
                allocs.append(f"r{n} = np.empty({self.shape[-1]}, {dtype_name(t.dtype)})")
        depth = 1 + max(self.rank - 1, 0)
        last = max(k.phase.values())
        for q in range(last + 1):
            self.row_section(q, depth, body)
            loop = [(n, node) for n, node in enumerate(members) if self.in_loop(node, q)]
            if not loop:
                continue
            for n, node in loop:
                body.node = node
                if node.op in _REDUCTIONS and not self.pairwise_of(node):
                    body.append((depth, f"s{n} = {self.acc_init(node)}"))
            body.node = loop[0][1]
            body.append((depth, f"for j in range({self.shape[-1]}):"))
            for n, node in loop:
                body.node = node
                self.loop_member(n, node, q, depth + 1, body)
        return self.text(allocs, body)

    def in_loop(self, node, q):
        key = id(node.outputs[0])
        if node.op in _REDUCTIONS:
            return self.k.phase[key] - 1 == q
        return self.k.kind[key] == FULL and self.k.phase[key] == q

    def row_section(self, q, depth, body):
        k = self.k
        for n, node in enumerate(k.members):
            t = node.outputs[0]
            key = id(t)
            if k.kind[key] == FULL or k.phase[key] != q:
                continue
            body.node = node
            if node.op in _REDUCTIONS:
                if self.pairwise_of(node):
                    dtype = node.outputs[0].dtype.name
                    size = self.shape[-1]
                    if size <= 128:     # one block: its eight sums, written in the loop
                        lines = native_math.pairwise_block_lines(f"r{n}", size, f"s{n}",
                                                                 dtype_name(dtype))
                        body.extend((depth, line) for line in lines)
                    else:
                        self.pairwise.add(dtype)
                        body.append((depth, f"s{n} = ag_pairwise_sum_{dtype}(r{n}, 0, {size})"))
                expr = self.acc_final(node, f"s{n}")
            else:
                expr = self.element(node, q, True, n, depth, body)
            if expr != f"v{n}":
                body.append((depth, f"v{n} = {expr}"))
            if key in self.stored:
                index = self.loop_index(True)
                if k.kind[key] == FLAT:
                    index = index[:-1]
                body.append((depth, f"o{n}[{', '.join(index)}] = v{n}"))

    def loop_member(self, n, node, q, depth, body):
        key = id(node.outputs[0])
        if node.op in _REDUCTIONS:
            x = self.read(node.inputs[0], q)
            if self.pairwise_of(node):      # kept for NumPy's pairwise order after the loop
                body.append((depth, f"r{n}[j] = {x}"))
            else:
                body.append((depth, f"s{n} = {self.acc_step(node, f's{n}', x)}"))
            return
        expr = self.element(node, q, False, n, depth, body)
        if expr != f"v{n}":
            body.append((depth, f"v{n} = {expr}"))
        if key in self.stored:
            body.append((depth, f"{self.stored_at(key)} = v{n}"))

    def element(self, node, q, row, n, depth, body):
        """Member n's value as an expression, or as statements appended to `body` that
        assign `v{n}` (then the answer is `v{n}`)."""
        ins = [self.read(t, q, row) for t in node.inputs]
        expr = scalar_expr(node, ins)
        if expr == native_math.TANH:
            body.extend((depth, line) for line in native_math.tanh_lines(ins[0], f"v{n}"))
            return f"v{n}"
        return expr

    # -- reductions ----------------------------------------------------------------------------

    @staticmethod
    def pairwise_of(node):
        """True for a float sum or mean: NumPy adds those pairwise (native_math)."""
        return node.op in ("sum", "mean") and node.outputs[0].dtype.kind == "f"

    def acc_init(self, node):
        t = node.outputs[0]
        if node.op in ("sum", "mean"):
            return f"{dtype_name(t.dtype)}(0)"
        if t.dtype.kind == "f":
            return f"{dtype_name(t.dtype)}({'-' if node.op == 'max' else ''}np.inf)"
        info = np.iinfo(t.dtype)
        return f"{dtype_name(t.dtype)}({info.min if node.op == 'max' else info.max})"

    def acc_step(self, node, s, x):
        t = node.outputs[0]
        if node.op in ("sum", "mean"):
            return scalar_of(t, f"{s} + {x}")
        better = ">" if node.op == "max" else "<"
        if t.dtype.kind != "f":
            return f"({x} if {x} {better} {s} else {s})"
        # NumPy's max/min propagate NaN: once the accumulator is NaN it stays
        return f"({s} if {s} != {s} else ({x} if ({x} {better} {s} or {x} != {x}) else {s}))"

    def acc_final(self, node, s):
        t = node.outputs[0]
        if node.op == "mean":
            n = node.inputs[0].shape[-1]
            return scalar_of(t, f"{s} / {dtype_name(t.dtype)}({n})")
        return s

    # -- text ----------------------------------------------------------------------------------

    def text(self, allocs, body):
        params = sorted(self.params.values(), key=lambda p: int(p[1:]))
        lines = ["", _HEAD, f"def {self.name}({', '.join(params)}):"]
        for p in params:
            shape = self.param_shapes.get(p)
            if shape is not None:
                lines.append(f"    if {p}.shape != {shape!r}:")
                lines.append(f"        raise ValueError('jit_compile=True: a fused loop got an "
                             f"input of a shape other than {shape!r}')")
        lines += ["    " + a for a in allocs]
        for d in range(self.rank - 1):
            lines.append("    " * (1 + d) + f"for i{d} in range({self.shape[d]}):")
        self.owners = [None] * 2 + [self.k.members[0]] * (len(lines) - 2)
        lines += ["    " * d + text for d, text, _ in body]
        self.owners += [node for _, _, node in body]
        outs = []
        for t in self.k.outputs:
            outs.append(self.stored.get(id(t)) or self.value[id(t)])
        lines.append("    return " + (outs[0] if len(outs) == 1 else
                                      "(" + "".join(o + ", " for o in outs).rstrip() + ")"))
        self.owners.append(self.k.members[-1])
        return lines

    def call_args(self):
        return [main for main, _ in sorted(self.params.items(), key=lambda kv: int(kv[1][1:]))]

