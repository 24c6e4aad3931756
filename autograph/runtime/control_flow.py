"""`cond` and `while_loop`: data-dependent control flow as single graph nodes.

Both run plain Python when the condition is a Python value, so converted code behaves
exactly like the original on NumPy inputs. When the condition is a symbolic Tensor they
trace their functions into subgraphs (a Graph whose parent is the current graph) and add
ONE node whose attrs hold those subgraphs:

- `cond` node: inputs `[pred] + captures`; attrs `true_graph`, `false_graph`. Both branch
  graphs take a placeholder for every capture, in the node's input order.
- `while_loop` node: inputs `loop_vars + captures` (+ the maximum iteration count when it
  is a tensor); attrs `cond_graph`, `body_graph`, `maximum_iterations` (None, an int, or
  "input" for a tensor passed as the last input). Both graphs take placeholders for the
  loop variables then for every capture; `cond_graph` returns one value, `body_graph` the
  next loop variables.

A loop is one node however many times it runs, so graphs never grow with trip counts.
Outputs of the two branches (or a loop variable before and after the body) must agree in
structure and dtype. A weak value (made from a Python scalar) adopts the other side's
dtype; a real disagreement is a StagingError naming the variable and both types. Shapes
that disagree are joined: differing dimensions become None (for loops, the body is traced
again with the relaxed shape), so no "shape invariant" is ever needed.
"""

import numbers

import numpy as np

from autograph.errors import StagingError
from autograph.runtime.ir import dtypes, nest, primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.ir.tensor import Tensor


# -- the primitives -------------------------------------------------------------------------

def _no_kernel_infer(*_, **__):
    raise TypeError("control-flow nodes are made by control_flow.cond / while_loop")


# Executors handle these two themselves (they recurse into the subgraphs).
primitives.register("cond", _no_kernel_infer, kernel=None,
                    doc="if/else: runs true_graph or false_graph on the captured inputs")
primitives.register("while_loop", _no_kernel_infer, kernel=None,
                    doc="runs body_graph while cond_graph is true")


def _cast_infer(x, *, dtype, weak=False):
    return [(np.dtype(dtype), x.shape, weak)]


def _cast_kernel(xp, x, *, dtype, weak=False):
    return xp.astype(x, dtype)


def _cast_vjp(cts, node):
    src = node.node.inputs[0].dtype
    if cts[0] is None or src.kind not in "fc":
        return [None]
    ct = cts[0]
    if src.kind == "f" and ct.dtype.kind == "c":
        ct = np.real(ct)
    return [ct.astype(src) if ct.dtype != src else ct]


primitives.register("Cast", _cast_infer, kernel=_cast_kernel,
                    doc="x converted to dtype (a weak value adopting its partner's dtype)",
                    vjp=_cast_vjp)


CONTROL_FLOW_OPS = ("cond", "while_loop")


def is_effectful(node):
    """True when running `node` has side effects (print, assign, TensorArray write), also
    through the subgraphs of a cond/while_loop node. Such nodes are never dropped, merged or
    reordered."""
    op = node.op
    if (primitives.PRIMITIVES.get(op) or primitives.lookup(op)).effectful:
        return True
    if op == "Const" or (op not in CONTROL_FLOW_OPS and not node.attrs):
        return False   # (a Const's attrs are its value and weakness, never a graph)
    for value in node.attrs.values():
        if isinstance(value, Graph) and graph_is_effectful(value):
            return True
    return False


def graph_is_effectful(graph):
    cached = getattr(graph, "_ag_effectful", None)
    if cached is None or cached[0] != len(graph.nodes):
        cached = (len(graph.nodes), any(is_effectful(n) for n in graph.nodes))
        graph._ag_effectful = cached
    return cached[1]


# -- helpers ---------------------------------------------------------------------------------

def _convertible(x):
    """Can `x` (not a tensor) become a Const: a Python number or a numeric NumPy value."""
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind in "biufc"
    return isinstance(x, numbers.Number)


def _read_if_variable(x):
    # a Variable (duck-typed: variables.py imports this module) stands for its value
    if type(x) is Tensor:
        return x
    return x.read_value() if hasattr(x, "read_value") and hasattr(x, "assign") else x


def join_shapes(a, b):
    """The most specific shape both `a` and `b` fit: dims that differ become None."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _dtype_str(t):
    return f"{t.dtype.name}{' (from a Python scalar)' if t.weak else ''}"


def _cast(t, dtype, graph, weak=False):
    """`t` (a tensor of `graph`) as `dtype` (staying weak if `weak`): a weak Const is
    simply re-made."""
    if t.dtype == dtype:
        return t
    with graph.as_default():
        if t.node.op == "Const" and t.weak:
            value = np.asarray(t.node.attrs["value"]).astype(dtype)
            return primitives.bind1("Const", (), {"value": value, "weak": weak},
                                    node_name=t.node.name)
        attrs = {"dtype": np.dtype(dtype), "weak": True} if weak else {"dtype": np.dtype(dtype)}
        return primitives.bind1("Cast", [t], attrs)


def _unify_dtypes(a, b, ga, gb, what):
    """Make tensors `a` (of graph ga) and `b` (of gb) agree on a dtype; returns new a, b."""
    if a.dtype == b.dtype:
        return a, b
    if a.weak and b.weak:
        dtype = np.result_type(a.dtype, b.dtype)
        return _cast(a, dtype, ga, weak=True), _cast(b, dtype, gb, weak=True)
    if a.weak or b.weak:
        # NEP 50: a Python scalar adopts the array's dtype within its kind (an int meeting
        # int32 stays int32), and promotes it across kinds (a float meeting int64 gives
        # float64, as `x + 1.5` does in NumPy), so nothing is truncated
        dtype = dtypes.result_type((dtypes.key_of(a.dtype, a.weak), dtypes.key_of(b.dtype, b.weak)))
        return _cast(a, dtype, ga), _cast(b, dtype, gb)
    raise StagingError(what(a, b))


def _name_of(names, i, default):
    if names is not None and i < len(names) and names[i] is not None:
        return repr(names[i])
    return default


def _align_captures(graphs, outer):
    """Give every graph a placeholder for every outer tensor any of them captured, and put
    those placeholders after `graph.inputs[:n_args]` in one shared order. Returns the
    outer tensors (the node's capture inputs) in that order."""
    union = {}
    for g in graphs:
        for outer_t, _ in g.captures.values():
            union.setdefault(id(outer_t), outer_t)
    for g in graphs:
        have = {id(o): inner for o, inner in g.captures.values()}
        n_args = len(g.inputs) - len(g.captures)
        args = g.inputs[:n_args]
        for key, outer_t in union.items():
            if key not in have:
                have[key] = g.capture(outer_t)
        g.inputs = args + [have[key] for key in union]
    return list(union.values())


def _current_graph(tensors):
    graph = get_default_graph()
    if graph is None:
        return primitives.current_graph(tensors)
    return graph


# -- cond ------------------------------------------------------------------------------------

def cond(pred, true_fn, false_fn, names=None):
    """`true_fn()` if `pred` else `false_fn()`.

    A Python/NumPy `pred` just calls one function. A symbolic `pred` traces both into branch
    graphs and returns the outputs of one `cond` node, in the branches' structure. `names`
    (optional) name the flat outputs in error messages (the user's variable names)."""
    pred = _read_if_variable(pred)
    if not isinstance(pred, Tensor):
        return true_fn() if pred else false_fn()

    outer = _current_graph([pred])
    pred = outer.capture(pred)
    if pred.shape is not None and len(pred.shape) > 0 and \
            not all(d == 1 for d in pred.shape):
        raise StagingError(
            f"The condition of an if/cond must be a single value, but {pred!r} has shape "
            f"{pred.shape}. Reduce it first, e.g. with np.all(...) or np.any(...).")

    tg = Graph(outer.unique_name("cond_true"), parent=outer)
    fg = Graph(outer.unique_name("cond_false"), parent=outer)
    with tg.as_default():
        t_out = true_fn()
    with fg.as_default():
        f_out = false_fn()

    if nest.structure_of(t_out) != nest.structure_of(f_out):
        label, t_part, f_part = _first_difference(t_out, f_out, names)
        raise StagingError(
            f"The two branches of an if/cond must produce the same structure for {label}, "
            f"but the true branch gives {nest.describe(t_part)} and the false branch gives "
            f"{nest.describe(f_part)}. Make both branches set the same variables to values of "
            "the same kind.")

    t_flat, f_flat = nest.flatten(t_out), nest.flatten(f_out)
    out_flat, t_tensors, f_tensors, slots = [], [], [], []
    for i, (a, b) in enumerate(zip(t_flat, f_flat)):
        label = _name_of(names, i, f"output {i}")
        if not isinstance(a, Tensor) and not isinstance(b, Tensor) and _same_python(a, b):
            out_flat.append(a)          # the same Python value either way: no tensor needed
            continue
        if type(a) is not Tensor:   # (a Variable is read in its branch's graph)
            with tg.as_default():
                a = _read_if_variable(a)
        if type(b) is not Tensor:
            with fg.as_default():
                b = _read_if_variable(b)
        a = _branch_tensor(a, tg, label, "true", b)
        b = _branch_tensor(b, fg, label, "false", a)
        a, b = _unify_dtypes(a, b, tg, fg, lambda a, b: (
            f"The if/cond branches disagree on the dtype of {label}: the true branch makes it "
            f"{_dtype_str(a)} and the false branch {_dtype_str(b)}. Convert one of them, "
            f"e.g. with .astype(np.{a.dtype.name}), so both branches agree."))
        slots.append(len(out_flat))
        out_flat.append(None)
        t_tensors.append(a)
        f_tensors.append(b)

    t_tensors = tg.set_outputs(t_tensors, identity=False)
    f_tensors = fg.set_outputs(f_tensors, identity=False)
    captured = _align_captures([tg, fg], outer)
    specs = [(a.dtype, join_shapes(a.shape, b.shape), a.weak and b.weak)
             for a, b in zip(t_tensors, f_tensors)]
    node = outer.add_node("cond", [pred] + captured,
                          {"true_graph": tg, "false_graph": fg}, specs)
    for slot, t in zip(slots, node.outputs):
        out_flat[slot] = t
    return nest.pack_sequence_as(t_out, out_flat)


def _first_difference(t_out, f_out, names):
    """(label, true part, false part) of the first top-level element whose structure differs
    between the branches (the user's name when `names`, one per flat leaf, gives it)."""
    if isinstance(t_out, (list, tuple)) and isinstance(f_out, (list, tuple)) and \
            len(t_out) == len(f_out) and type(t_out) is type(f_out):
        offset = 0
        for a, b in zip(t_out, f_out):
            if nest.structure_of(a) != nest.structure_of(b):
                return _name_of(names, offset, "a result"), a, b
            offset += len(nest.flatten(a))
    label = _name_of(names, 0, "the result") if names and len(names) == 1 else "the results"
    return label, t_out, f_out


def _same_python(a, b):
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return False
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _branch_tensor(x, graph, label, branch, other):
    """Branch output `x` as a tensor of the branch graph."""
    if isinstance(x, Tensor):
        return graph.capture(x)
    if x is None or not _convertible(x):
        other_kind = "a tensor" if isinstance(other, Tensor) else repr(other)
        raise StagingError(
            f"{label} is {x!r} in the {branch} branch of an if/cond but {other_kind} in the "
            "other branch. A variable set in a data-dependent branch must be a number or an "
            "array in both branches: give it a value (of the same dtype) in both.")
    with graph.as_default():
        return primitives.constant(x)


# -- while_loop ------------------------------------------------------------------------------

def while_loop(cond_fn, body_fn, loop_vars, shape_invariants=None, maximum_iterations=None,
               names=None):
    """Run `loop_vars = body_fn(*loop_vars)` while `cond_fn(*loop_vars)`; return loop_vars.

    `loop_vars` is a tuple or list (of values or nested structures); `cond_fn` and `body_fn`
    take them as positional arguments, and `body_fn` returns the same structure (a single
    value is accepted for a single loop variable). The result has the structure of
    `loop_vars`.

    While no loop variable is a tensor and the condition is a Python value, this is a plain
    Python loop. As soon as either becomes a tensor (at the start or part-way: a condition
    that starts as a Python bool and later becomes a tensor), the remaining iterations are
    staged as one `while_loop` node. Shapes that change across iterations are relaxed
    automatically; `shape_invariants` (optional, TensorFlow's: one shape or None per loop
    variable that is a single tensor) gives the relaxed shapes up front. `maximum_iterations` (an
    int or a tensor) stops the loop after that many iterations. `names` name the flat loop
    variables in error messages.

    The body is traced again when a trace shows a loop variable's dtype (a Python scalar
    adopting the body's dtype) or shape (a dimension that changes) must be relaxed, so Python
    side effects in `cond_fn`/`body_fn` may happen more than once while tracing."""
    single = not isinstance(loop_vars, (list, tuple))
    loop_vars = [loop_vars] if single else loop_vars
    kind = type(loop_vars)
    done = 0
    while True:
        if any(isinstance(v, Tensor) for v in nest.flatten(loop_vars)) or \
                isinstance(maximum_iterations, Tensor):
            break
        if maximum_iterations is not None and done >= maximum_iterations:
            return _as_kind(loop_vars, kind, single)
        c = _read_if_variable(cond_fn(*loop_vars))
        if isinstance(c, Tensor):
            break
        if not c:
            return _as_kind(loop_vars, kind, single)
        loop_vars = _normalize_body_output(body_fn(*loop_vars), loop_vars, kind, names)
        done += 1

    if maximum_iterations is not None and done:
        maximum_iterations = maximum_iterations - done
    out = _staged_while(cond_fn, body_fn, list(loop_vars), maximum_iterations, names,
                        shape_invariants)
    return _as_kind(out, kind, single)


def _as_kind(values, kind, single):
    """Loop variables back in the container the caller gave (list, tuple, namedtuple)."""
    if single:
        return values[0]
    if type(values) is kind:
        return values
    return kind(values) if kind in (list, tuple) else kind(*values)


def _normalize_body_output(out, loop_vars, kind, names):
    if len(loop_vars) == 1 and (not isinstance(out, (list, tuple)) or
                                nest.structure_of(list(out)) != nest.structure_of(list(loop_vars))):
        out = [out]
    if not isinstance(out, (list, tuple)) or len(out) != len(loop_vars):
        raise StagingError(
            f"The loop body must return the {len(loop_vars)} loop variables "
            f"({', '.join(map(str, names)) if names else 'as a tuple'}), but it returned "
            f"{nest.describe(out) if nest.is_nested(out) else repr(out)}.")
    return list(out)


class _Spec:
    """What a loop variable is known to be: dtype, shape, weak; `widened` once a Python
    scalar's dtype was promoted to hold what the body makes (0.5 meeting int64: float64)."""
    __slots__ = ("dtype", "shape", "weak", "widened")

    def __init__(self, dtype, shape, weak):
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.shape, self.weak = shape, weak
        self.widened = False

    def key(self):
        return (self.dtype, self.shape, self.weak)


def _staged_while(cond_fn, body_fn, loop_vars, maximum_iterations, names, invariants=None):
    # a Variable entering the loop is read there (as TensorFlow does): the loop carries its
    # value, which the body may rebind to a tensor (`h = w`, then `h = np.tanh(h @ x)`)
    flat = [_read_if_variable(v) for v in nest.flatten(loop_vars)]
    outer = _current_graph([v for v in flat if isinstance(v, Tensor)])
    labels = [_name_of(names, i, f"loop variable {i}") for i in range(len(flat))]
    # which leaves are tensors (or become ones); the others must stay the same Python value
    tensor_slots = [i for i, v in enumerate(flat) if isinstance(v, Tensor) or _convertible(v)]
    with outer.as_default():
        inits = [primitives.convert(flat[i]) for i in tensor_slots]
    specs = [_Spec(t.dtype, t.shape, t.weak) for t in inits]
    for i, shape in _invariant_shapes(loop_vars, invariants).items():
        if i in tensor_slots:
            spec = specs[tensor_slots.index(i)]
            if spec.shape is None:      # nothing known to relax
                continue
            if join_shapes(spec.shape, shape) != shape:
                raise StagingError(
                    f"The shape invariant {shape} given for {labels[i]} does not fit its "
                    f"shape {spec.shape} when the loop starts. Use None for the dimensions "
                    "that change, or leave shape_invariants out: shapes are relaxed "
                    "automatically.")
            spec.shape = shape

    max_input = None
    if isinstance(maximum_iterations, Tensor):
        max_input = outer.capture(maximum_iterations)
        max_attr = "input"
    else:
        max_attr = None if maximum_iterations is None else int(maximum_iterations)

    budget = 3 + 3 * sum(1 + len(s.shape or ()) for s in specs)
    for _ in range(budget):
        cg, bg, body_out, outs = _trace_loop(cond_fn, body_fn, loop_vars, flat, tensor_slots,
                                             specs, outer, labels, names)
        changed = False
        for k, (spec, t) in enumerate(zip(specs, outs)):
            label = labels[tensor_slots[k]]
            if t.dtype != spec.dtype:
                if spec.weak:
                    # NEP 50, as for cond: a Python scalar adopts the body's dtype within its
                    # kind and promotes across kinds, so `s = 0.5` never becomes int64
                    dtype = (np.result_type(spec.dtype, t.dtype) if t.weak else
                             dtypes.result_type((t.dtype, dtypes.key_of(spec.dtype, True))))
                    spec.widened = spec.widened or dtype != t.dtype
                    if (dtype, t.weak) != (spec.dtype, spec.weak):
                        spec.dtype, spec.weak, changed = dtype, t.weak, True
                        continue
                elif spec.widened and np.can_cast(t.dtype, spec.dtype, "safe"):
                    pass   # the body's value is cast to the widened dtype below
                elif not t.weak:
                    raise StagingError(
                        f"{label} changes dtype inside the loop: it enters the loop as "
                        f"{spec.dtype.name} but the loop body makes it {_dtype_str(t)}. A "
                        "loop variable must keep its dtype: convert it before the loop (e.g. "
                        f"with .astype(np.{t.dtype.name})) or inside the body.")
            shape = join_shapes(spec.shape, t.shape)
            if shape != spec.shape:
                spec.shape, changed = shape, True
            if spec.weak and not t.weak:
                spec.weak, changed = False, True
        if not changed:
            break
    else:  # pragma: no cover - the relaxations above are finite
        raise StagingError("the loop variables' types did not settle while tracing the loop")

    # the body's outputs are cast to the loop's dtypes (a weak result adopting them)
    with bg.as_default():
        outs = [_cast(t, s.dtype, bg, s.weak) for t, s in zip(outs, specs)]
    bg.set_outputs(outs, identity=False)
    inits = [_cast(t, s.dtype, outer, s.weak) for t, s in zip(inits, specs)]
    captured = _align_captures([cg, bg], outer)
    inputs = inits + captured + ([max_input] if max_input is not None else [])
    node = outer.add_node("while_loop", inputs,
                          {"cond_graph": cg, "body_graph": bg, "maximum_iterations": max_attr},
                          [s.key() for s in specs])
    out_flat = list(nest.flatten(body_out))
    for k, t in zip(tensor_slots, node.outputs):
        out_flat[k] = t
    return list(nest.pack_sequence_as(list(body_out), out_flat))


def _invariant_shapes(loop_vars, invariants):
    """{flat leaf index: shape} from TensorFlow-style shape_invariants (a shape, a TensorSpec
    or None per top-level loop variable; only variables that are one tensor count)."""
    if invariants is None:
        return {}
    found, offset = {}, 0
    for var, inv in zip(loop_vars, invariants):
        leaves = len(nest.flatten(var))
        if inv is not None and leaves == 1 and not nest.is_nested(var):
            shape = getattr(inv, "shape", inv)
            found[offset] = None if shape is None else tuple(
                None if d is None else int(d) for d in shape)
        offset += leaves
    return found


def _trace_loop(cond_fn, body_fn, loop_vars, flat, tensor_slots, specs, outer, labels, names):
    """Trace cond and body once with loop variables of the given specs."""
    def enter(graph):
        leaves = list(flat)
        for k, (i, s) in enumerate(zip(tensor_slots, specs)):
            base = names[i] if names and i < len(names) and names[i] else f"loop_var_{k}"
            leaves[i] = graph.placeholder(str(base), s.dtype, s.shape, s.weak)
        return nest.pack_sequence_as(list(loop_vars), leaves)

    cg = Graph(outer.unique_name("while_cond"), parent=outer)
    with cg.as_default():
        c = _read_if_variable(cond_fn(*enter(cg)))
        if not isinstance(c, Tensor):
            c = primitives.constant(bool(c))
        c = cg.capture(c)
        if c.shape is not None and len(c.shape) > 0 and not all(d == 1 for d in c.shape):
            raise StagingError(
                f"A loop condition must be a single value, but it is {c!r}. Reduce it first, "
                "e.g. with np.all(...) or np.any(...).")
    cg.set_outputs([c], identity=False)

    bg = Graph(outer.unique_name("while_body"), parent=outer)
    with bg.as_default():
        body_out = _normalize_body_output(body_fn(*enter(bg)), loop_vars, list, names)
        if nest.structure_of(body_out) != nest.structure_of(list(loop_vars)):
            raise StagingError(
                "The loop body must return its variables in the structure they entered the "
                f"loop with: {nest.describe(list(loop_vars))}, but it returned "
                f"{nest.describe(body_out)}.")
        out_flat = nest.flatten(body_out)
        tensor_set = set(tensor_slots)
        outs = []
        for i, (before, after) in enumerate(zip(flat, out_flat)):
            if i in tensor_set:
                after = _read_if_variable(after)
                if isinstance(after, Tensor):
                    outs.append(bg.capture(after))
                elif _convertible(after):
                    outs.append(primitives.constant(after))
                else:
                    raise StagingError(
                        f"{labels[i]} is a tensor when the loop starts but the loop body sets "
                        f"it to {after!r}. Keep it a number or an array in every iteration.")
            elif isinstance(after, Tensor) or not _same_python(before, after):
                raise StagingError(
                    f"{labels[i]} is {before!r} when the loop starts but the loop body changes "
                    f"it to {after!r}. A loop over tensors can only carry numbers, arrays and "
                    "tensors from one iteration to the next: give it a numeric initial value.")
    return cg, bg, body_out, outs
