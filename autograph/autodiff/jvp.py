"""Forward accumulation: the graph -> graph JVP transform.

`jvp_graph(graph, primals, tangents)` stages, into the graph being built, a copy of
`graph` (a finished graph: its inputs are given `primals`) together with the tangents of
its outputs for the `tangents` of its inputs. It walks the nodes forwards; each node is
copied and its primitive's JVP rule (jvp_table.py) stages the output tangents from the
input tangents. A None tangent is a zero that is never materialised, so only nodes that
depend on an input through floating-point values cost anything.

Control flow is rebuilt, not patched: a `cond` becomes a new `cond` whose branches are
the old branches copied with their tangents as extra outputs (conds.py's rules run on
either branch alike); a `while_loop` becomes a new `while_loop` whose loop variables are
the old ones followed by the tangents of those that can carry one (found by a fixed
point over the body: a tangent may appear after any number of iterations), so loops of
unknown trip count need nothing stored. Handles (TensorArrays, the reverse pass's stacks
and gradient lists) have handles as tangents: the same kind of list, holding tangents.

Variables: a tangent assigned to a Variable is the tangent of later reads of it in the
same straight-line code (and of reads inside branches and loops after it, which capture
it); a branch or loop that assigns a Variable a value with a tangent is refused.
"""

from autograph.autodiff import jvp_table
from autograph.autodiff.transform import NonDifferentiableError, identity_resolve, where
from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import get_default_graph, staged_for

CONTROL_FLOW = ("cond", "while_loop")
VARIABLE_OPS = ("read_variable", "assign_variable", "update_variable")


class Context:
    """One forward differentiation: tangents of Variables assigned so far (by id), and how
    deep in branches and loops the walk is."""

    def __init__(self):
        self.var_tangents = {}
        self.depth = 0


class JvpNode:
    """What a JVP rule sees: the staged primal node's op, attrs, inputs and outputs (of the
    graph being built), and `resolve`, which maps a tensor of the graph being copied to
    its copy (for attrs that hold graphs capturing such tensors: custom_gradient)."""

    __slots__ = ("node", "op", "attrs", "inputs", "outputs", "origin", "name", "resolve")

    def __init__(self, node, resolve):
        self.node, self.op, self.attrs = node, node.op, node.attrs
        self.inputs, self.outputs = node.inputs, node.outputs
        self.origin, self.name, self.resolve = node.origin, node.name, resolve


def no_rule_error(node):
    return NonDifferentiableError(
        f"Cannot differentiate {node.op!r} (node {node.name!r}){where(node)} in forward mode: "
        "it has no JVP rule. Wrap the value in ag.stop_gradient(...) if no derivative should "
        "flow through it, or give the function a rule with ag.custom_jvp.")


def _var_attrs(node, graph):
    attrs = dict(node.attrs)
    var = attrs["variable"]()
    if var is None:
        raise ReferenceError(f"the Variable {attrs['name']!r} that {node.name!r} reads or "
                             "writes was deleted")
    attrs.update(var._attrs(graph))
    return attrs, var


def copy_node(node, ins):
    """`node` staged again in the current graph on inputs `ins`."""
    graph = get_default_graph()
    attrs = _var_attrs(node, graph)[0] if node.op in VARIABLE_OPS else node.attrs
    return graph.add_node(node.op, ins, attrs,
                          [(t.dtype, t.shape, t.weak) for t in node.outputs],
                          name=node.name, origin=node.origin)


def _variable_tangent(node, tangents, ctx):
    """Tangents through Variables: reads give the tangent last assigned."""
    var = node.attrs["variable"]()
    key = id(var)
    if node.op == "read_variable":
        return [ctx.var_tangents.get(key)]
    old = ctx.var_tangents.get(key)
    if node.op == "assign_variable":
        t = tangents[0]
    else:   # update_variable: value op delta
        d = tangents[0]
        if d is not None and node.attrs["op"] == "subtract":
            d = -d
        t = old if d is None else d if old is None else old + d.astype(old.dtype)
    if t is not None and t.dtype != node.attrs.get("dtype", t.dtype):
        t = t.astype(node.attrs["dtype"])
    if ctx.depth and (t is not None or old is not None):
        raise NotImplementedError(
            f"forward mode: {node.attrs['name']!r} is assigned inside a branch or loop"
            f"{where(node)} while its value carries a tangent; assign it outside, or pass "
            "the value through the loop variables")
    if t is None:
        ctx.var_tangents.pop(key, None)
    else:
        ctx.var_tangents[key] = t
    return []


def jvp_nodes(nodes, env, tenv, ctx):
    """Copy `nodes` (forward order) into the current graph, staging tangents. `env` maps
    ids of tensors of their graph to their copies (filled in), `tenv` to their tangents
    (None or missing: zero)."""
    # (lazy: jvp_control_flow calls back into this module; the rules register on first use)
    from autograph.autodiff import jvp_control_flow, jvp_rules, jvp_rules_state  # noqa: F401
    graph = get_default_graph()
    for node in nodes:
        if node.op == "Placeholder":
            continue
        ins = [env[id(t)] if id(t) in env else graph.capture(t) for t in node.inputs]
        tangents = [tenv.get(id(t)) for t in node.inputs]
        if node.op in CONTROL_FLOW:
            with staged_for(node.origin):
                outs, touts = jvp_control_flow.rebuild(node, ins, tangents, ctx)
        else:
            new = copy_node(node, ins)
            outs, touts = new.outputs, _tangents(node, new, tangents, env, ctx)
        for t, o, dt in zip(node.outputs, outs, touts):
            env[id(t)] = o
            if dt is not None and jvp_table.differentiable(t):
                tenv[id(t)] = dt
    return env, tenv


def _tangents(node, new, tangents, env, ctx):
    if node.op in VARIABLE_OPS:
        return _variable_tangent(node, tangents, ctx)
    if all(t is None for t in tangents):
        return [None] * len(new.outputs)
    prim = primitives.lookup(node.op)
    if prim.nondiff:
        return [None] * len(new.outputs)
    rule = jvp_table.lookup(node.op)
    if rule is None:
        raise no_rule_error(node)
    graph = get_default_graph()

    def resolve(t):   # a tensor of the graph being copied -> its copy
        if id(t) in env:
            return env[id(t)]
        if t.node.graph.is_ancestor_of(graph):
            return identity_resolve(t)
        raise ValueError(f"forward mode: {t!r} is not a tensor of the graph being "
                         "differentiated or of an enclosing one")
    with staged_for(node.origin):
        try:
            out = rule(tangents, JvpNode(new, resolve))
        except NotImplementedError as e:
            if node.origin is None or "(made at " in str(e):
                raise
            raise NotImplementedError(
                f"Cannot differentiate {node.op!r} (node {node.name!r}){where(node)} in "
                f"forward mode: {e}") from None
    if len(out) != len(new.outputs):
        raise RuntimeError(f"the JVP rule of {node.op!r} returned {len(out)} tangents for "
                           f"{len(new.outputs)} outputs")
    return out


def jvp_graph(graph, primals, tangents, ctx=None):
    """Stage `graph` (finished; inputs first, then its captures' placeholders) into the
    current graph on `primals` (one per `graph.inputs` that is not a capture) with input
    `tangents` (None: zero). Returns (outputs, output tangents) as lists, a tangent None
    where it is zero."""
    ctx = ctx or Context()
    env, tenv = {}, {}
    n = len(graph.inputs) - len(graph.captures)
    for ph, p, t in zip(graph.inputs[:n], primals, tangents):
        env[id(ph)] = p
        if t is not None:
            tenv[id(ph)] = t
    current = get_default_graph()
    for outer, inner in graph.captures.values():
        env[id(inner)] = current.capture(outer)
    jvp_nodes(graph.nodes, env, tenv, ctx)
    outs = [env[id(t)] if id(t) in env else current.capture(t) for t in graph.outputs]
    touts = [tenv.get(id(t)) for t in graph.outputs]
    return outs, touts

