"""The forward-mode (JVP) rule table, keyed by primitive name, beside the VJP rules.

A JVP rule is `rule(tangents, node) -> [output tangent or None]`: `node` is the primal
node as staged in the graph being built (its `inputs`, `outputs` and `attrs` are tensors
and values of that graph), `tangents` one tangent per input (None: zero). Rules stage
primitives, so the tangent computation is an ordinary graph: optimised, compiled and
differentiated again (reverse-over-forward) like any.

Three ways to give a primitive a rule:
- `defjvp(name, rule)`: a rule written for it;
- `deflinear(name, positions)`: the primitive is linear in the inputs at `positions`
  (jointly): its tangent is the primitive itself applied to their tangents (zeros for
  a zero one), the other inputs (indices, shapes, masks) as they are;
- `deftransposed(name)`: the tangent is the transpose of the primitive's VJP rule
  (a VJP rule is linear in its cotangent, so `J t = d/du <vjp(u), t>`: one reverse pass
  over the nodes the VJP rule stages). Correct for any differentiable rule; used for the
  families whose derivatives are long (linear algebra, SciPy's special functions) and
  for `custom_gradient`, whose JVP is thereby the transpose of the user's gradient.

tests/autodiff/test_jvp_rule_audit.py fails for a primitive with a VJP rule and none of
these (a short, reasoned list of structural primitives aside).
"""

import numpy as np

JVP_RULES = {}
HANDLE = np.dtype(object)


def defjvp(name, rule):
    JVP_RULES[name] = rule
    return rule


def lookup(name):
    return JVP_RULES.get(name)


def differentiable(t):
    return t.dtype.kind in "fc" or t.dtype == HANDLE


def zeros_like(t):
    """A zero tangent for the primal tensor `t` (a fresh zero copy for a handle)."""
    from autograph.runtime.ir import primitives   # (the table itself imports nothing)
    if t.dtype == HANDLE:
        return primitives.bind1("jvp_zero_handle", [t])
    if t.shape is not None and None not in t.shape:
        return primitives.const(np.zeros(t.shape, t.dtype))
    return np.zeros_like(t)


def instantiate(tangent, primal):
    """`tangent`, or zeros like `primal` when it is None (zero)."""
    return zeros_like(primal) if tangent is None else tangent


def deflinear(name, positions=(0,)):
    """The primitive is linear in the inputs at `positions` (jointly; None: in every
    differentiable input, as `concat` is)."""
    fixed = None if positions is None else tuple(positions)

    def rule(tangents, node):
        from autograph.runtime.ir import primitives
        ins = list(node.inputs)
        positions = fixed if fixed is not None else [
            i for i, x in enumerate(ins) if differentiable(x)]
        if all(tangents[i] is None for i in positions if i < len(tangents)):
            return [None] * len(node.outputs)
        for i in positions:
            if i < len(ins):
                ins[i] = instantiate(tangents[i], ins[i])
        new = primitives.bind(node.op, ins, dict(node.attrs))
        return [t if differentiable(t) else None for t in new.outputs]
    rule.__qualname__ = f"linear_rule[{name}]"
    rule.linear_in = fixed
    return defjvp(name, rule)


def deftransposed(name):
    """The primitive's JVP is the transpose of its VJP rule (see the module docstring)."""
    from autograph.autodiff import jvp_transpose   # (lazy: it imports this table)
    return defjvp(name, jvp_transpose.transposed_rule)
