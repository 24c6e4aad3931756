"""What the loader proves about each node before it becomes part of a graph (issue 29).

The file says what every node's outputs are (dtype, shape, weak); the loader does not take
its word for it. An ordinary node's outputs are inferred again with its primitive's own
shape rule, from its inputs and attributes exactly as tracing inferred them; a node whose
rule refuses its inputs or attributes, or whose declared outputs differ from the inferred
ones, is refused at load. (A model whose file declares `float32 (7, 7)` and computes
`float64 (2, 2)` would otherwise load, and `saved-model show` would print the lie.)

`cond` and `while_loop` have no shape rule (tracing builds them from their branch and
body graphs); their structure is checked instead: the number and dtypes of the subgraphs'
inputs and outputs against the node's, a loop's test graph giving one boolean scalar, and
shapes that agree wherever both sides know them. A swapped loop body and test, a branch of
another arity, a node whose subgraph belongs to another node: refused here, at load, not
as a KeyError or IndexError at the first call.
"""

import numpy as np

from autograph.runtime.ir import primitives
from autograph.saved_model.format import SavedModelError


def outputs(op, inputs, attrs, specs, where):
    """Check declared output `specs` [(dtype, shape, weak)] of node `op` on Tensors
    `inputs` with resolved `attrs` (the subgraphs built)."""
    if op == "Placeholder":
        return
    if op == "cond":
        _cond(inputs, attrs, specs, where)
        return
    if op == "while_loop":
        _while(inputs, attrs, specs, where)
        return
    if op in _VARIABLE_OPS:
        _variable(op, inputs, attrs, where)
    prim = primitives.PRIMITIVES[op]
    try:
        inferred = prim.infer(*inputs, **attrs) if attrs else prim.infer(*inputs)
        inferred = [(np.dtype(d), None if s is None else tuple(s), bool(w))
                    for d, s, w in inferred]
    except (RecursionError, MemoryError):
        raise SavedModelError(f"{where}: its output specs cannot be inferred") from None
    except Exception as e:   # the op's own rule refuses these inputs or attributes
        raise SavedModelError(f"{where}: its inputs and attributes do not fit the op "
                              f"({type(e).__name__}: {_short(e)})") from None
    declared = [(d, s, bool(w)) for d, s, w in specs]
    if inferred != declared:
        raise SavedModelError(f"{where}: the file declares its outputs as "
                              f"{_describe(declared)}, but its inputs and attributes make "
                              f"{_describe(inferred)}")


def _cond(inputs, attrs, specs, where):
    if not inputs or inputs[0].dtype != np.bool_ or inputs[0].shape not in ((), None):
        raise SavedModelError(f"{where}: a cond's first input is its boolean predicate")
    for key in ("true_graph", "false_graph"):
        g = attrs[key]
        _same(g.inputs, inputs[1:], f"{where}.{key} inputs", "the node's captured inputs")
        _same(g.outputs, specs, f"{where}.{key} outputs", "the node's outputs")


def _while(inputs, attrs, specs, where):
    n = len(specs)
    cg, bg = attrs["cond_graph"], attrs["body_graph"]
    has_limit = attrs.get("maximum_iterations") == "input"
    carried = inputs[:len(inputs) - has_limit]
    if len(carried) < n:
        raise SavedModelError(f"{where}: {n} loop variables but {len(carried)} inputs")
    if has_limit and (inputs[-1].dtype.kind not in "iu" or inputs[-1].shape not in ((), None)):
        raise SavedModelError(f"{where}: its maximum_iterations input is not an integer scalar")
    _same(carried[:n], specs, f"{where} loop variables", "its outputs")
    for g, name in ((cg, "cond_graph"), (bg, "body_graph")):
        _same(g.inputs, carried, f"{where}.{name} inputs", "the node's inputs")
    if len(cg.outputs) != 1 or cg.outputs[0].dtype != np.bool_ or \
            cg.outputs[0].shape not in ((), None):
        raise SavedModelError(f"{where}.cond_graph: a loop's test graph gives one boolean "
                              "scalar (body and test swapped?)")
    _same(bg.outputs, specs, f"{where}.body_graph outputs", "the loop variables")


_VARIABLE_OPS = ("read_variable", "assign_variable", "update_variable")


def _variable(op, inputs, attrs, where):
    """A node that reads or writes a Variable must fit the Variable the file gives it: its
    kernels store what they are given (a value of another shape or dtype would become
    the Variable's, silently)."""
    var = attrs["variable"]()
    dtype, shape = var.dtype, tuple(var.shape)
    if op == "read_variable":
        if attrs["dtype"] != dtype or attrs["shape"] != shape:
            raise SavedModelError(f"{where}: it reads a Variable of {dtype.name}{list(shape)} "
                                  f"as {attrs['dtype']}{attrs['shape']}")
        return
    value = inputs[0] if inputs else None
    if value is None:
        raise SavedModelError(f"{where}: it takes the value to store")
    if op == "update_variable" and attrs["dtype"] != dtype:
        raise SavedModelError(f"{where}: it stores {attrs['dtype']} in a Variable of {dtype}")
    if op == "assign_variable" and value.dtype != dtype:
        raise SavedModelError(f"{where}: it stores {value.dtype} in a Variable of {dtype}")
    if value.shape is None:
        raise SavedModelError(f"{where}: the value it stores has no known rank")
    if op == "assign_variable":
        fits = len(value.shape) == len(shape) and all(
            d is None or d == e for d, e in zip(value.shape, shape))
    else:                 # a delta broadcasts against the Variable's value
        fits = len(value.shape) <= len(shape) and all(
            d is None or d in (1, e) for d, e in zip(value.shape[::-1], shape[::-1]))
    if not fits:
        raise SavedModelError(f"{where}: a value of shape {list(value.shape)} does not fit "
                              f"the Variable's shape {list(shape)}")


def _spec(t):
    return (t.dtype, t.shape) if hasattr(t, "dtype") else (np.dtype(t[0]), t[1])


def _same(a, b, where, what):
    """Tensors/specs `a` and `b`: as many, the same dtypes, shapes that agree where both
    know a dimension (a join of branches or a relaxed loop variable knows fewer)."""
    if len(a) != len(b):
        raise SavedModelError(f"{where}: {len(a)} of them for {len(b)} of {what}")
    for i, (x, y) in enumerate(zip(a, b)):
        (dx, sx), (dy, sy) = _spec(x), _spec(y)
        if dx != dy:
            raise SavedModelError(f"{where}: number {i} is {dx}, {what} have {dy}")
        if sx is None or sy is None:
            continue
        if len(sx) != len(sy) or any(p is not None and q is not None and p != q
                                     for p, q in zip(sx, sy)):
            raise SavedModelError(f"{where}: number {i} has shape {list(sx)}, {what} "
                                  f"have {list(sy)}")


def _describe(specs):
    return ", ".join(f"{d.name}{'' if s is None else list(s)}" for d, s, _ in specs) or "none"


def _short(e, n=200):
    text = str(e)
    return text if len(text) <= n else text[:n] + "..."
