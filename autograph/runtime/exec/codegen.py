"""The fast executor: a graph becomes the source of one straight-line Python function.

Each node becomes one line, a `cond` node an `if`/`else` block with its branch graphs
inlined, a `while_loop` node a `while` loop whose condition graph is evaluated in place at
the top of every iteration. Kernels (taken from the device's array namespace), constants
(moved to the device once) and attribute values are bound as globals of the generated
module, so a call does no per-node dispatch and no interpretation: for a traced `a + b` it
costs one Python call more than NumPy's add.

Scalar loops are where per-node cost shows, so the code is shaped for them:

- arithmetic, comparison and bitwise primitives without attrs become Python operators
  (`add = x + y`, not `k_add(x, y)`). The array API standard defines these operators on
  every namespace's arrays as the same functions, and the graph already gives both operands
  the same dtype, so the result is the kernel's. On NumPy scalars an operator takes NumPy's
  scalar fast path, ~20x cheaper than a ufunc call.
- on the NumPy device a 0-d constant is bound as a NumPy scalar (`value[()]`, same dtype),
  so loop values stay scalars and keep that fast path (a 0-d array operand would send every
  operator back through a ufunc call). Results are the same values and dtypes; the one
  visible difference is NumPy's: integer overflow in scalar arithmetic warns where array
  arithmetic wraps silently (it wraps in both).
- a counter loop (`while i < limit: ...; i = i + step`, which is what `for i in range(n)`
  stages) becomes a Python `for` over the counter's values (`numpy.arange` on NumPy): no
  compare, no increment, no condition check per iteration (a converted `break` keeps its
  flag check: `if not flag: break`). See `_counter_loop`. A counter the body reads only as
  an index (a subscript, a TensorArray read or write) iterates Python ints (`range`), which
  NumPy indexes with faster than its own integers.
- a TensorArray of a size known when compiling, filled by a counter loop that writes every
  element once and then stacked (the RNN pattern) is a preallocated array written in place,
  `states[i] = state`, as a hand-written loop fills its output; `stack` is that array. See
  `_fill_plan`; every other TensorArray keeps the kernels of tensor_array.py.
- a condition graph of one node is the `while` test itself (`while n != Const:`); a body
  node whose value is only a loop variable's next value assigns that variable directly
  (`s = s + x`) when nothing after it needs the old value; `x[i]` with ints, None and ...
  is a Python subscript on NumPy.

The source is kept on the function (`fn.__source__`) and registered with `linecache`, so
tracebacks through generated code show the line that failed. Compiled functions are cached
per graph and device.
"""

import collections
import itertools
import keyword
import weakref

import numpy as np

from autograph import config
from autograph import errors
from autograph import frames
from autograph.runtime.ir import primitives
from autograph.runtime.control_flow import is_effectful
from autograph.runtime.exec.codegen_shapes import ShapeArithmetic
from autograph.runtime.devices import get_device
from autograph.runtime.exec import loop_inplace

_cache = weakref.WeakKeyDictionary()   # graph -> {device name: compiled function}
_RESERVED = {"bool", "int", "range", "xp", "to_host", "truth", "counter_values", "ag_error",
             "ag_error_at", "ag_false", "ag_true", "ag_ndarray"}
_LITERALS = (int, float, bool, str, type(None))

# primitives that are Python operators on every array API array (same function, same dtypes)
_BINARY = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
           "remainder": "%", "pow": "**", "matmul": "@",
           "equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
           "greater": ">", "greater_equal": ">=",
           "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
           "bitwise_left_shift": "<<", "bitwise_right_shift": ">>",
           "logical_and": "&", "logical_or": "|", "logical_xor": "^"}   # on bools
_UNARY = {"negative": "-", "positive": "+", "bitwise_invert": "~", "logical_not": "~"}


def _own_lines(op):
    """A primitive whose module writes its lines: its kernel's `codegen_emit(compiler, node,
    ins, env, depth)` (autograph.runtime.progress's inline test), or None. Such a kernel's
    `index_inputs` are the positions it reads as an index (a Python int counter serves)."""
    return getattr(primitives.lookup(op).kernel, "codegen_emit", None)


def _split_assign(line):
    """(name, expression) of a line `name = expression`, else None (str methods, not a
    regular expression: compiling one cost every fresh process's first call)."""
    name, sep, expr = line.partition(" = ")
    if not sep or not name or "\n" in line or not all(c.isalnum() or c == "_" for c in name):
        return None
    return name, expr


def _word_chars(text):
    """`text` with every character that is not a letter, digit or underscore made `_`."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text)

_CHUNK = 1 << 20    # counter values made at once by counter_values on NumPy
_SHORT = 32         # a counter loop known to run fewer times stays a while loop: making
                    # the counter's values costs ~1 us, a step of the while loop's test ~50 ns


def compile_graph(graph, device=None, check_numerics=None):
    """`fn(*arrays) -> tuple of arrays` computing `graph` on `device` (made once, cached).
    `check_numerics`: test the floating-point results (numerics.py): True tests enough of
    them to see a NaN and runs a failing call again with "full" (every result tested) when
    the graph can be run again (numerics_plan.py); None: as `ag.config.check_numerics`
    says now."""
    device = get_device(device)
    if check_numerics is None:
        check_numerics = config.numerics_checked()
    per_graph = _cache.setdefault(graph, {})
    if check_numerics:
        from autograph.runtime.exec import numerics_plan
        if check_numerics != "full" and not numerics_plan.replayable(graph):
            check_numerics = "full"
    key = f"{device.name} check_numerics {check_numerics}" if check_numerics else device.name
    fn = per_graph.get(key)
    if fn is None or fn.__device__ is not device:
        fn = per_graph[key] = _Compiler(graph, device, check_numerics).build()
    return fn


def source_of(graph, device=None, check_numerics=None):
    """The generated Python source for `graph` (what `compile_graph` runs)."""
    return compile_graph(graph, device, check_numerics).__source__


# -- run-time helpers of counter loops --------------------------------------------------------

def _numpy_counter_values(start, limit, delta, dtype, shift=0):
    """The values of `range(start, limit + shift, delta)` as NumPy scalars of `dtype`,
    made in chunks (a loop of 10^9 steps does not allocate 8 GB)."""
    start, limit = int(start), int(limit) + shift
    span = delta * _CHUNK
    if (limit - start) // span < 1:        # one chunk (the common case): the array itself
        return np.arange(start, limit, delta, dtype=dtype)
    stops = range(start + span, limit + span, span)
    clamp = min if delta > 0 else max
    return itertools.chain.from_iterable(
        np.arange(stop - span, clamp(stop, limit), delta, dtype=dtype) for stop in stops)


def _counter_values_on(device):
    if device.xp is np:
        return _numpy_counter_values
    xp, to_host = device.xp, device.to_host

    def counter_values(start, limit, delta, dtype, shift=0):
        start, limit = int(to_host(start)), int(to_host(limit)) + shift
        return (xp.asarray(v, dtype=dtype) for v in range(start, limit, delta))
    return counter_values


def _counter_end_on(device, np_dtype):
    """counter_end(start, limit, delta, dtype): the counter's value after the loop (the
    first value failing the test, wrapped to the dtype as the while loop's adds would)."""
    info = np.iinfo(np_dtype)
    xp, to_host, scalar = device.xp, device.to_host, device.xp is np

    def counter_end(start, limit, delta, dtype, shift=0):
        start = int(to_host(start))
        end = start + len(range(start, int(to_host(limit)) + shift, delta)) * delta
        end = (end - info.min) % (info.max - info.min + 1) + info.min
        return np_dtype.type(end) if scalar else xp.asarray(end, dtype=dtype)
    return counter_end


# -- the compiler -----------------------------------------------------------------------------

class _Compiler:
    def __init__(self, graph, device, check_numerics=False):
        self.graph, self.device = graph, device
        self.numerics = None       # check_numerics: numerics.emit_checks (imported only then)
        self.numerics_plan = None  # ... and in "watch" mode the results it tests
        if check_numerics:
            from autograph.runtime.exec import numerics
            self.numerics = numerics.emit_checks
            if check_numerics != "full":
                self.numerics_plan = numerics.watch_plan(graph)
        self.lines = []
        self.made_by = []          # per line: (node name, op, node origin) of the node it runs
        self.node = None           # ... of the node being emitted
        self.used = set(_RESERVED)
        self.next_suffix = {}      # base -> the suffix `fresh` tries next for it
        self.probes = 0            # names `fresh` found taken (work, counted for tests)
        self.namespace = {"xp": device.xp, "to_host": device.to_host,
                          "ag_false": np.False_, "ag_true": np.True_}
        self.kernels = {}          # op -> (global name, takes_xp)
        self.on_host = device.name == "cpu"
        self.numpy = device.xp is np
        self.int_counters = {}   # "(ag_int64 + (t))" -> "t": see counter_loop
        self.int_arithmetic = {}   # id(`counter +- k` node read as an index) -> (counter's
                                   # input position, sign, k): see index_arithmetic
        self.consts = {}           # id(tensor) -> its constant value (NumPy), where known
        self.preferred = {}        # id(tensor) -> the name its producing node assigns
        self.fills = {}            # id(node) -> how a lowered TensorArray fill emits it
        self.counters = {}         # id(while_loop node) -> its _Counter, decided by a fill
        self.shapes = ShapeArithmetic(self)
        self.body_graph = graph    # the graph whose nodes graph_body is emitting
        self.loops = []            # a record per loop written (errors name them: see errors.py)
        self.loop_depths = []      # ... and the depth of its body's lines
        self.loop = -1             # the index of the loop whose lines are being written
        self.in_loop = []          # per line: the innermost loop it lies in, or -1
        self.into = {}             # id(node) -> the input whose dead memory takes its result
        self.rows = {}             # id(node) -> the stack whose next row takes it (stack_rows)

    # -- names -------------------------------------------------------------------------------

    def fresh(self, base):
        base = str(base)
        if base not in self.used and base.isidentifier() and not keyword.iskeyword(base):
            self.used.add(base)     # the common case, in one test
            return base
        if not base.isidentifier():
            base = _word_chars(base) or "v"
            if base[0].isdigit():
                base = "_" + base
        if keyword.iskeyword(base):
            base += "_"
        # numbering resumes where the last name made from `base` stopped: restarting from
        # 1 every time made a graph of n nodes of one kind cost n**2 probes
        name, i = base, self.next_suffix.get(base, 1)
        while name in self.used:
            self.probes += 1
            name, i = f"{base}_{i}", i + 1
        self.next_suffix[base] = i
        self.used.add(name)
        return name

    def bind(self, base, value):
        name = self.fresh(base)
        self.namespace[name] = value
        return name

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)
        self.made_by.append(self.node)
        self.in_loop.append(self.loop)

    def scalar_out(self, name, t):
        """The expression returning output `t` (named `name`): on NumPy a 0-d output is
        always a NumPy scalar, whichever path made it (a loop carries 0-d arrays, arithmetic
        gives scalars), so one graph returns one type (a 0-d array becomes `x[()]`). An
        argument returned as it is stays the object passed in, as in Python."""
        if not self.numpy or t.shape != ():
            return name
        source = t
        while source.node.op == "Identity" and source.node.inputs:
            source = source.node.inputs[0]
        if any(source is i for i in self.graph.inputs):
            return name
        self.namespace["ag_ndarray"] = np.ndarray
        return f"({name}[()] if {name}.__class__ is ag_ndarray else {name})"

    # -- building ----------------------------------------------------------------------------

    def build(self):
        g = self.graph
        env = {}
        params = []
        for t in g.inputs:
            params.append(self.fresh(t.node.name))
            env[id(t)] = params[-1]
        self.emit(0, f"def {self.fresh(g.name)}({', '.join(params)}):")
        # an error names the node that raised it (and so the user's line): the handler
        # costs nothing until something raises (zero-cost try in Python 3.11+)
        self.emit(1, "try:")
        self.graph_body(g, env, 2)
        outs = [self.scalar_out(env[id(t)], t) for t in g.outputs]
        self.emit(2, f"return ({''.join(o + ', ' for o in outs).rstrip()})")
        self.emit(1, "except Exception as ag_error:")
        if self.numerics_plan is not None:   # run again, every result tested: numerics.py
            self.namespace["ag_recheck"] = self.numerics_plan.recheck(g, self.device)
            self.emit(2, f"ag_recheck({''.join(p + ', ' for p in params)})")
        self.emit(2, "ag_error_at(ag_error)")
        self.emit(2, "raise")
        source = "\n".join(self.lines) + "\n"
        filename, number = frames.take_codegen_filename(g.name)   # reused once fn is gone
        self.namespace["ag_error_at"] = errors.RunErrorLocator(
            filename, g.name, self.made_by,
            errors.loop_rebinding(self.loops, self.loop_depths, self.lines, self.in_loop),
            self.in_loop)
        exec(compile(source, filename, "exec"), self.namespace)
        fn = self.namespace[self.lines[0][4:].split("(", 1)[0]]
        fn.__source__ = source
        fn.__device__ = self.device
        fn.__graph__ = weakref.ref(g)
        fn.__name_probes__ = self.probes
        fn.__kernels__ = {name: op for op, (name, _) in self.kernels.items()}   # trace_cache
        frames.register_source(filename, number, source, fn)   # forgotten with fn
        return fn

    def graph_body(self, graph, env, depth, then=None, skip=(), block=True):
        """Emit the nodes of `graph` (but those in `skip`), then `then()` if given (the
        block's last lines); `env` maps the graph's input tensors to expressions. `block`:
        the lines are a block of their own (`pass` when there are none)."""
        start = len(self.lines)
        outer_node, outer_graph, self.body_graph = self.node, self.body_graph, graph
        releases = None
        chains, in_chain = _fused_chains(self, graph)   # elementwise runs: one loop each
        if graph is self.graph:   # the function's own straight-line code: drop dead arrays
            releases = loop_inplace.Releases(graph, [env[id(t)] for t in graph.inputs],
                                          self.namespace, moved=in_chain and _moved(
                                              chains, in_chain, graph))
        loop_inplace.emit_graph(self, graph)      # updates of new arrays: in place
        # dead buffers reused (see buffer_reuse); not under full check_numerics, whose check
        # of a result reads the operation's inputs after it (is the NaN new, or passed on?)
        if self.numpy and (self.numerics is None or self.numerics_plan is not None) \
                and _has_arrays(graph):
            from autograph.runtime.exec import buffer_reuse
            self.into.update(buffer_reuse.plan(graph, self.device.kernels))
            if any(nd.op == "ad_stack_push" for nd in graph.nodes):   # a gradient's loop
                from autograph.runtime.exec import stack_rows
                self.rows.update(stack_rows.plan(graph, self.device.kernels))
        for p, node in enumerate(graph.nodes):
            op = node.op
            if releases is not None and p:
                prev = graph.nodes[p - 1]     # (a chain: every output its call binds)
                dead = releases.after(p - 1, chains[id(prev)] if id(prev) in chains
                                      else prev, env)
                if dead:
                    self.emit(depth, f"del {', '.join(dead)}")
            if op == "Placeholder" or node in skip or id(node) in in_chain:
                continue
            if id(node) in chains:
                self.node = (node.name, op, node.origin)
                _emit_chain(self, chains[id(node)], env, depth)
                continue
            self.node = (node.name, op, node.origin)
            if op == "Const":
                self.const(node, env)
                continue
            ins = [env[id(t)] for t in node.inputs]
            if self.int_counters:
                ins = self.as_index(node, ins)
            if op == "Identity":
                env[id(node.outputs[0])] = ins[0]
            elif op == "cond":
                self.cond(node, ins, env, depth)
            elif op == "while_loop":
                self.while_loop(node, ins, env, depth, graph)
            elif op == "ta_new":
                self.ta_new(node, ins, env, depth, graph)
            elif id(node) in self.fills:
                self.fills.pop(id(node))(node, ins, env, depth)
            elif _own_lines(op) is not None:
                _own_lines(op)(self, node, ins, env, depth)
            else:
                self.call(node, ins, env, depth)
            if self.numerics is not None:
                self.numerics(self, node, ins, env, depth)
        self.node, self.body_graph = outer_node, outer_graph
        if then is not None:
            then()
        if block and len(self.lines) == start:
            self.emit(depth, "pass")

    def const(self, node, env):
        value = node.attrs["value"]
        out = node.outputs[0]
        self.consts[id(out)] = value
        if self.numpy and value.ndim == 0 and value.dtype.kind in "biufc":
            bound = value[()]          # a NumPy scalar: operators on it take the fast path
        else:
            bound = self.device.to_device(value)
        env[id(out)] = self.bind(node.name, bound)

    def enter(self, graph, outer_tensors, exprs):
        """The env of subgraph `graph` whose inputs receive `exprs` (computed from the outer
        `outer_tensors`, whose constant values the inner placeholders inherit)."""
        for t, o in zip(graph.inputs, outer_tensors):
            if id(o) in self.consts:
                self.consts[id(t)] = self.consts[id(o)]
        return {id(t): e for t, e in zip(graph.inputs, exprs)}

    def outputs(self, node, env):
        if len(node.outputs) == 1:      # the common case, without the list comprehension
            t = node.outputs[0]
            name = env[id(t)] = self.preferred.pop(id(t), None) or self.fresh(node.name)
            return [name]
        names = [self.preferred.pop(id(t), None) or
                 self.fresh(node.name if i == 0 else f"{node.name}_{i}")
                 for i, t in enumerate(node.outputs)]
        for t, n in zip(node.outputs, names):
            env[id(t)] = n
        return names

    def call(self, node, ins, env, depth):
        into = self.into.pop(id(node), None)
        stack = self.rows.pop(id(node), None)
        if into is not None and not ins[into].isidentifier():
            into = None
        if stack is not None and env.get(id(stack), "").isidentifier():
            # a value a loop stores, computed into its stack's next row (stack_rows)
            from autograph.runtime.exec import stack_rows
            expr = self.kernel_call(node, ins, into=stack_rows.out_expression(
                self, node, env[id(stack)], None if into is None else ins[into]))
        elif into is not None:
            # the result goes into a dead input's memory (buffer_reuse proved it unread)
            expr = self.kernel_call(node, ins, into=ins[into])
        else:
            expr = self.operator(node, ins)
            if expr is None:
                expr = self.kernel_call(node, ins)
        outs = self.outputs(node, env)
        if not outs:
            self.emit(depth, expr)
        elif len(outs) == 1:
            self.emit(depth, f"{outs[0]} = {expr}")
        else:
            self.emit(depth, f"{', '.join(outs)} = {expr}")

    def operator(self, node, ins):
        """The node as a Python operator expression, or None when it needs its kernel."""
        op = node.op
        if len(node.outputs) != 1 or op in self.device.kernels:
            return None
        if id(node) in self.int_arithmetic:    # a counter's neighbour as an index: ints
            p, sign, k = self.int_arithmetic[id(node)]
            return f"{ins[p]} {sign} {k!r}"
        if self.numpy:   # scalar shape arithmetic as Python (codegen_shapes)
            expr = self.shapes.expression(self.body_graph, node, ins)
            if expr is not None:
                return expr
        if op == "getitem":
            return self.subscript(node, ins)
        if node.attrs or primitives.lookup(op).kernel != op:
            return None
        if len(ins) == 2 and op in _BINARY:
            return f"{ins[0]} {_BINARY[op]} {ins[1]}"
        if len(ins) == 1 and op in _UNARY:
            if self.numpy and _UNARY[op] == "~" and node.inputs[0].dtype == np.bool_ \
                    and node.inputs[0].shape == ():
                # `not` of a flag (break_, do_return): `~` on a NumPy bool scalar is a ufunc
                # call (~2 us), a conditional expression ~40 ns, with the same bool_ result
                return f"ag_false if {ins[0]} else ag_true"
            return f"{_UNARY[op]}{ins[0]}"
        return None

    def subscript(self, node, ins):
        """`x[i, None, ...]` on NumPy, whose basic indexing is what the getitem kernel
        reproduces with array API calls (ints and integer scalars; no slices here)."""
        key = self.index_text(node.attrs["index"], ins[1:])
        return None if key is None else f"{ins[0]}[{key}]"

    def index_text(self, index, dynamic):
        """A basic index (ints, integer scalars `dynamic[j]`, None, ..., slices) as NumPy
        source, or None (not NumPy, an empty or an advanced index)."""
        if not self.numpy:
            return None
        key = []
        for item in index:
            tag = item[0]
            if tag == "i":
                key.append(repr(item[1]))
            elif tag == "d":
                key.append(dynamic[item[1]])
            elif tag == "n":
                key.append("None")
            elif tag == "e":
                key.append("...")
            elif tag == "s":   # NumPy slices exactly as the kernel does (it clamps the same)
                key.append(":".join("" if b is None else dynamic[b[1]] if isinstance(b, tuple)
                                    else repr(b) for b in item[1:]))
            else:
                return None
        if not key:
            return None
        return ", ".join(key)

    def kernel_call(self, node, ins, into=None):
        fn, takes_xp = self.kernel(node.op)
        args = (["xp"] if takes_xp else []) + ins
        if into is not None:   # a ufunc's `out=`; a Variable update's `into=True`
            args.append("into=True" if node.op == "update_variable" else f"out={into}")
        for key, value in node.attrs.items():
            if isinstance(value, np.dtype):
                value = self.device.dtype(value)
            if _is_literal(value):
                args.append(f"{key}={value!r}")
            else:
                args.append(f"{key}={self.bind(f'{node.name}_{key}', value)}")
        return f"{fn}({', '.join(args)})"

    def kernel(self, op):
        found = self.kernels.get(op)
        if found is None:
            kernel = self.device.kernels.get(op) or primitives.lookup(op).kernel
            if callable(kernel):
                found = (self.bind(f"k_{op}", kernel), True)
            else:   # a name in the namespace (the device raises if it lacks it)
                found = (self.bind(f"k_{op}", self.device.kernel(op, kernel)), False)
            self.kernels[op] = found
        return found

    def truth(self, expr):
        return expr if self.on_host else f"truth({expr})"

    def assign(self, depth, targets, values):
        """`a, b = x, y` (all at once: a loop's new values may read the old ones)."""
        pairs = [(t, v) for t, v in zip(targets, values) if t != v]
        if len(pairs) == 1:
            self.emit(depth, f"{pairs[0][0]} = {pairs[0][1]}")
        elif pairs:
            self.emit(depth, f"{', '.join(t for t, _ in pairs)} = {', '.join(v for _, v in pairs)}")

    def cond(self, node, ins, env, depth):
        outs = self.outputs(node, env)
        for key, keyword_ in (("true_graph", "if"), ("false_graph", "else")):
            branch = node.attrs[key]
            self.emit(depth, f"if {self.truth(ins[0])}:" if keyword_ == "if" else "else:")
            inner = self.enter(branch, node.inputs[1:], ins[1:])
            self.graph_body(branch, inner, depth + 1, then=lambda: self.assign(
                depth + 1, outs, [inner[id(t)] for t in branch.outputs]))
        self.need_truth()

    def while_loop(self, node, ins, env, depth, graph):
        n = len(node.outputs)
        limit = node.attrs["maximum_iterations"]
        if limit == "input":
            limit, expr, ins = self.fresh(f"{node.name}_limit"), ins[-1], ins[:-1]
            self.emit(depth, f"{limit} = int(to_host({expr}))")
        cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
        loop_vars = [self.fresh(t.node.name) for t in bg.inputs[:n]]   # the user's names
        for t, name in zip(node.outputs, loop_vars):
            env[id(t)] = name
        outer = node.inputs[:len(ins)]
        self.assign(depth, loop_vars, ins[:n])
        loop_inplace.emit_loop(self, node, loop_vars, depth)   # accumulators updated in place
        if limit is None:
            counter = self.counters.pop(id(node), None) or _counter_loop(node, self.consts)
            used_after = counter is not None and _uses(graph, node.outputs[counter.k])
            if counter is not None and not (used_after and counter.extra is not None):
                # (after an early stop the counter's value is not the range's end)
                self.counter_loop(node, counter, loop_vars, ins[n:], outer, depth, used_after)
                return
        # the iteration number (errors name it; a limit reads it): read from a variable
        # the body steps by a constant (`steps += 1`), else counted: 0 in the test and body
        # of the first iteration, 1 in the second, ...
        stepping = None if limit is not None else _stepping_variable(node, self.consts)
        if stepping is None:
            counter = self.fresh(f"{node.name}_iteration")
            self.emit(depth, f"{counter} = 0")
            iteration = ("count", counter)
        else:
            j, step, start = stepping
            if start is None:
                start = self.fresh(f"{loop_vars[j]}_start")
                self.emit(depth, f"{start} = {loop_vars[j]}")
            iteration, counter = ("step", loop_vars[j], start, step), None
        outer_loop = self.enter_loop(node, loop_vars, bg, iteration, depth + 1)
        inner = self.enter(cg, outer, loop_vars + ins[n:])
        test, test_made_by = self.lines_of(lambda: self.graph_body(cg, inner, depth + 1))
        test_expr = inner[id(cg.outputs[0])]
        single = _split_assign(test[0].strip()) if len(test) == 1 else None
        if limit is None and single and single[0] == test_expr:
            self.emit(depth, f"while {self.truth(single[1])}:")   # the test is one node
        else:
            self.emit(depth, "while True:")
            if limit is not None:
                self.emit(depth + 1, f"if {counter} >= {limit}:")
                self.emit(depth + 2, "break")
            self.lines.extend(test)
            self.made_by.extend(test_made_by)
            self.in_loop.extend([self.loop] * len(test))
            self.emit(depth + 1, f"if not {self.truth(test_expr)}:")
            self.emit(depth + 2, "break")
        inner = self.enter(bg, outer, loop_vars + ins[n:])
        self.prefer_loop_var_names(bg, loop_vars)

        def then():
            self.assign(depth + 1, loop_vars, [inner[id(t)] for t in bg.outputs])
            if counter is not None:
                self.emit(depth + 1, f"{counter} += 1")
        self.graph_body(bg, inner, depth + 1, then=then)
        self.loop = outer_loop
        self.need_truth()

    def enter_loop(self, node, loop_vars, bg, iteration, body_depth):
        """Record a loop whose lines follow (errors name it: see autograph.errors' loop
        records); returns the enclosing one's
        index, which `self.loop` gets back when the loop's lines are written."""
        outer = self.loop
        self.loops.append((outer, node.name, node.origin,
                           errors.shown_variables(loop_vars, bg.inputs), iteration))
        self.loop_depths.append(body_depth)
        self.loop = len(self.loops) - 1
        return outer

    def counter_loop(self, node, c, loop_vars, captured, outer, depth, used_after):
        """`for counter in counter_values(start, limit, step, dtype):` (see _counter_loop)."""
        cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
        inner = self.enter(cg, outer, loop_vars + captured)
        test_nodes = {c.test, c.out} | c.per_iteration
        self.graph_body(cg, inner, depth, skip=test_nodes, block=False)   # invariant: once
        limit = inner[id(c.limit)]
        if "counter_values" not in self.namespace:
            self.namespace["counter_values"] = _counter_values_on(self.device)
        dtype = self.bind("counter_dtype", self.device.dtype(c.dtype))
        var = loop_vars[c.k]
        start = var
        known_start = self.consts.get(id(node.inputs[c.k]))
        if used_after or known_start is None:   # (errors count iterations from it)
            start = self.fresh(f"{var}_start")
            self.emit(depth, f"{start} = {var}")
        outer_loop = self.enter_loop(node, loop_vars, bg, (
            "range", var, start if known_start is None else int(known_start), c.step), depth + 1)
        args = f"{start}, {limit}, {c.step}, {dtype}" + (f", {c.shift}" if c.shift else "")
        mixed = False
        if self.numpy and (self.index_only(bg, c, node) or self.values_only_in_branches(bg, c)):
            # Python ints index as NumPy integers do, and ~2x faster (no values to make);
            # a counter also read otherwise becomes a NumPy integer only where it is read
            # so (`found = counter_dtype(t)` in the branch that finds: no cost per step)
            mixed = not self.index_only(bg, c, node)
            stop = f"int({limit}) {'+' if c.shift > 0 else '-'} 1" if c.shift else limit
            self.emit(depth, f"for {var} in range({start}, {stop}, {c.step}):")
        else:
            self.emit(depth, f"for {var} in counter_values({args}):")
        if c.extra is not None:
            extra, negate = c.extra, "not "
            if self.numpy and _negated_flag(cg, extra):
                # `not break_` read only here: `if break_: break` (one test, no negation)
                extra, negate = extra.node.inputs[0], ""
            self.graph_body(cg, inner, depth + 1, block=False,
                            skip={nd for nd in cg.nodes if nd not in c.per_iteration
                                  or (not negate and nd is c.extra.node)})
            self.emit(depth + 1, f"if {negate}{self.truth(inner[id(extra)])}:")
            self.emit(depth + 2, "break")
            self.need_truth()
        inner = self.enter(bg, outer, loop_vars + captured)
        if mixed:
            value = self.shapes.boxed(c.dtype, var)   # the NumPy integer, cheaply
            inner[id(bg.inputs[c.k])] = value
            self.int_counters[value] = var
        self.prefer_loop_var_names(bg, loop_vars, exclude=c.k)
        others = [k for k in range(len(loop_vars)) if k != c.k]
        self.graph_body(bg, inner, depth + 1, skip=c.skip, then=lambda: self.assign(
            depth + 1, [loop_vars[k] for k in others],
            [inner[id(bg.outputs[k])] for k in others]))
        self.loop = outer_loop
        if used_after:
            end = self.bind("counter_end", _counter_end_on(self.device, c.dtype))
            self.emit(depth, f"{var} = {end}({args})")

    def index_only(self, bg, c, loop=None):
        """True when the body reads counter `c` only as an index: a NumPy subscript's, a
        TensorArray read's or write's (and the increment the for loop replaces), so its
        values may be Python ints instead of NumPy integers."""
        ph = bg.inputs[c.k]
        if any(t is ph for t in bg.outputs):
            return False
        arithmetic = {}
        for nd in bg.nodes:
            for p, t in enumerate(nd.inputs):
                if t is ph and nd not in c.skip and not self.index_use(nd, p):
                    found = self.index_arithmetic(bg, nd, ph, loop)
                    if found is None:
                        return False
                    arithmetic[id(nd)] = (p,) + found
        self.int_arithmetic.update(arithmetic)
        return True

    def index_arithmetic(self, bg, node, ph, loop):
        """`(sign, constant)` when `node` is `ph + k` or `ph - k` with an integer constant
        k (a neighbour's index: `out[i - 1]`) read only as an index: Python ints then serve
        (`i - 1`, written by `operator`); else None."""
        if not self.numpy or node.op not in ("add", "subtract") or node.attrs or \
                len(node.inputs) != 2 or node.outputs[0].dtype.kind not in "iu":
            return None
        a, b = node.inputs
        other = b if a is ph else a if b is ph and node.op == "add" else None
        value = None
        if other is not None and other is not ph:
            if other.node.op == "Const":
                value = other.node.attrs["value"]
            elif loop is not None:       # a constant the body captures
                j = next((j for j, t in enumerate(bg.inputs) if t is other), None)
                if j is not None and j >= len(loop.outputs):
                    value = self.consts.get(id(loop.inputs[j]))
        if value is None or np.ndim(value) != 0 or np.asarray(value).dtype.kind not in "iu":
            return None
        out = node.outputs[0]
        if any(t is out for t in bg.outputs):
            return None
        readers = [(nd, p) for nd in bg.nodes for p, t in enumerate(nd.inputs) if t is out]
        if not readers or not all(self.index_use(nd, p) for nd, p in readers):
            return None
        return ("+" if node.op == "add" else "-"), int(value)

    def values_only_in_branches(self, bg, c):
        """Whether the body reads counter `c` as an index, and otherwise only inside the
        branches of an `if` (a cond's captured input): then Python ints index, and the
        NumPy value is made only when such a branch runs (a search loop's `found = t`)."""
        ph = bg.inputs[c.k]
        if any(t is ph for t in bg.outputs):
            return False
        indexed = False
        for nd in bg.nodes:
            for p, t in enumerate(nd.inputs):
                if t is not ph or nd in c.skip:
                    continue
                if self.index_use(nd, p):
                    indexed = True
                elif not (nd.op == "cond" and p >= 1):
                    return False
        return indexed

    def index_use(self, node, p):
        """Whether input p of `node` is read as an index (a Python int serves as well)."""
        if p == 1 and node.op in ("ta_write", "ta_read") or \
                p in getattr(primitives.lookup(node.op).kernel, "index_inputs", ()):
            return True
        if node.op in ("setitem", "ufunc_at"):     # (their kernels take int(index) too)
            return p >= 2 and node.op not in self.device.kernels and _plain_index(node)
        return p >= 1 and node.op == "getitem" and "getitem" not in self.device.kernels \
            and _plain_index(node)

    def as_index(self, node, ins):
        """`ins` with a counter's NumPy value replaced by its Python int where `node` reads
        it as an index (see counter_loop: a counter also read otherwise)."""
        return [self.int_counters.get(name, name) if self.index_use(node, p) else name
                for p, name in enumerate(ins)]

    def readers(self, graph):
        """loop_inplace.readers_of(graph), built once per graph this code is made of."""
        cache = self.__dict__.setdefault("_readers", {})
        if id(graph) not in cache:
            cache[id(graph)] = (graph, loop_inplace.readers_of(graph))   # (graph: id kept)
        return cache[id(graph)][1]

    def ta_new(self, node, ins, env, depth, graph):
        """A TensorArray that a counter loop fills (see _fill_plan) becomes a preallocated
        array written in place, `buffer[i] = value`, as a hand-written loop fills its
        output; any other one calls the ta_new kernel."""
        plan = _fill_plan(graph, node, self.consts) if self.numpy else None
        if plan is None:
            chain = loop_inplace.chain_plan(graph, node, self.consts,
                                            self.readers(graph)) if self.numpy else None
            if chain is None:
                self.call(node, ins, env, depth)
            else:
                self.fill_chain(node, env, depth, *chain)
            return
        loop, write, stack, counter, shape, dtype = plan
        name = self.outputs(node, env)[0]
        dtype = self.bind(f"{node.name}_dtype", dtype)
        self.emit(depth, f"{name} = xp.empty({shape!r}, {dtype})")
        self.counters[id(loop)] = counter
        self.fills[id(write)] = self.fill_write
        self.fills[id(stack)] = self.fill_stack

    def fill_chain(self, node, env, depth, writes, stack, shape, dtype, indices):
        """A TensorArray written at constant indices in straight-line code (an unrolled
        loop; see loop_inplace.chain_plan): a preallocated buffer, `buf[3] = value`."""
        name = self.outputs(node, env)[0]
        dtype = self.bind(f"{node.name}_dtype", dtype)
        self.emit(depth, f"{name} = xp.empty({shape!r}, {dtype})")
        for write, index in zip(writes, indices):
            self.fills[id(write)] = lambda nd, ins, env_, d, k=index: self.fill_at(nd, ins, env_, d, k)
        self.fills[id(stack)] = self.fill_stack

    def fill_at(self, node, ins, env, depth, index):
        self.emit(depth, f"{ins[0]}[{index}] = {ins[2]}")
        env[id(node.outputs[0])] = ins[0]

    def fill_write(self, node, ins, env, depth):
        self.preferred.pop(id(node.outputs[0]), None)
        self.emit(depth, f"{ins[0]}[{ins[1]}] = {ins[2]}")
        env[id(node.outputs[0])] = ins[0]

    def fill_stack(self, node, ins, env, depth):
        env[id(node.outputs[0])] = ins[0]      # every element was written: the buffer is it

    def prefer_loop_var_names(self, bg, loop_vars, exclude=None):
        """Let a body node assign its result straight to the loop variable it becomes
        (`s = s + x`, not `add = s + x` ... `s = add`) where that is safe: the value is that
        variable's next value only, and nothing after the node reads the variable's old
        value (no later node, and no other next value passes it on, also by an Identity:
        that is the old value's name)."""
        n = len(loop_vars)
        position, last_read = {}, {}     # node -> its place; tensor -> its last reader's
        root = {}      # an Identity's output -> the tensor whose name it is (graph_body)
        for p, nd in enumerate(bg.nodes):
            position[id(nd)] = p
            for u in nd.inputs:
                last_read[root.get(id(u), id(u))] = p
            if nd.op == "Identity":
                u = nd.inputs[0]
                root[id(nd.outputs[0])] = root.get(id(u), id(u))
        times = collections.Counter(root.get(id(t), id(t)) for t in bg.outputs)
        for j, t in enumerate(bg.outputs[:n]):
            p = position.get(id(t.node))
            if j == exclude or p is None or t.node.op in ("Const", "Identity", "while_loop") \
                    or times[id(t)] != 1:
                continue
            old = bg.inputs[j]
            if times[id(old)] or last_read.get(id(old), -1) > p:
                continue     # another next value, or a later node, needs the old value
            self.preferred[id(t)] = loop_vars[j]

    def lines_of(self, emit):
        """The lines `emit()` adds, taken out of the output (and the nodes they run)."""
        start = len(self.lines)
        emit()
        taken, made_by = self.lines[start:], self.made_by[start:]
        del self.lines[start:], self.made_by[start:], self.in_loop[start:]
        return taken, made_by

    def need_truth(self):
        if not self.on_host and "truth" not in self.namespace:   # see `truth`
            to_host = self.device.to_host
            self.namespace["truth"] = lambda value: bool(to_host(value))


class _Counter:
    """A while_loop that counts: loop variable `k` (an integer `dtype`) starts anywhere, the
    test is `k < limit` (`>` for a negative step, `<=` / `>=` too) with a limit the loop does
    not change, and the body's next `k` is `k + step` with a constant step."""
    __slots__ = ("k", "dtype", "limit", "step", "shift", "test", "skip", "out", "extra",
                 "per_iteration")

    def __init__(self, k, dtype, limit, step, shift, test, skip, out, extra, per_iteration):
        self.k, self.dtype, self.limit, self.step = k, dtype, limit, step
        self.shift, self.test, self.skip = shift, test, skip
        # `test & extra` when the loop may stop early: `extra` is checked in the loop, after
        # the test's nodes that depend on other loop variables (`per_iteration`)
        self.out, self.extra, self.per_iteration = out, extra, per_iteration


_TESTS = {"less": (1, 0), "less_equal": (1, 1), "greater": (-1, 0), "greater_equal": (-1, -1)}


def _counter_loop(node, consts, shortest=_SHORT):
    """The _Counter of a while_loop node, or None when it is not a counter loop (or one
    known to run fewer than `shortest` times).

    Such a loop runs as `for k in range(start, limit, step)` computed in the counter's
    dtype: the values and the number of iterations are the while loop's whenever the last
    `k + step` does not overflow the dtype (the while loop would wrap around there; the
    `for` stops, as Python's range and eager NumPy do)."""
    n = len(node.outputs)
    cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
    out = test = cg.outputs[0].node
    extra = None            # `counter test & extra` (a converted `break` adds one)
    if out.op == "logical_and" and not out.attrs and len(out.inputs) == 2:
        a, b = out.inputs
        test, extra = (a.node, b) if a.node.op in _TESTS else (b.node, a)
    if test.op not in _TESTS or test.attrs or len(test.inputs) != 2:
        return None
    ph, limit = test.inputs
    k = next((j for j, t in enumerate(cg.inputs[:n]) if t is ph), None)
    if k is None or ph.dtype.kind not in "iu" or limit is ph or extra is ph:
        return None
    # the limit must be loop-invariant; so is every other node of the test, but those
    # computing `extra` from other loop variables (run per iteration); none reads the
    # counter or has an effect
    unchanged = {j for j in range(n) if bg.outputs[j] is bg.inputs[j]}
    varying = {id(cg.inputs[j]) for j in range(n) if j not in unchanged and j != k}
    per_iteration = set()
    for nd in cg.nodes:
        if nd.op == "Placeholder" or nd is test or nd is out:
            continue
        if is_effectful(nd) or any(t is ph or t.node is test for t in nd.inputs):
            return None   # (the for loop computes neither the counter nor its test)
        if any(id(t) in varying for t in nd.inputs):
            per_iteration.add(nd)
            varying.update(id(t) for t in nd.outputs)
    if id(limit) in varying or limit is ph:
        return None
    # the body steps the counter by a constant of the test's sign
    step_node = bg.outputs[k].node
    if step_node.op != "add" or step_node.attrs:
        return None
    a, b = step_node.inputs
    step = b if a is bg.inputs[k] else a if b is bg.inputs[k] else None
    if step is None:
        return None
    if step.node.op == "Const":
        value = step.node.attrs["value"]
    else:   # a captured constant: the outer tensor's value
        j = next((j for j, t in enumerate(bg.inputs) if t is step), None)
        value = consts.get(id(node.inputs[j])) if j is not None and j >= n else None
    if value is None or np.ndim(value) != 0:
        return None
    step_value = int(value)
    sign, shift = _TESTS[test.op]
    if step_value * sign <= 0:
        return None
    start_value, limit_value = consts.get(id(node.inputs[k])), _constant_of(node, cg, limit, consts)
    if start_value is not None and limit_value is not None and len(range(
            int(start_value), int(limit_value) + shift, step_value)) < shortest:
        return None
    skip = set()
    if not any(step_node.outputs[0] is t for nd in bg.nodes for t in nd.inputs) and \
            sum(t is step_node.outputs[0] for t in bg.outputs) == 1:
        skip.add(step_node)     # the increment feeds only the next k: the for loop does it
    return _Counter(k, ph.dtype, limit, step_value, shift, test, skip, out, extra,
                    per_iteration)


def _stepping_variable(node, consts):
    """(j, step, start) for a while_loop `node` whose loop variable j is an integer the body
    steps by a constant at every iteration (`next j = j + step`, step != 0): its value
    counts the iterations. `start`: its initial value when a constant, else None. None
    when there is no such variable."""
    n = len(node.outputs)
    bg = node.attrs["body_graph"]
    for j in range(n):
        ph, out = bg.inputs[j], bg.outputs[j]
        if ph.dtype.kind not in "iu" or ph.shape != () or out.node.op != "add" \
                or out.node.attrs or len(out.node.inputs) != 2:
            continue
        a, b = out.node.inputs
        other = b if a is ph else a if b is ph else None
        if other is None:
            continue
        if other.node.op == "Const":
            value = other.node.attrs["value"]
        else:   # a captured constant: the outer tensor's value
            k = next((k for k, t in enumerate(bg.inputs) if t is other), None)
            value = consts.get(id(node.inputs[k])) if k is not None and k >= n else None
        if value is None or getattr(value, "ndim", 0) != 0 or int(value) == 0:
            continue
        start = consts.get(id(node.inputs[j]))
        return j, int(value), None if start is None else int(start)
    return None


def _negated_flag(graph, tensor):
    """True when `tensor` is `not flag` of a bool scalar that nothing else in `graph` reads
    but the loop's test node (a converted `break`'s extra test)."""
    node = tensor.node
    if node.op != "logical_not" or node.inputs[0].shape != () or node.inputs[0].dtype != np.bool_:
        return False
    readers = _readers(graph, tensor)
    return len(readers) == 1 and readers[0][0] is not None and readers[0][0].op == "logical_and"


def _fill_plan(graph, new, consts, shortest=_SHORT):
    """How `graph` fills the TensorArray that node `new` (a ta_new) makes, when codegen may
    lower it to a preallocated buffer: (while_loop, ta_write, ta_stack, _Counter, buffer
    shape, dtype); else None. `shortest`: the fewest iterations a loop known when
    compiling must run to count (native code passes 0: it has no per-loop cost to amortise).

    The pattern is `ta = TensorArray(dtype, size=N)`, `for i in range(N): ta =
    ta.write(i, value)`, `ta.stack()`: a fixed size N known when compiling; a counter
    loop from 0 to N step 1 that cannot stop early, so it writes every element exactly
    once; a write whose index is the counter and whose value's dtype and shape inference
    knows; and no other use of the handle (no read, no second stack, no output). Then the
    buffer is complete after the loop and `stack` is the buffer itself."""
    fixed = _fixed_size(graph, new, consts)
    if fixed is None:
        return None
    size, consts = fixed
    loop, j = _only_reader(graph, new.outputs[0], "while_loop")
    n = 0 if loop is None else len(loop.outputs)
    if loop is None or j >= n or loop.attrs["maximum_iterations"] is not None:
        return None
    c = _counter_loop(loop, consts, shortest)
    if c is None or c.extra is not None or c.step != 1 or c.shift != 0:
        return None
    cg, bg = loop.attrs["cond_graph"], loop.attrs["body_graph"]
    start, limit = consts.get(id(loop.inputs[c.k])), _constant_of(loop, cg, c.limit, consts)
    if start is None or limit is None or int(start) != 0 or int(limit) != int(size):
        return None
    write, p = _only_reader(bg, bg.inputs[j], "ta_write")
    if write is None or p != 0 or _uses(cg, cg.inputs[j]) or \
            write.inputs[1] is not bg.inputs[c.k] or _readers(bg, write.outputs[0]) != [(None, j)]:
        return None
    value = write.inputs[2]
    if value.shape is None or None in value.shape or value.dtype.kind not in "biufc":
        return None
    stack, _ = _only_reader(graph, loop.outputs[j], "ta_stack")
    if stack is None or stack.attrs["dtype"] != value.dtype:
        return None
    return loop, write, stack, c, (int(size),) + tuple(value.shape), value.dtype


def _fixed_size(graph, new, consts):
    """(size, `consts` plus `graph`'s constants) for a ta_new node `new` of a fixed integer
    size known when compiling; else None."""
    if new.attrs.get("dynamic_size", True):
        return None
    consts = dict(consts)
    consts.update((id(nd.outputs[0]), nd.attrs["value"]) for nd in graph.nodes
                  if nd.op == "Const")
    size = consts.get(id(new.inputs[0]))
    if size is None or np.ndim(size) != 0 or np.asarray(size).dtype.kind not in "iu":
        return None
    return int(size), consts


def _readers(graph, tensor):
    """(node, input position) for each read of `tensor` by a node of `graph`; a graph
    output counts as a read by None."""
    return list(_each_reader(graph, tensor))


def _each_reader(graph, tensor):
    for nd in graph.nodes:
        for p, t in enumerate(nd.inputs):
            if t is tensor:
                yield nd, p
    for p, t in enumerate(graph.outputs):
        if t is tensor:
            yield None, p


def _only_reader(graph, tensor, op):
    """(node, input position) of the one read of `tensor` in `graph` when that is by an
    `op` node; (None, -1) when it has other readers, none, or is an output."""
    readers = _readers(graph, tensor)
    if len(readers) == 1 and readers[0][0] is not None and readers[0][0].op == op:
        return readers[0]
    return None, -1


def _plain_index(node):
    """True when getitem `node` is the Python subscript codegen writes (see subscript)."""
    index = node.attrs.get("index")
    return bool(index) and all(item[0] in "idne" for item in index)


def _constant_of(node, cg, tensor, consts):
    """The value of a test-graph tensor when it is a constant (its own or captured)."""
    if tensor.node.op == "Const":
        return tensor.node.attrs["value"]
    j = next((j for j, t in enumerate(cg.inputs) if t is tensor), None)
    n = len(node.outputs)
    return consts.get(id(node.inputs[j])) if j is not None and j >= n else None


def _fused_chains(cg, graph):
    """fused_chains.plan's ({last member: chain}, {other member or deferred assign: chain})
    on NumPy when Numba is installed, not under check_numerics; else nothing to fuse."""
    if not (cg.numpy and cg.numerics is None and _has_arrays(graph)):
        return {}, {}
    from autograph.runtime.exec import fused_chains
    found = fused_chains.plan(graph, cg.device.kernels)
    if found[0]:
        from autograph.runtime.exec import fused_kernel
        if not fused_kernel.enabled():
            return {}, {}
    return found


def _moved(chains, in_chain, graph):
    from autograph.runtime.exec import fused_chains
    return fused_chains.moved_reads(chains, in_chain, graph)


def _emit_chain(cg, chain, env, depth):
    from autograph.runtime.exec import fused_chains
    fused_chains.emit(cg, chain, env, depth)


def _has_arrays(graph):
    """Whether some node of `graph` makes an array of known rank >= 1 (else no buffer is
    worth planning, and scalar programs import nothing more)."""
    return any(t.shape for nd in graph.nodes for t in nd.outputs)


def _uses(graph, tensor):
    """True when a node of `graph` or its outputs read `tensor`."""
    return next(_each_reader(graph, tensor), None) is not None


def _is_literal(value):
    if isinstance(value, tuple):
        return all(_is_literal(v) for v in value)
    if isinstance(value, float) and not np.isfinite(value):
        return False
    return type(value) in _LITERALS
