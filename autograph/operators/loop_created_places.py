"""Items and attributes that a staged loop creates: `y['a'] = x` in the body of a loop whose
condition is a tensor, with no `y['a']` before it (TF's composite_names_in_control_flow_test
`while_imbalanced`, `for_imbalanced`).

Such a place is a loop variable that the body gives its first value (operators.placeholders
`staged_while_first`): it enters the graph loop as a placeholder of the type the body gives
it, carrying a flag that an iteration assigned it, and a loop that ran zero times raises
UnboundLocalError naming it (the graph cannot leave a key missing only sometimes).

One more thing can differ from Python: the first iteration runs with the place missing, the
graph's body with it present. A body that asks (`"a" in y`, `hasattr`, `y.get("a", x)`)
would run its first iteration differently from the rest. So the body is traced both ways,
and the two traces must stage the same thing (`signature`); where they do not, the loop is
refused (`check_alike`), naming the place.
"""

import numpy as np

from autograph import errors
from autograph.operators import _where as where
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import is_tensor


def signature(graph, out):
    """What a trace staged, comparable between two traces: each node's operation, its
    constant attributes and where its inputs come from (a node of this trace, by position,
    or a tensor from outside it: a capture counts as its outer tensor), and the same for
    the leaves `out` gave."""
    captured = {id(inner): outer_id for outer_id, (_, inner) in graph.captures.items()}
    staged = [node for node in graph.nodes if not any(id(t) in captured for t in node.outputs)]
    position = {id(node): k for k, node in enumerate(staged)}

    def ref(value):
        if is_tensor(value):
            if id(value) in captured:   # a placeholder for a tensor from outside
                return ("outside", captured[id(value)])
            k = position.get(id(value.node))
            return ("node", k, value.index) if k is not None else ("outside", id(value))
        if isinstance(value, (np.ndarray, np.generic)):
            return ("array", value.dtype.str, value.shape, value.tobytes())
        if isinstance(value, (bool, int, float, complex, str, type(None))):
            return ("python", type(value).__name__, value)
        if isinstance(value, (tuple, list)):
            return tuple(ref(v) for v in value)
        return ("other", type(value).__name__)   # (a subgraph: its inputs are compared)

    nodes = [(node.op, tuple(ref(t) for t in node.inputs),
              tuple((k, ref(v)) for k, v in sorted((node.attrs or {}).items())))
             for node in staged]
    return nodes, [ref(v) for v in nest.flatten(out)]


def check_alike(absent, present, name, what):
    """Refuse the loop unless the body staged the same with `name` missing and present."""
    if absent != present:
        raise errors.StagingError(
            f"'{name}' is first created inside the {what}{where()}, whose condition is a "
            f"tensor, and the loop body depends on whether it exists (`in`, `hasattr`, "
            f"`get`): the graph runs every iteration alike, but the first would find '{name}' "
            f"missing and the later ones present. Create it before the loop (e.g. {name} = 0, "
            f"or an array of the right shape and dtype).")
