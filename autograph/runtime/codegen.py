"""The fast executor: a graph becomes the source of one straight-line Python function.

Each node becomes one line (`add = k_add(x, y)`), a `cond` node an `if`/`else` block with
its branch graphs inlined, a `while_loop` node a `while` loop whose condition graph is
evaluated in place at the top of every iteration. Kernels (taken from the device's array
namespace), constants (moved to the device once) and attribute values are bound as globals
of the generated module, so a call does no per-node dispatch and no interpretation: for a
traced `a + b` it costs one Python call more than NumPy's add.

The source is kept on the function (`fn.__source__`) and registered with `linecache`, so
tracebacks through generated code show the line that failed. Compiled functions are cached
per graph and device.
"""

import itertools
import keyword
import linecache
import re
import weakref

import numpy as np

from autograph.runtime import primitives
from autograph.runtime.devices import get_device

_cache = weakref.WeakKeyDictionary()   # graph -> {device name: compiled function}
_counter = itertools.count()
_RESERVED = {"bool", "int", "xp", "to_host", "truth"}   # names the generated code uses
_LITERALS = (int, float, bool, str, type(None))


def compile_graph(graph, device=None):
    """`fn(*arrays) -> tuple of arrays` computing `graph` on `device` (made once, cached)."""
    device = get_device(device)
    per_graph = _cache.setdefault(graph, {})
    fn = per_graph.get(device.name)
    if fn is None or fn.__device__ is not device:
        fn = per_graph[device.name] = _Compiler(graph, device).build()
    return fn


def source_of(graph, device=None):
    """The generated Python source for `graph` (what `compile_graph` runs)."""
    return compile_graph(graph, device).__source__


class _Compiler:
    def __init__(self, graph, device):
        self.graph, self.device = graph, device
        self.lines = []
        self.used = set(_RESERVED)
        self.namespace = {"xp": device.xp, "to_host": device.to_host}
        self.kernels = {}          # op -> (global name, takes_xp)
        self.on_host = device.name == "cpu"

    # -- names -------------------------------------------------------------------------------

    def fresh(self, base):
        base = re.sub(r"\W", "_", str(base)) or "v"
        if base[0].isdigit():
            base = "_" + base
        if keyword.iskeyword(base):
            base += "_"
        name, i = base, 1
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        return name

    def bind(self, base, value):
        name = self.fresh(base)
        self.namespace[name] = value
        return name

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    # -- building ----------------------------------------------------------------------------

    def build(self):
        g = self.graph
        env = {}
        params = []
        for t in g.inputs:
            params.append(self.fresh(t.node.name))
            env[id(t)] = params[-1]
        self.emit(0, f"def {self.fresh(g.name)}({', '.join(params)}):")
        self.graph_body(g, env, 1)
        outs = [env[id(t)] for t in g.outputs]
        self.emit(1, f"return ({''.join(o + ', ' for o in outs).rstrip()})")
        source = "\n".join(self.lines) + "\n"
        filename = f"<autograph codegen {g.name} #{next(_counter)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), self.namespace)
        fn = self.namespace[self.lines[0][4:].split("(", 1)[0]]
        fn.__source__ = source
        fn.__device__ = self.device
        fn.__graph__ = weakref.ref(g)
        weakref.finalize(fn, linecache.cache.pop, filename, None)   # forget the source with fn
        return fn

    def graph_body(self, graph, env, depth, then=None):
        """Emit the nodes of `graph`, then `then()` if given (the block's last lines);
        `env` maps the graph's input tensors to expressions."""
        start = len(self.lines)
        for node in graph.nodes:
            op = node.op
            if op == "Placeholder":
                continue
            ins = [env[id(t)] for t in node.inputs]
            if op == "Const":
                env[id(node.outputs[0])] = self.bind(
                    node.name, self.device.to_device(node.attrs["value"]))
            elif op == "Identity":
                env[id(node.outputs[0])] = ins[0]
            elif op == "cond":
                self.cond(node, ins, env, depth)
            elif op == "while_loop":
                self.while_loop(node, ins, env, depth)
            else:
                self.call(node, ins, env, depth)
        if then is not None:
            then()
        if len(self.lines) == start:
            self.emit(depth, "pass")

    def outputs(self, node, env):
        names = [self.fresh(node.name if i == 0 else f"{node.name}_{i}")
                 for i in range(len(node.outputs))]
        for t, n in zip(node.outputs, names):
            env[id(t)] = n
        return names

    def call(self, node, ins, env, depth):
        fn, takes_xp = self.kernel(node.op)
        args = (["xp"] if takes_xp else []) + ins
        for key, value in node.attrs.items():
            if isinstance(value, np.dtype):
                value = self.device.dtype(value)
            if _is_literal(value):
                args.append(f"{key}={value!r}")
            else:
                args.append(f"{key}={self.bind(f'{node.name}_{key}', value)}")
        call = f"{fn}({', '.join(args)})"
        outs = self.outputs(node, env)
        if not outs:
            self.emit(depth, call)
        elif len(outs) == 1:
            self.emit(depth, f"{outs[0]} = {call}")
        else:
            self.emit(depth, f"{', '.join(outs)} = {call}")

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
            inner = {id(t): e for t, e in zip(branch.inputs, ins[1:])}
            self.graph_body(branch, inner, depth + 1, then=lambda: self.assign(
                depth + 1, outs, [inner[id(t)] for t in branch.outputs]))
        self.need_truth()

    def while_loop(self, node, ins, env, depth):
        n = len(node.outputs)
        limit = node.attrs["maximum_iterations"]
        if limit == "input":
            limit, expr, ins = self.fresh(f"{node.name}_limit"), ins[-1], ins[:-1]
            self.emit(depth, f"{limit} = int(to_host({expr}))")
        cg, bg = node.attrs["cond_graph"], node.attrs["body_graph"]
        loop_vars = [self.fresh(t.node.name) for t in bg.inputs[:n]]   # the user's names
        for t, name in zip(node.outputs, loop_vars):
            env[id(t)] = name
        captured = ins[n:]
        self.assign(depth, loop_vars, ins[:n])
        counter = None
        if limit is not None:
            counter = self.fresh(f"{node.name}_iteration")
            self.emit(depth, f"{counter} = 0")
        self.emit(depth, "while True:")
        if counter is not None:
            self.emit(depth + 1, f"if {counter} >= {limit}:")
            self.emit(depth + 2, "break")
        inner = {id(t): e for t, e in zip(cg.inputs, loop_vars + captured)}
        self.graph_body(cg, inner, depth + 1)
        self.emit(depth + 1, f"if not {self.truth(inner[id(cg.outputs[0])])}:")
        self.emit(depth + 2, "break")
        if counter is not None:
            self.emit(depth + 1, f"{counter} += 1")
        inner = {id(t): e for t, e in zip(bg.inputs, loop_vars + captured)}
        self.graph_body(bg, inner, depth + 1, then=lambda: self.assign(
            depth + 1, loop_vars, [inner[id(t)] for t in bg.outputs]))
        self.need_truth()

    def need_truth(self):
        if "truth" not in self.namespace:
            to_host = self.device.to_host
            self.namespace["truth"] = lambda value: bool(to_host(value))


def _is_literal(value):
    if isinstance(value, tuple):
        return all(_is_literal(v) for v in value)
    if isinstance(value, float) and not np.isfinite(value):
        return False
    return type(value) in _LITERALS
