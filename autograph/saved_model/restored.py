"""What `load` gives back: objects, functions and concrete functions without their source.

- `RestoredObject`: the saved object's children as attributes (`obj.encoder`), `variables`,
  `trainable_variables`, `regularization_losses`, and `obj(...)` when it had a `__call__`.
- `RestoredFunction`: every saved trace of one `ag.function`; a call picks the trace whose
  arrays' dtypes/shapes (None dims match any) and Python values (`training=True`) fit, and
  raises TypeError listing the saved signatures when none does.
- `RestoredConcrete`: one trace. Eagerly it runs its graph (optimised, compiled per device)
  like a ConcreteFunction; inside another trace its nodes are copied into the caller's graph,
  so a loaded model becomes part of a bigger one (and of its gradients).
"""

import inspect

import numpy as np

from autograph import _bundle
from autograph import config as _config
from autograph.runtime import trace_type as tt
from autograph.runtime.exec.calls import (
    FAST_PATH, GRAPHS, SCOPES, _fresh_constants, _make_runner, choose_device, constant_outputs,
    fast_key, unwrapped, user_error)
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.ir.tensor import Tensor
from autograph.saved_model import format as fmt
from autograph.saved_model.format import SavedModelError
from autograph.saved_model.graphs import copy_graph, record_captures
from autograph.saved_model.params import Fixed, NoMatch, describe_key, match


# -- one trace -------------------------------------------------------------------------------------

class RestoredConcrete:
    """One saved trace: a graph, its parameters, its output structure."""

    def __init__(self, name, graph, params, outputs, record, limits):
        self.name = name
        self.graph = graph
        self.params = params
        self._record = record
        self._unpack = _unpacker(outputs, len(graph.outputs), limits)
        self._runners = {}
        # the first call runs through the interpreter (then True) only for a graph without
        # loops or branches: the interpreter walks a loop's body node by node every
        # iteration (a 100,000-step recurrence took 12.7 s there, 0.07 s compiled)
        self._interpreted = any(graph.subgraphs(n) for n in graph.nodes)
        # the graph holds its Variables weakly; the loaded function owns them
        self._owned = [r() for r in _graph_variables(graph)]

    @property
    def variables(self):
        return [v for v in (r() for r in _graph_variables(self.graph)) if v is not None]

    def signature(self):
        parts = []
        for p in self.params:
            star = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(p.kind.name, "")
            parts.append(f"{star}{p.name}: {describe_key(p.key)}")
        return f"{self.name}({', '.join(parts)})"

    def outputs_text(self):
        return ", ".join(f"{t.dtype.name}{tt._shape_str(t.shape)}" for t in self.graph.outputs)

    def bind(self, args, kwargs):
        """The flat arrays of a call that fits this trace, else NoMatch (with why)."""
        P = inspect.Parameter
        bound, args = {}, list(args)
        positional = [p for p in self.params if p.kind in (
            P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD) and type(p.key) is not Fixed]
        for p in positional:
            if args:
                bound[p.name] = args.pop(0)
        var_pos = [p for p in self.params if p.kind == P.VAR_POSITIONAL]
        var_kw = [p for p in self.params if p.kind == P.VAR_KEYWORD]
        if args:
            if not var_pos:
                raise NoMatch(f"{len(args)} positional arguments too many")
            bound[var_pos[0].name] = tuple(args)
        extra = {}
        names = {p.name: p for p in self.params}
        for k, v in kwargs.items():
            p = names.get(k)
            if p is not None and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD, P.POSITIONAL_ONLY):
                if k in bound:
                    raise NoMatch(f"`{k}` given twice")
                bound[k] = v
            elif var_kw:
                extra[k] = v
            else:
                raise NoMatch(f"no parameter `{k}`")
        if var_kw:
            bound[var_kw[0].name] = extra
        flat = []
        for p in self.params:
            if p.name not in bound:
                if type(p.key) is Fixed:
                    bound[p.name] = Fixed
                elif p.default is not inspect.Parameter.empty:
                    bound[p.name] = p.default
                elif type(p.key) is tt.Literal:
                    bound[p.name] = p.key.value
                elif p.kind == P.VAR_POSITIONAL:
                    bound[p.name] = ()
                else:
                    raise NoMatch(f"missing argument `{p.name}`")
            match(bound[p.name], p.key, p.name, flat)
        return flat

    def __call__(self, *args, **kwargs):
        try:
            flat = self.bind(args, kwargs)
        except NoMatch as e:
            raise TypeError(f"{self.signature()}: {e}") from None
        return self.call_flat(flat)

    def call_flat(self, flat):
        if get_default_graph() is not None:
            return self._unpack(inline(self.graph, flat))
        runner = self.runner(flat)
        try:
            return runner(*flat)
        except Exception as exc:
            user_error(exc)
            raise

    def runner(self, flat):
        """The compiled graph for these arrays' device (built once per device)."""
        dev = choose_device(None, flat)
        on_numpy = all(type(a) is np.ndarray or isinstance(a, np.generic) for a in flat)
        move = not (on_numpy and dev.name == "cpu")
        numerics = _config._check_numerics     # (compiled apart: runtime/exec/numerics.py)
        runner = self._runners.get((dev.name, move, numerics))
        if runner is None and not self._runners and not self._interpreted and not move \
                and not numerics:
            # the process's first call of a loop-free trace: run the graph as it is (the
            # reference interpreter) rather than optimise and compile it; a second call
            # compiles
            self._interpreted = True
            return self._interpreting(dev)
        if runner is None or runner.__device__ is not dev:
            from autograph.runtime.exec import codegen, optimize
            graph = optimize.optimize(self.graph)
            compiled = _fresh_constants(codegen.compile_graph(graph, dev, numerics),
                                        constant_outputs(graph), dev)
            runner = _make_runner(compiled, self._unpack, dev, "device", move, self.name)
            runner.__device__ = dev
            runner.__numpy_cpu__ = not move
            self._runners[(dev.name, move, numerics)] = runner
            if _bundle.pending:   # a process's first compile: keep the bytecode it imported
                _bundle.first_call_done()
        return runner

    def _interpreting(self, dev):
        """A runner that evaluates the saved graph node by node (runtime/exec/interpreter.py,
        the executors' reference): what a one-shot call of a loaded model needs, without
        importing and running the optimiser and code generation (~130 KB of Python, most of
        a fresh process's cost where there is no bytecode). Not kept by the fast path."""
        from autograph.runtime.exec import interpreter
        graph = self.graph
        scalars = _scalar_outputs(graph)

        def evaluate(*arrays):
            outs = interpreter._run(graph, list(arrays), dev)
            for i in scalars:    # as codegen returns them (scalar_out): one graph, one type
                if outs[i].__class__ is np.ndarray:
                    outs[i] = outs[i][()]
            return outs
        runner = _make_runner(_fresh_constants(evaluate, constant_outputs(graph), dev),
                              self._unpack, dev, "device", False, self.name)
        runner.__device__ = dev
        runner.__numpy_cpu__ = False    # (so the fast path does not keep it)
        if _bundle.pending:   # a process's first call: keep the bytecode it imported
            _bundle.first_call_done()
        return runner

    def __repr__(self):
        return f"<RestoredConcrete {self.signature()}>"


def _scalar_outputs(graph):
    """The places of 0-d outputs that codegen returns as NumPy scalars (codegen's
    scalar_out): all but an argument returned as it is."""
    return [i for i, t in enumerate(graph.outputs)
            if t.shape == () and not any(unwrapped(t) is x for x in graph.inputs)]


def _graph_variables(graph):
    out, seen = [], set()
    for node in graph.walk():
        ref = node.attrs.get("variable") if node.op.endswith("_variable") else None
        if ref is not None and id(ref()) not in seen:
            seen.add(id(ref()))
            out.append(ref)
    return out


def inline(graph, flat):
    """Copy `graph`'s nodes into the graph being traced, on the caller's tensors `flat`;
    returns the caller's tensors for its outputs. Ordinary ops are staged anew (their shape
    rules refine static shapes); cond/while_loop nodes keep their saved subgraphs."""
    target = get_default_graph()
    env = {id(ph): primitives.convert(a) for ph, a in zip(graph.inputs, flat)}
    for node in graph.nodes:
        if node.op == "Placeholder":
            continue
        ins = [env[id(t)] for t in node.inputs]
        attrs = node.attrs
        ref = attrs.get("variable") if node.op.endswith("_variable") else None
        if ref is not None:
            attrs = {**attrs, **_live(ref)._attrs(target)}
        if any(isinstance(v, Graph) for v in attrs.values()):
            attrs = {k: copy_graph(v, target, env) if isinstance(v, Graph) else v
                     for k, v in attrs.items()}
        if node.op in ("cond", "while_loop"):
            for sub in attrs.values():
                if isinstance(sub, Graph):
                    for r in _graph_variables(sub):
                        _live(r)._attrs(target)       # the caller's graph holds them too
            new = target.add_node(node.op, ins, attrs,
                                  [(t.dtype, t.shape, t.weak) for t in node.outputs],
                                  name=node.name, origin=node.origin)
            record_captures(new)
        else:
            new = primitives.bind(node.op, ins, attrs, graph=target, node_name=node.name)
        for old, t in zip(node.outputs, new.outputs):
            env[id(old)] = t
    return [env[id(t)] for t in graph.outputs]


def _live(ref):
    var = ref()
    if var is None:
        raise ReferenceError("a Variable of the loaded model was deleted")
    return var


def _unpacker(rec, n, limits):
    """fn(flat outputs) -> the saved result structure, rebuilt fresh per call."""
    def build(r, depth=0):
        if depth > limits.max_nesting:
            raise SavedModelError("function outputs nest too deep")
        if type(r) is list:
            kids = [build(x, depth + 1) for x in r]
            return lambda outs: [k(outs) for k in kids]
        if type(r) is dict and len(r) == 1:
            (tag, body), = r.items()
            if tag == "$out" and type(body) is int and 0 <= body < n:
                return lambda outs: outs[body]
            if tag == "$value":
                value = fmt.decode(body, "function outputs", limits)
                return lambda outs: value
            if tag == "$tuple" and type(body) is list:
                kids = [build(x, depth + 1) for x in body]
                return lambda outs: tuple(k(outs) for k in kids)
            if tag == "$dict" and type(body) is list and all(
                    type(i) is list and len(i) == 2 and type(i[0]) is str for i in body):
                kids = [(k, build(x, depth + 1)) for k, x in body]
                return lambda outs: {k: b(outs) for k, b in kids}
        raise SavedModelError(f"function outputs: not a result structure: {fmt._show(r)}")
    return build(rec)


# -- functions and objects ---------------------------------------------------------------------

class RestoredFunction:
    """The saved traces of one ag.function; a call dispatches among them."""

    def __init__(self, name, concretes):
        self.__name__ = name
        self.concrete_functions = concretes
        self._fast = {}      # fast_key(args) -> runner, for NumPy arrays passed as they are

    def __call__(self, *args, **kwargs):
        # the fast path (as ag.function's): NumPy arrays of dtypes and shapes seen before,
        # no keywords, no device scope, not inside a trace
        if not kwargs and FAST_PATH:
            try:
                runner = self._fast.get(fast_key(args))
            except TypeError:
                runner = None
            if runner is not None and not SCOPES.__dict__.get("stack") \
                    and not GRAPHS.__dict__.get("stack") and not _config._check_numerics:
                return runner(*args)
        reasons = []
        for c in self.concrete_functions:
            try:
                flat = c.bind(args, kwargs)
            except NoMatch as e:
                reasons.append(f"  {c.signature()}: {e}")
                continue
            if kwargs or get_default_graph() is not None or len(flat) != len(args) or \
                    any(a is not b for a, b in zip(flat, args)):
                return c.call_flat(flat)
            runner = c.runner(flat)
            if runner.__numpy_cpu__ and FAST_PATH and not SCOPES.__dict__.get("stack") \
                    and not _config._check_numerics:   # (a checked runner: never remembered)
                if len(self._fast) >= 256:
                    self._fast.clear()
                self._fast[fast_key(args)] = runner
            try:
                return runner(*flat)
            except Exception as exc:
                user_error(exc)
                raise
        given = ", ".join([tt.describe_value(a) for a in args] +
                          [f"{k}={tt.describe_value(v)}" for k, v in kwargs.items()])
        raise TypeError(
            f"loaded function {self.__name__!r} has no saved trace for this call ({given}). "
            "Saved signatures (and why each does not fit):\n" + "\n".join(reasons) +
            "\nA loaded model cannot trace again: call it with arrays of a saved dtype and "
            "shape (None dims match any size) and saved Python values, or save the model "
            "after tracing for these arguments.")

    def get_concrete_function(self, *args, **kwargs):
        for c in self.concrete_functions:
            try:
                c.bind(args, kwargs)
                return c
            except NoMatch:
                pass
        raise TypeError(f"no saved trace of {self.__name__!r} fits")

    def pretty_printed_concrete_signatures(self):
        return "\n".join(c.signature() for c in self.concrete_functions)

    def _saved_model_record(self, state, path):
        return {"kind": "function", "name": self.__name__,
                "concrete": [_resave(state, c) for c in self.concrete_functions]}

    def __repr__(self):
        return f"<RestoredFunction {self.__name__} ({len(self.concrete_functions)} traces)>"


def _resave(state, c):
    key = id(c)
    if key in state._memo:
        return state._memo[key]
    state._keep.append(c)
    rec = dict(c._record)
    rec["graph"] = state.writer.graph(c.graph)
    state.functions.append(rec)
    state._memo[key] = len(state.functions) - 1
    return state._memo[key]


class RestoredObject:
    """A loaded object: children as attributes; `variables`, `trainable_variables`,
    `regularization_losses`; callable when the saved object had an ag.function `__call__`."""

    def __init__(self, class_name, module_name=None):
        self.__dict__["_class_name"] = class_name
        self.__dict__["_module_name"] = module_name
        self.__dict__["_children"] = {}
        self.__dict__["_variables"] = None     # a Module's order, as saved

    def __call__(self, *args, **kwargs):
        fn = self._children.get("__call__")
        if fn is None:
            raise TypeError(f"the loaded {self._class_name} object was saved without an "
                            "ag.function __call__")
        return fn(*args, **kwargs)

    def __getattr__(self, name):
        if name == "variables":
            return _collect(self, lambda v: True)
        if name == "trainable_variables":
            return [v for v in _collect(self, lambda v: True) if v.trainable]
        if name == "non_trainable_variables":
            return [v for v in _collect(self, lambda v: True) if not v.trainable]
        if name == "regularization_losses":
            return []
        if name == "name" and self._module_name is not None:
            return self._module_name
        raise AttributeError(f"the loaded {self._class_name} object has no attribute {name!r}")

    def __dir__(self):
        return sorted(set(self._children) | {"variables", "trainable_variables",
                                             "regularization_losses"})

    def _saved_model_record(self, state, path):
        rec = {"kind": "object", "class": self._class_name,
               "children": {n: state.object(x, f"{path}.{n}")
                            for n, x in self._children.items()}}
        if self._module_name is not None:
            rec["module_name"] = self._module_name
        if self._variables is not None:
            rec["variables"] = [state.writer.variable(v) for v in self._variables]
        return rec

    def __repr__(self):
        return f"<loaded {self._class_name}: {', '.join(self._children) or 'no children'}>"


def _collect(root, keep):
    """The Variables of an object tree (children first found first) and of its functions'
    graphs, each once."""
    if root._variables is not None:
        return [v for v in root._variables if keep(v)]
    out, seen, stack, visited = [], set(), [root], set()
    from autograph.runtime.variables import Variable

    def add(v):
        if id(v) not in seen and keep(v):
            seen.add(id(v))
            out.append(v)
    while stack:
        x = stack.pop(0)
        if id(x) in visited:
            continue
        visited.add(id(x))
        if isinstance(x, Variable):
            add(x)
        elif isinstance(x, RestoredObject):
            stack.extend(x._children.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, RestoredFunction):
            for c in x.concrete_functions:
                for v in c.variables:
                    add(v)
    return out
