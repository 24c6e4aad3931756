"""vmap's graph -> graph transform: a per-element graph becomes a batched one.

`batch_graph(graph, args, batched, frame)` walks `graph` (traced for ONE element) in
order, and for each node stages, into the graph being built, nodes that compute the node's
value for every lane of the batch at once. A value is *batched* (a tensor whose axis 0 is the
lane) or *unbatched* (the same for every lane: a Variable read, a constant, an argument with
`in_axes=None`, anything computed only from those). A node whose inputs are all unbatched is
copied as it is; otherwise its primitive's batching rule runs (`RULES`, filled by the family
files of this package, registered by primitive name as the VJP rules are):

    rule(frame, node, args, batched) -> [(tensor, is_batched)], one per output of `node`

`args` are the node's inputs as tensors of the graph being built (batched ones with the lane
on axis 0), `batched` one bool per input, `frame.size` the number of lanes (a Python int when
known while tracing, else an int64 scalar tensor: inside a compacted loop the active lanes
change every iteration). A rule stages primitives with NumPy calls on Tensors, so the result
is an ordinary graph: optimised, compiled, differentiated and saved like any.

`REFUSED` names the primitives that cannot be batched, each with the reason; staging one
with a batched input is a `BatchingError` naming the user's line (an audit test holds every
primitive to a rule or a reason).
"""

import numpy as np

from autograph import errors
from autograph.runtime.control_flow import is_effectful
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import get_default_graph, staged_for
from autograph.runtime.ir.tensor import Tensor

HANDLE = np.dtype(object)
RULES = {}
REFUSED = {}
FAMILIES = []    # (predicate(prim), rule): a family found by its shape rule (the ufuncs)
# copied as they are when no input is batched, but always through their rule: their
# subgraphs are re-traced into the graph being built
ALWAYS_RULE = {"cond", "while_loop"}


class BatchingError(ValueError):
    """A program that vmap cannot batch (a refused primitive fed a batched value, a batched
    output with out_axes=None, batch sizes that disagree, ...)."""


def defbatch(names, rule):
    """Register `rule` as the batching rule of each primitive in `names` (a name or names)."""
    for name in (names,) if isinstance(names, str) else names:
        RULES[name] = rule
    return rule


def deffamily(predicate, rule):
    """Register `rule` for every primitive `predicate(prim)` holds for."""
    FAMILIES.append((predicate, rule))


def rule_for(name):
    """The batching rule of primitive `name`, or None (refused, or without one)."""
    rule = RULES.get(name)
    if rule is None and name not in REFUSED:
        prim = primitives.lookup(name)
        for predicate, family_rule in FAMILIES:
            if predicate(prim):
                return family_rule
    return rule


def refuse(names, why):
    """Primitives that refuse a batched input, with the reason the error gives."""
    for name in (names,) if isinstance(names, str) else names:
        REFUSED[name] = why


class Frame:
    """The lanes being computed: `size` is their number (an int, or an int64 scalar tensor
    of the graph being built when it is known only at run time)."""

    __slots__ = ("size",)

    def __init__(self, size):
        self.size = size


def where(node):
    if node.origin is None:
        return ""
    return f" (made at {errors.describe_origin(node.origin)})"


def refused_error(node, why=None):
    why = why or REFUSED.get(node.op) or "it has no batching rule"
    return BatchingError(
        f"vmap cannot batch primitive {node.op!r} (node {node.name!r}){where(node)}: {why}. "
        "Pass this argument with in_axes=None if it is the same for every element, or call "
        "the function in a Python loop over the elements.")


# -- the walk ----------------------------------------------------------------------------------

def batch_graph(graph, args, batched, frame):
    """The outputs of `graph` for every lane: [(tensor, is_batched)], staged into the current
    graph. `args`: one tensor per `graph.inputs` (batched ones with the lane on axis 0)."""
    if len(args) != len(graph.inputs):
        raise RuntimeError(f"batch_graph: {len(args)} values for {len(graph.inputs)} inputs")
    env = {id(ph): (a, bool(b)) for ph, a, b in zip(graph.inputs, args, batched)}
    needed = _needed(graph)
    for node in graph.nodes:
        if id(node) not in needed:
            continue
        if node.op == "Placeholder":
            if id(node.outputs[0]) not in env:
                raise RuntimeError(f"batch_graph: placeholder {node.name!r} has no value")
            continue
        ins = [env[id(t)] for t in node.inputs]
        with staged_for(node.origin):
            outs = batch_node(frame, node, [a for a, _ in ins], [b for _, b in ins])
        if len(outs) != len(node.outputs):
            raise RuntimeError(f"the batching rule of {node.op!r} gave {len(outs)} values "
                               f"for {len(node.outputs)} outputs")
        for t, out in zip(node.outputs, outs):
            env[id(t)] = out
    return [env[id(t)] for t in graph.outputs]


def _needed(graph):
    """ids of the nodes an output or an effect depends on: a dead node (one the optimiser
    left, say an unused `range` of a staged for loop) is not batched, nor refused."""
    producers = {id(t): n for n in graph.nodes for t in n.outputs}
    work = [producers[id(t)] for t in graph.outputs if id(t) in producers]
    work += [n for n in graph.nodes if n.op != "Placeholder" and is_effectful(n)]
    work += [t.node for t in graph.inputs]
    needed = set()
    while work:
        node = work.pop()
        if id(node) in needed:
            continue
        needed.add(id(node))
        work.extend(producers[id(t)] for t in node.inputs if id(t) in producers)
    return needed


def batch_node(frame, node, args, batched):
    if not any(batched) and node.op not in ALWAYS_RULE:
        return [(t, False) for t in restage(node, args)]
    if node.op in REFUSED:
        raise refused_error(node)
    rule = rule_for(node.op)
    if rule is None:
        raise refused_error(node)
    return rule(frame, node, list(args), list(batched))


def restage(node, args, attrs=None):
    """`node` copied into the current graph on `args` (its outputs' specs kept)."""
    graph = get_default_graph()
    attrs = node.attrs if attrs is None else attrs
    if node.op == "Const":
        return [primitives.const(attrs["value"], attrs.get("weak", False), graph=graph)]
    if "variable" in attrs:        # a Variable's read or write: the new graph holds it too
        var = attrs["variable"]()
        if var is not None:
            attrs = dict(attrs, **var._attrs(graph))
    specs = [(t.dtype, t.shape, t.weak) for t in node.outputs]
    return list(graph.add_node(node.op, args, attrs, specs, name=node.name).outputs)


def rebind(node, args, attrs=None):
    """The primitive of `node` staged again on new (batched) `args`, with its shape rule."""
    attrs = node.attrs if attrs is None else attrs
    return list(primitives.bind(node.op, args, attrs).outputs)


# -- values ------------------------------------------------------------------------------------

def rank(t, node=None):
    if t.shape is None:
        raise BatchingError(f"vmap needs the rank of {t!r}{'' if node is None else where(node)}, "
                            "which is unknown while tracing: give the argument a known rank")
    return len(t.shape)


def dims_of(t):
    """The dimensions of `t` as ints where known, int64 scalar tensors where not."""
    from autograph.runtime.numpy.shape_ops import dim
    return tuple(d if d is not None else dim(t, i) for i, d in enumerate(t.shape))


def materialize(frame, x):
    """An unbatched value as a batched one: the same value on every lane."""
    if isinstance(x, Tensor) and x.dtype == HANDLE:
        if x.node.op == "ta_new":     # an empty TensorArray: its elements will be batched
            return x
        raise BatchingError(
            f"vmap cannot give the TensorArray {x!r}{where(x.node)} per-element values: it "
            "already holds values shared by every element. Make a new TensorArray for the "
            "per-element values")
    x = primitives.convert(x)
    rank(x)
    return np.broadcast_to(np.expand_dims(x, 0), (frame.size,) + dims_of(x))


def batched_value(frame, x, is_batched):
    return x if is_batched else materialize(frame, x)


def size_of(x):
    """The number of lanes of batched `x` (int or int64 scalar tensor)."""
    from autograph.runtime.numpy.shape_ops import dim
    return dim(x, 0)


def is_tensor(x):
    return isinstance(x, Tensor)
