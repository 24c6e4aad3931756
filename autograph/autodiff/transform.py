"""Reverse accumulation over a graph's nodes: the graph -> graph gradient transform.

`gradients(ys, xs)` stages, into the graph being built, the nodes that compute the
cotangents of `xs` (tensors of that graph, or Variables read in it) for the cotangents of
`ys` (ones by default). It walks the graph's nodes backwards from the last one and calls
each primitive's rule (`primitives.defvjp`), which stages primitives itself. So the result
is an ordinary graph: optimisation, codegen, every device and a second differentiation
work on it unchanged.

Only *active* nodes are visited: those that depend on a source through floating-point
values (integer and boolean values carry no gradient). A rule sees its node through a
`NodeView` whose `inputs`/`outputs` are resolved lazily by a `resolve` function: at the top
level that is the tensor itself; inside the backward body of a loop it is a read of the
per-iteration stack that the forward loop keeps for it (loops.py), so only what rules
actually read is ever stored.

Contract extension (for control-flow rules): `NodeView.ad` is the running `Context`
(watched Variables and their accumulated cotangents) and `NodeView.resolve` the resolver.
"""

import numpy as np

from autograph import errors
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, get_default_graph, gradient_origin, staged_for
from autograph.runtime.ir.tensor import Tensor

HANDLE = np.dtype(object)


class NonDifferentiableError(TypeError):
    """Differentiating through a primitive that has no gradient rule, or w.r.t. an
    integer value."""


def differentiable_dtype(dtype):
    return dtype.kind in "fc" or dtype == HANDLE


class Context:
    """One differentiation: which Variables are sources, and their cotangents so far
    (tensors of the graph `gradients` builds into)."""

    def __init__(self, variables=()):
        self.variables = {id(v): v for v in variables}
        self.var_cts = {}
        self.stopped = set()      # ids of nodes recorded under stop_recording / stop_gradient
        self.checkpoints = None   # every loop's snapshot budget (checkpointed.py); None: all

    def watches(self, node):
        if node.op != "read_variable" or not self.variables:
            return False
        var = node.attrs["variable"]()
        return var is not None and id(var) in self.variables


class _Lazy:
    """A node's inputs or outputs as the rule's graph sees them, resolved on first use."""
    __slots__ = ("tensors", "resolve", "cache")

    def __init__(self, tensors, resolve):
        self.tensors, self.resolve, self.cache = tensors, resolve, {}

    def __len__(self):
        return len(self.tensors)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(len(self.tensors))[i]]
        if i < 0:
            i += len(self.tensors)
        if i not in self.cache:
            self.cache[i] = self.resolve(self.tensors[i])
        return self.cache[i]

    def __iter__(self):
        return (self[i] for i in range(len(self.tensors)))


class NodeView:
    """What a rule sees of a node: op, attrs, origin, and primal values as tensors of the
    graph being built (`inputs`, `outputs`, lazily resolved). `node` is the forward node
    itself (its tensors belong to the forward graph: for static dtype/shape only)."""

    def __init__(self, node, resolve, ad, needs=None):
        self.node, self.op, self.attrs, self.origin = node, node.op, node.attrs, node.origin
        self.name = node.name
        # which inputs need a cotangent (control-flow rules skip the others)
        self.needs = needs if needs is not None else [True] * len(node.inputs)
        self.inputs = _Lazy(node.inputs, resolve)
        self.outputs = _Lazy(node.outputs, resolve)
        self.resolve, self.ad = resolve, ad

    def __repr__(self):
        return f"<NodeView {self.node!r}>"


def identity_resolve(t):
    graph = get_default_graph()
    return t if graph is None else graph.capture(t)


# -- cotangent arithmetic ----------------------------------------------------------------------

def add_cts(a, b):
    """a + b for two cotangents (None is zero) of the same value."""
    if a is None:
        return b
    if b is None:
        return a
    if a.dtype == HANDLE:
        from autograph.autodiff import stacks
        return stacks.add_grads(a, b)
    from autograph.autodiff import accumulate
    return accumulate.add(a, b)      # (rows read by index: added by row)


def zeros_like_value(t):
    """A zero cotangent for (a resolved) tensor `t`."""
    if t.dtype == HANDLE:
        from autograph.autodiff import stacks
        return stacks.empty_grad()
    return np.zeros_like(t)


def ones_like_value(t):
    return np.ones_like(t)


# -- activity ------------------------------------------------------------------------------------

def reads_watched(graph, ctx):
    """Does `graph` (or a graph nested in it) read a watched Variable?"""
    if not ctx.variables:
        return False
    return any(ctx.watches(n) for n in graph.walk())


def active_tensors(nodes, sources, ctx):
    """ids of the tensors that depend on `sources` (ids) through differentiable values, in
    the order of `nodes` (forward)."""
    active = set(sources)
    for node in nodes:
        if id(node) in ctx.stopped:
            continue
        hit = any(id(t) in active for t in node.inputs) or ctx.watches(node)
        if not hit and ctx.variables and node.op in ("cond", "while_loop"):
            hit = any(reads_watched(g, ctx) for g in node.attrs.values() if isinstance(g, Graph))
        if hit:
            for t in node.outputs:
                if differentiable_dtype(t.dtype):
                    active.add(id(t))
    return active


# -- the walk ----------------------------------------------------------------------------------


def where(node):
    if node.origin is None:
        return ""
    return f" (made at {errors.describe_origin(node.origin)})"


def no_rule_error(node):
    return NonDifferentiableError(
        f"Cannot differentiate through primitive {node.op!r} (node {node.name!r}){where(node)}: "
        "it has no gradient rule. Wrap the value in ag.stop_gradient(...) if no gradient should "
        "flow through it, or give it one with ag.custom_gradient.")


def backprop(nodes, cts, active, ctx, resolve=identity_resolve):
    """Reverse accumulation over `nodes` (a graph's nodes, forward order). `cts` maps ids of
    tensors to their cotangents (tensors of the graph being built) and is updated with the
    cotangents of every active tensor reached. `active`: ids from `active_tensors`."""
    for node in reversed(list(nodes)):
        if not node.inputs and not ctx.watches(node) and node.op not in ("cond", "while_loop"):
            continue
        outs = [cts.get(id(t)) for t in node.outputs]
        if all(c is None for c in outs):
            continue
        if not any(id(t) in active for t in node.outputs):
            continue
        if id(node) in ctx.stopped:
            continue
        if ctx.watches(node):
            var = node.attrs["variable"]()
            ctx.var_cts[id(var)] = add_cts(ctx.var_cts.get(id(var)), outs[0])
            continue
        prim = primitives.lookup(node.op)
        if prim.nondiff:
            continue
        if prim.vjp is None:
            raise no_rule_error(node)
        inputs = node.inputs    # (a control-flow rule may add loop variables to the node)
        needs = [id(t) in active for t in inputs]
        with staged_for(gradient_origin(node.origin)):   # the user's line's, as backward work
            try:
                in_cts = prim.vjp(outs, NodeView(node, resolve, ctx, needs))
            except NotImplementedError as e:   # a rule that cannot apply here: say where
                if node.origin is None or "(made at " in str(e):
                    raise
                raise NotImplementedError(
                    f"Cannot differentiate {node.op!r} (node {node.name!r}){where(node)}: "
                    f"{e}") from None
            if len(in_cts) != len(inputs):
                raise RuntimeError(f"the gradient rule of {node.op!r} returned "
                                   f"{len(in_cts)} cotangents for {len(inputs)} inputs")
            for t, c in zip(inputs, in_cts):
                if c is None or id(t) not in active:
                    continue
                cts[id(t)] = add_cts(cts.get(id(t)), c)
    return cts


def check_source(x):
    if isinstance(x, Tensor) and not differentiable_dtype(x.dtype):
        raise NonDifferentiableError(
            f"Cannot differentiate with respect to {x.name!r} of dtype {x.dtype.name}"
            f"{where(x.node)}: gradients are defined for floating-point (and complex) values "
            "only. Convert it first, e.g. x.astype(np.float64).")


def gradients(ys, xs, grad_ys=None, unconnected="none", ctx=None):
    """Cotangents of `xs` (tensors of the current graph, or Variables) for `ys` (tensors),
    staged into the current graph. None (or zeros, `unconnected="zero"`) for a source
    that `ys` do not depend on."""
    from autograph.runtime import variables as variables_mod
    from autograph.autodiff import (conds, gradlists, list_edits, loops,  # noqa: F401
                                    stacks, tensor_arrays)
    graph = get_default_graph()
    if graph is None:
        raise RuntimeError("gradients() stages nodes: call it while tracing")
    var_sources = [x for x in xs if isinstance(x, variables_mod.Variable)]
    ctx = ctx or Context()
    ctx.variables.update({id(v): v for v in var_sources})
    tensor_sources = []
    for x in xs:
        if isinstance(x, Tensor):
            check_source(x)
            tensor_sources.append(graph.capture(x))
    ys = [graph.capture(y) for y in ys]
    for y in ys:
        if not differentiable_dtype(y.dtype):
            raise NonDifferentiableError(
                f"Cannot differentiate {y.name!r} of dtype {y.dtype.name}{where(y.node)}: the "
                "target of a gradient must be a floating-point value.")
    active = active_tensors(graph.nodes, [id(t) for t in tensor_sources], ctx)
    cts = {}
    for i, y in enumerate(ys):
        g = None if grad_ys is None or grad_ys[i] is None else primitives.convert(grad_ys[i])
        with staged_for(gradient_origin(y.node.origin)):   # (the seed: backward work)
            if g is None:
                g = ones_like_value(y)
            elif g.dtype != y.dtype:
                g = g.astype(y.dtype)
            cts[id(y)] = add_cts(cts.get(id(y)), g)
    backprop(graph.nodes, cts, active, ctx)
    out = []
    for x in xs:
        if isinstance(x, Tensor):
            c = cts.get(id(graph.capture(x)))
        else:
            c = ctx.var_cts.get(id(x))
        if c is None and unconnected == "zero":
            c = np.zeros(x.shape, x.dtype) if not isinstance(x, Tensor) else np.zeros_like(x)
            c = primitives.convert(c) if not isinstance(c, Tensor) else c
        out.append(c)
    return out
