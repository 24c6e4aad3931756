"""Running a `map` function once per batch instead of once per element, when that is sound.

`ds.map(fn).batch(n)` in a traced loop would call `fn` on each of a batch's rows (an inner
loop per batch). When `fn` maps rows independently, `fn(stack(rows)) == stack(fn(row) for
row in rows)` and one call per batch does the same work in NumPy's vector loops. This
module decides that *by proof*, never by running and comparing:

1. `fn` is traced twice in throwaway graphs: on placeholders of the element spec (graph E)
   and of the batched spec, each shape with a leading None axis (graph B).
2. The two graphs must be the same program: the same nodes in the same order, wired the
   same way, with equal attributes and bitwise-equal constants. Python logic that looks at
   shapes or ranks (`x.ndim`, `len(x)`, `x.shape[0]`), random draws at trace time and
   anything else that makes the two traces differ fails here.
3. Every value that depends on the element is *batched*: in B it has E's shape with a new
   leading None axis. Every node reading a batched value must map rows independently
   (the table `ROWWISE` below): an elementwise ufunc whose batched operands have the
   result's full rank (unbatched constants broadcast on the trailing axes only); a
   reduction over the element's axes (B's axes are E's shifted by one; over all axes is
   refused); `x @ W` with a batched left operand and an unbatched right one. Any other
   primitive (control flow, random numbers, shape queries, variables, sorts along axis 0,
   `np.mean(x)` over everything, ...) keeps the per-element path.
4. Every output is batched (a constant result per element cannot be one per batch).

The batched call then copies B's nodes into the loop's graph on the gathered batch
(`Plan.apply`), so the code that runs is exactly the verified graph, whatever the batch's
static shape. Elementwise float ops give bitwise the per-element results; a matmul or a
reduction over a non-last axis may round differently (BLAS gemm against gemv).
Eager iteration keeps calling `fn` per element (it runs the user's Python as written).
"""

import contextlib
import io

import numpy as np

from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.tensor import Tensor

# primitive name -> how it treats rows: "elementwise", "reduce" (an `axis` attribute), "matmul"
ROWWISE = {"astype": "elementwise", "where": "elementwise", "clip": "elementwise",
           "positive_bool": "elementwise", "matmul": "matmul"}
for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "argmax", "argmin"):
    ROWWISE[_name] = "reduce"


def register_rowwise(name, kind="elementwise"):
    """Declare primitive `name` row-independent (`kind` as in ROWWISE): a primitive family
    outside this table (or a test's counting primitive) opts in here."""
    if kind not in ("elementwise", "reduce", "matmul"):
        raise ValueError(f"unknown row-wise kind {kind!r}")
    ROWWISE[name] = kind


# Off: every map runs per element (tests and benchmarks compare the two paths with it).
enabled = True


def _kind(op):
    kind = ROWWISE.get(op)
    if kind is None:
        from autograph.runtime.numpy import elementwise
        # every ufunc's primitive (a composed ufunc has none: it stages such primitives)
        if op in {getattr(e, "prim", None) for e in elementwise.UFUNCS.values()}:
            ROWWISE[op] = kind = "elementwise"
    return kind


class Plan:
    """A proven batched form of a map function: B's nodes, inputs and outputs."""

    def __init__(self, graph, inputs, outputs):
        self.graph, self.inputs, self.outputs = graph, inputs, outputs

    def apply(self, batch):
        """The function's outputs for a batch (a nest like the element), staged in the
        graph being built by copying B's nodes onto the batch's tensors."""
        env = {id(ph): primitives.convert(x)
               for ph, x in zip(self.inputs, nest.flatten(batch))}
        for outer, inner in self.graph.captures.values():   # bind captures them again
            env[id(inner)] = outer
        for node in self.graph.nodes:
            if node.op == "Placeholder":
                continue
            new = primitives.bind(node.op, [env[id(t)] for t in node.inputs], node.attrs,
                                  node_name=node.name)
            for old, t in zip(node.outputs, new.outputs):
                env[id(old)] = t
        return nest.pack_sequence_as(self.outputs,
                                     [env[id(t)] for t in nest.flatten(self.outputs)])


def plan(fn, spec):
    """A Plan when `fn` (called with stages.call's rule) is provably row-independent on
    elements of `spec`, else None."""
    specs = nest.flatten(spec)
    if not enabled or not specs or any(s.shape is None for s in specs):
        return None
    try:
        e = _trace(fn, spec, batched=False)
        b = _trace(fn, spec, batched=True)
    except Exception:   # noqa: BLE001 (a function that fails on a batch stays per element)
        return None
    if not _same_program(e, b):
        return None
    return Plan(b[0], b[1], b[2])


def _trace(fn, spec, batched):
    from autograph import api
    from autograph.data.stages import call
    from autograph.runtime.ir.graph import Graph
    # a child of the graph being built, so the function may read that graph's tensors (an
    # argument of the enclosing ag.function): they become captures, unbatched inputs
    from autograph.runtime.ir.graph import get_default_graph
    g = Graph("map_batched" if batched else "map_element", parent=get_default_graph())
    with g.as_default(), contextlib.redirect_stdout(io.StringIO()):
        def ph(s):
            shape = ((None,) if batched else ()) + tuple(s.shape)
            return g.placeholder("x", np.dtype(s.dtype), shape)
        elem = nest.map_structure(ph, spec)
        out = call(lambda *args: api.converted_call(fn, *args), elem)
    return g, nest.flatten(elem), out


def _same_program(e, b):
    (ge, ins_e, out_e), (gb, ins_b, out_b) = e, b
    if len(ge.nodes) != len(gb.nodes):
        return False
    try:
        nest.assert_same_structure(out_e, out_b)
    except (TypeError, ValueError):
        return False
    pair = {}       # id(E tensor) -> B tensor
    batched = set(id(t) for t in ins_b)
    for te, tb in zip(ins_e, ins_b):
        pair[id(te)] = tb
    if ge.captures.keys() != gb.captures.keys():
        return False
    for key, (_, te) in ge.captures.items():   # the same outer tensor: unbatched in both
        tb = gb.captures[key][1]
        if te.shape != tb.shape or te.dtype != tb.dtype:
            return False
        pair[id(te)] = tb
    for ne, nb in zip(ge.nodes, gb.nodes):
        if ne.op != nb.op or len(ne.inputs) != len(nb.inputs) or \
                len(ne.outputs) != len(nb.outputs) or ne.graph is not ge or nb.graph is not gb:
            return False
        if ne.op == "Placeholder":
            continue
        if any(pair.get(id(te)) is not tb for te, tb in zip(ne.inputs, nb.inputs)):
            return False
        reads = [id(t) in batched for t in nb.inputs]
        if any(reads):
            if not _rowwise(ne, nb, reads):
                return False
        elif ne.op != "Const" and (not ne.inputs or primitives.lookup(ne.op).effectful):
            return False   # a source of values (random, variables, data): not a constant
        elif not _equal_attrs(ne.attrs, nb.attrs):
            return False
        for te, tb in zip(ne.outputs, nb.outputs):
            lead = (None,) if any(reads) else ()
            if te.shape is None or tb.shape != lead + tuple(te.shape) or \
                    te.dtype != tb.dtype or te.weak != tb.weak:
                return False
            pair[id(te)] = tb
            if any(reads):
                batched.add(id(tb))
    outs_e, outs_b = nest.flatten(out_e), nest.flatten(out_b)
    return all(isinstance(te, Tensor) and isinstance(tb, Tensor) and pair.get(id(te)) is tb
               and id(tb) in batched for te, tb in zip(outs_e, outs_b))


def _rowwise(ne, nb, reads):
    kind = _kind(ne.op)
    if kind is None or primitives.lookup(ne.op).effectful:
        return False
    rank = len(ne.outputs[0].shape) if ne.outputs[0].shape is not None else None
    if kind == "elementwise":
        if len(ne.outputs) != 1 or rank is None:
            return False
        for te, r in zip(ne.inputs, reads):
            if te.shape is None or (r and len(te.shape) != rank):
                return False
        return _equal_attrs(ne.attrs, nb.attrs)
    if kind == "reduce":
        ax_e, ax_b = ne.attrs.get("axis"), nb.attrs.get("axis")
        if ax_e is None or ax_b is None:
            return False
        ax_e = (ax_e,) if isinstance(ax_e, int) else tuple(ax_e)
        ax_b = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
        if any(a < 0 for a in ax_e) or ax_b != tuple(a + 1 for a in ax_e):
            return False
        rest = lambda attrs: {k: v for k, v in attrs.items() if k != "axis"}  # noqa: E731
        return _equal_attrs(rest(ne.attrs), rest(nb.attrs))
    if kind == "matmul":   # rows @ W: W a vector or a matrix (a stack of them would pair
        x, w = ne.inputs   # its leading axis with the batch's)
        return reads == [True, False] and x.shape is not None and len(x.shape) >= 1 and \
            w.shape is not None and len(w.shape) <= 2 and _equal_attrs(ne.attrs, nb.attrs)
    return False


def _equal_attrs(a, b):
    if a.keys() != b.keys():
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray) or \
                isinstance(x, np.generic) or isinstance(y, np.generic):
            x, y = np.asarray(x), np.asarray(y)
            if x.dtype != y.dtype or x.shape != y.shape or \
                    x.tobytes() != y.tobytes():
                return False
        elif type(x) is not type(y):
            return False
        elif callable(x) or hasattr(x, "nodes"):   # functions, subgraphs: never equal
            return False
        else:
            try:
                if x != y:
                    return False
            except Exception:   # noqa: BLE001
                return False
    return True
