"""Graph -> the Python source of one Numba `@njit` function (what `jit_compile=True` runs).

The sibling of codegen.py for native code: each node becomes one line, a `cond` an
`if`/`else` whose branches assign the node's outputs, a `while_loop` a `while True:` loop
that evaluates its condition graph at the top of each iteration (and counts
`maximum_iterations`). Numba compiles the whole function, loops included, to machine code.

What crosses the boundary:
- tensors of shape `()` are Numba scalars inside (the caller passes `x[()]`, and converts
  scalar results back to NumPy scalars of the graph's dtype); other tensors are arrays of a
  known rank;
- constants that are finite bool/int/float scalars are written into the source as
  literals (`np.float64(0.5)`); every other constant is an extra argument, so the source
  (and the on-disk cache key, its hash) does not hold array data;
- a Variable is a local of the native function: its value is an extra argument read once
  before, its last value an extra result the caller assigns after the call (when the
  graph assigns it), so reads and writes inside loops are plain local reads and writes;
- a TensorArray of a known size whose every element is written once and then stacked
  (fills.py) is a preallocated array written in place. Other TensorArrays, the
  stacks and gradient lists of backward graphs and functional updates (`setitem`,
  `ufunc_at`) are grad.py's. Prints, random draws and the primitives ops.py
  lacks are `NativeLoweringError`s.
"""

import numpy as np

from autograph import errors
from autograph.runtime.exec.native import bounds as native_bounds
from autograph.runtime.exec.native import copies as native_copies
from autograph.runtime.exec.native import fuse as native_fuse
from autograph.runtime.exec.native import kernel as native_kernel
from autograph.runtime.exec.native import layout as native_layout
from autograph.runtime.exec.native import library as native_library
from autograph.runtime.exec.native import ops as native_ops
from autograph.runtime.exec.native.fills import chain_plan, fill_plan
from autograph.runtime.exec.native.grad import GradLowering
from autograph.runtime.exec.native.jit import NativeLoweringError


_HINTS = {
    "print": "ag.print has no native form: call the function without jit_compile for "
             "debugging, or print its results outside",
    "random": "draw the random numbers outside and pass them in as an argument",
    "random_seed": "seed and draw outside the compiled function",
    "rng_new": "draw the random numbers outside and pass them in as an argument",
}


class Lowering:
    """The source of the native function of `graph` plus what its caller needs: the
    constants passed as arguments, the Variables read and assigned, and which node each
    line runs (to name the user's line in a compile error)."""

    def __init__(self, graph, name):
        self.graph, self.name = graph, name
        self.lines, self.made_by = [], []
        self.node = None
        self.used = set()
        self.const_args = []       # (name, array) passed after the graph's inputs
        self.variables = {}        # id(Variable) -> (local name, read weakref, node attrs)
        self.assigned = []         # ids of Variables the graph assigns, in first-write order
        self.consts = {}           # id(tensor) -> constant value, where known (for fills)
        self.fills = {}            # id(node) -> how a lowered TensorArray fill emits it
        self.buffers = set()       # names of lowered TensorArrays' buffers (fills)
        self.grad = None           # handles and updates (grad.py)
        self.helpers = []          # source lines of helpers defined in the module (copies)
        self.helper_made_by = []   # the node behind each of those lines (or None)
        self.kernels = []          # (kernel_modules.KernelModule, local name), in order
        self.kernel_names = {}     # a kernel module's name -> its local name here
        self.library = set()       # names of the shared library's helpers called (library.py)
        self.inplace = set()       # ids of Variables written in their own array (inplace.py)
        self.c_order = set()       # names bound to arrays Numba types C-contiguous (layout.py)

    # -- names and lines --------------------------------------------------------------------

    def fresh(self, base):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in str(base)) or "v"
        if base[0].isdigit():
            base = "_" + base
        name, i = base, 1
        while name in self.used or name in ("np", "bool", "int") or native_library.holds(name):
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        return name

    def emit(self, depth, text):
        text, wrapped = native_library.wrap(text)   # NumPy calls compiled once per machine
        self.library.update(wrapped)
        self.lines.append("    " * depth + text)
        self.made_by.append(self.node)

    def fail(self, node, why=None):
        where = errors.describe_origin(node.origin) if node.origin is not None else None
        hint = _HINTS.get(node.op) or why or (
            "this operation (or these dtypes/shapes) has no Numba lowering; run the "
            "function without jit_compile=True, or move this operation outside it")
        from autograph.runtime.ir.primitives import PRIMITIVES   # the function users wrote
        doc = (getattr(PRIMITIVES.get(node.op), "doc", None) or "").split(" ")[0]
        what = f"`{node.op}` ({doc})" if doc.startswith("scipy.") else f"`{node.op}`"
        raise NativeLoweringError(
            f"jit_compile=True: cannot compile operation {what} (node {node.name!r}"
            + (f", made at {where}" if where else "") + f") to native code: {hint}.")

    # -- the function -------------------------------------------------------------------------

    def build(self):
        g = self.graph
        env, params = {}, []
        self.grad = GradLowering(self, g)
        for t in g.inputs:
            params.append(self.fresh(t.node.name))
            env[id(t)] = params[-1]
            self.check_tensor(t.node, t)
        body_start = len(self.lines)
        self.grad.check_outputs(g)
        self.grad.prelude(1)
        self.graph_body(g, env, 1)
        outs = [env[id(t)] for t in g.outputs]
        outs += [self.variables[v][0] for v in self.assigned]
        self.single = len(outs) == 1     # one result: returned bare (no tuple to box)
        self.emit(1, f"return {outs[0]}" if self.single else
                  f"return ({''.join(o + ', ' for o in outs).rstrip()})")
        body, made_by = self.lines[body_start:], self.made_by[body_start:]
        self.lines, self.made_by = [], []
        var_params = [local for local, _, _ in self.variables.values()]
        all_params = params + [n for n, _ in self.const_args] + var_params
        self.node = None
        self.emit(0, f"def {self.name}({', '.join(all_params)}):")
        self.lines.extend(body)
        self.made_by.extend(made_by)
        used = sorted(set(self.grad.header()) | self.library)
        head = ["import math", "import numpy as np",   # numba.njit, quicker from the cache:
                "from autograph.runtime.exec.native.cache_load import njit"] + (
            native_library.import_lines(used) if used else []) + [
            module.import_line(local) for module, local in self.kernels] + [""]
        checks = not native_bounds.in_bounds(g, self.consts)   # (native/bounds.py)
        tail = ["", "", f"@njit(cache=True, error_model='numpy', boundscheck={checks})"]
        source = "\n".join(head + self.helpers + tail + self.lines) + "\n"
        self.made_by = ([None] * len(head) + self.helper_made_by + [None] * len(tail)
                        + self.made_by)
        return source

    def check_tensor(self, node, t):
        if self.grad.knows(t):    # a handle with a native form (handles.py)
            return
        if t.shape is None or any(d is not None and not isinstance(d, int) for d in t.shape):
            self.fail(node, "its value's rank is unknown when compiling")
        if t.dtype.kind not in "biufc" or t.dtype.itemsize < 4 and t.dtype.kind in "fc":
            self.fail(node, f"dtype {t.dtype} has no native form")   # (Numba has no float16)

    def graph_body(self, graph, env, depth):
        start = len(self.lines)
        outer = self.node
        self.grad.enter_graph(graph)
        kernels, members = native_fuse.plan(graph)
        readers = None
        for node in graph.nodes:
            op = node.op
            if op == "Placeholder":
                continue
            self.node = (node.name, op, node.origin)
            if id(node) in members:
                if id(node) in kernels:        # a fused run, emitted at its last member
                    readers = native_kernel.emit_run(self, kernels[id(node)], graph, env,
                                                     depth, readers)
                    native_layout.note_kernel(self, kernels[id(node)], env)
            elif op == "Const":
                self.const(node, env)
            elif op == "Identity":
                env[id(node.outputs[0])] = env[id(node.inputs[0])]
            elif op == "cond":
                self.cond(node, env, depth)
            elif op == "while_loop":
                self.while_loop(node, env, depth)
            elif op == "ta_new":
                self.ta_new(node, graph, env, depth)
            elif id(node) in self.fills:
                self.fills.pop(id(node))(node, env, depth)
            elif op in ("read_variable", "assign_variable", "update_variable"):
                self.variable(node, env, depth)
            elif self.grad.handles_op(op):    # stacks, gradient lists, TensorArrays, updates
                self.grad.lower(node, env, depth)
            elif op == "check_bound":     # Python's UnboundLocalError, raised natively
                self.emit(depth, f"if not {env[id(node.inputs[0])]}:")
                self.emit(depth + 1, f"raise UnboundLocalError({node.attrs['message']!r})")
            else:
                self.call(node, env, depth)
        self.node = outer
        if len(self.lines) == start:
            self.emit(depth, "pass")

    def const(self, node, env):
        value = node.attrs["value"]
        out = node.outputs[0]
        self.consts[id(out)] = value
        literal = _literal(value)
        if literal is not None:
            env[id(out)] = literal
            return
        self.check_tensor(node, out)
        name = self.fresh(node.name)
        self.const_args.append((name, value))
        env[id(out)] = name

    def call(self, node, env, depth):
        ins = [env[id(t)] for t in node.inputs]
        if node.op == "matmul":
            ins = [self.blas_operand(t, e, env) for t, e in zip(node.inputs, ins)]
        for t in node.outputs:
            self.check_tensor(node, t)
        if node.op == "broadcast_to" and self.broadcast(node, ins, env, depth):
            return
        expr = native_ops.lower(node, ins) if node.op not in _HINTS else None
        if expr is None:
            self.fail(node)
        out = node.outputs[0]
        expr = native_layout.reshape_in_place(self, node, ins, expr)
        if node.op == "matmul" and expr.startswith("np.dot("):   # (library.py: per machine)
            expr = "matmul(" + expr[len("np.dot("):]
            self.library.add("matmul")
        if native_ops.is_scalar(out):
            expr = native_ops.scalar_of(out, expr)
        name = env[id(out)] = self.fresh(node.name)
        self.emit(depth, f"{name} = {expr}")
        native_layout.note(self, name, node, expr)

    def broadcast(self, node, ins, env, depth):
        """`broadcast_to` of an array to a static shape as a new array filled by a loop
        (copies.py): Numba's `np.broadcast_to(...).copy()` compiles its shape checks and
        a read-only view type first. False leaves it to native_ops."""
        x, out = node.inputs[0], node.outputs[0]
        if not x.shape or not out.shape or not native_ops._static_shape(out):
            return False
        name = env[id(out)] = self.fresh(node.name)
        self.c_order.add(name)
        scalar = native_layout.filled_scalar(x, env)
        if scalar is not None:    # a scalar made an array then broadcast: one np.full
            self.emit(depth, f"{name} = np.full({tuple(out.shape)!r}, {scalar})")
            return True
        self.emit(depth, f"{name} = np.empty({tuple(out.shape)!r}, "
                         f"{native_ops.dtype_name(out.dtype)})")
        fn = native_copies.put(self, "set", len(out.shape), len(x.shape))
        self.emit(depth, f"{fn}({name}, {ins[0]})")
        return True

    def blas_operand(self, t, expr, env):
        """A matmul operand that is the transpose of a 2-D array as `contiguous(x).T`: an
        F-ordered view BLAS reads as it is (np.dot's ascontiguousarray would copy it)."""
        producer = t.node
        if producer.op == "permute_dims" and len(t.shape) == 2 and \
                tuple(producer.attrs.get("axes", ())) == (1, 0) and \
                id(producer.inputs[0]) in env:
            return native_layout.contiguous(self, env[id(producer.inputs[0])]) + ".T"
        return native_layout.contiguous(self, expr)

    def assign(self, depth, targets, values):
        pairs = [(t, v) for t, v in zip(targets, values) if t != v]
        if pairs:
            self.emit(depth, f"{', '.join(t for t, _ in pairs)} = "
                             f"{', '.join(v for _, v in pairs)}")

    def enter(self, graph, outer, exprs):
        for t, o in zip(graph.inputs, outer):
            if id(o) in self.consts:
                self.consts[id(t)] = self.consts[id(o)]
        return {id(t): e for t, e in zip(graph.inputs, exprs)}

    # -- control flow -------------------------------------------------------------------------

    def cond(self, node, env, depth):
        ins = [env[id(t)] for t in node.inputs]
        outs = [self.fresh(node.name if i == 0 else f"{node.name}_{i}")
                for i in range(len(node.outputs))]
        for t, o in zip(node.outputs, outs):
            self.check_tensor(node, t)
            env[id(t)] = o
        for key, head in (("true_graph", f"if {ins[0]}:"), ("false_graph", "else:")):
            branch = node.attrs[key]
            self.emit(depth, head)
            inner = self.enter(branch, node.inputs[1:], ins[1:])
            self.graph_body(branch, inner, depth + 1)
            self.assign(depth + 1, outs, [self.typed(t, inner[id(t)]) for t in branch.outputs])

    def typed(self, t, expr):
        """`expr` (a branch or loop body result) with `t`'s exact scalar type, so the
        variable it is assigned to has one Numba type on every path."""
        if native_ops.is_scalar(t) and not expr.isidentifier() and not self.grad.knows(t):
            return native_ops.scalar_of(t, expr)
        return expr

    def while_loop(self, node, env, depth):
        ins = [env[id(t)] for t in node.inputs]
        n = len(node.outputs)
        limit = node.attrs["maximum_iterations"]
        if limit == "input":
            limit, ins = f"int({ins[-1]})", ins[:-1]
        cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
        loop_vars = [self.fresh(t.node.name) for t in bg.inputs[:n]]
        for t, name, init in zip(node.outputs, loop_vars, ins):
            if init not in self.buffers:    # (a lowered TensorArray's handle is its buffer)
                self.check_tensor(node, t)
            else:
                self.buffers.add(name)
            env[id(t)] = name
        outer = node.inputs[:len(ins)]
        self.assign(depth, loop_vars, [self.typed(t, e) for t, e in zip(node.outputs, ins[:n])])
        self.grad.enter_loop(node, loop_vars, depth)
        count = None
        if limit is not None:
            count = self.fresh(f"{node.name}_iteration")
            self.emit(depth, f"{count} = 0")
        self.emit(depth, "while True:")
        if count is not None:
            self.emit(depth + 1, f"if {count} >= {limit}:")
            self.emit(depth + 2, "break")
        inner = self.enter(cg, outer, loop_vars + ins[n:])
        self.graph_body(cg, inner, depth + 1)
        self.emit(depth + 1, f"if not {inner[id(cg.outputs[0])]}:")
        self.emit(depth + 2, "break")
        if count is not None:
            self.emit(depth + 1, f"{count} += 1")
        inner = self.enter(bg, outer, loop_vars + ins[n:])
        self.graph_body(bg, inner, depth + 1)
        self.assign(depth + 1, loop_vars,
                    [self.typed(t, inner[id(t)]) for t in bg.outputs[:n]])

    # -- TensorArray fills and Variables ------------------------------------------------------

    def ta_new(self, node, graph, env, depth):
        consts = dict(self.consts)
        plan = fill_plan(graph, node, consts) or chain_plan(graph, node, consts)
        if plan is None:     # the general form: a buffer and a written mask (grad.py)
            return self.grad.lower(node, env, depth)
        _, writes, stack, _, shape, dtype = plan
        name = env[id(node.outputs[0])] = self.fresh(node.name)
        self.buffers.add(name)
        self.emit(depth, f"{name} = np.empty({shape!r}, {native_ops.dtype_name(dtype)})")
        for write in writes if isinstance(writes, list) else [writes]:
            self.fills[id(write)] = self.fill_write
        self.fills[id(stack)] = self.fill_stack

    def fill_write(self, node, env, depth):
        handle, index, value = (env[id(t)] for t in node.inputs)
        rank = len(node.inputs[2].shape)
        if rank:      # an array element: a loop (copies.py), not Numba's slice assignment
            fn = native_copies.put(self, "set", rank, rank)
            self.emit(depth, f"{fn}({handle}[{index}], {value})")
        else:
            self.emit(depth, f"{handle}[{index}] = {value}")
        env[id(node.outputs[0])] = handle

    def fill_stack(self, node, env, depth):
        env[id(node.outputs[0])] = env[id(node.inputs[0])]

    def variable_entry(self, node):
        """(local, weak ref, attrs) of the Variable `node` reads or writes."""
        attrs = node.attrs
        var = attrs["variable"]()
        if var is None:
            self.fail(node, "its Variable was deleted")
        entry = self.variables.get(id(var))
        if entry is None:
            shape = tuple(np.shape(var._value))
            entry = self.variables[id(var)] = (
                self.fresh(f"var_{attrs['name']}"), attrs["variable"],
                {"name": attrs["name"], "dtype": np.dtype(var.dtype), "shape": shape})
        return entry

    def variable_local(self, node):
        return self.variable_entry(node)[0]

    def variable(self, node, env, depth):
        attrs = node.attrs
        var = attrs["variable"]()
        entry = self.variable_entry(node)
        local = entry[0]
        if node.op == "read_variable":
            if not native_ops.is_scalar(node.outputs[0]):
                self.check_tensor(node, node.outputs[0])
            env[id(node.outputs[0])] = name = self.fresh(node.name)
            self.emit(depth, f"{name} = {local}")
            return
        value = env[id(node.inputs[0])]
        scalar = native_ops.is_scalar(node.inputs[0])
        dtype = entry[2]["dtype"]
        if node.op == "update_variable":
            fn = {"add": "np.add", "subtract": "np.subtract"}.get(attrs["op"])
            if fn is None:
                self.fail(node)
            operand = native_ops.dtype_name(attrs["operand_dtype"])
            same = np.dtype(attrs["operand_dtype"]) == np.dtype(dtype)
            old = f"{operand}({local})" if scalar else local if same else \
                f"{local}.astype({operand})"
            value = f"{fn}({old}, {value})"
            # (an array result of the Variable's dtype needs no cast: astype would copy)
            if not scalar and same and node.inputs[0].dtype == np.dtype(dtype):
                self.emit(depth, f"{local} = {value}")
                if id(var) not in self.assigned:
                    self.assigned.append(id(var))
                return
        if scalar:
            value = native_ops.scalar_of(_Spec(np.dtype(dtype)), value)
        elif node.op == "update_variable" or node.inputs[0].dtype != np.dtype(dtype):
            value = f"({value}).astype({native_ops.dtype_name(dtype)})"
        self.emit(depth, f"{local} = {value}")
        if id(var) not in self.assigned:
            self.assigned.append(id(var))


class _Spec:
    """A dtype with an empty shape (what scalar_of reads)."""
    shape = ()

    def __init__(self, dtype):
        self.dtype = dtype


def _literal(value):
    """The source literal of a 0-d constant Numba reads exactly, or None."""
    if value.ndim != 0 or value.dtype.kind not in "biuf":
        return None
    v = value.item()
    if value.dtype.kind == "b":
        return repr(bool(v))
    if value.dtype.kind in "iu" and not -2 ** 62 < v < 2 ** 62:
        return None
    if value.dtype.kind == "f" and not np.isfinite(v):
        return None
    return f"{native_ops.dtype_name(value.dtype)}({v!r})"


