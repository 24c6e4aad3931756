"""`l.append(v)`, `l.extend(vs)` in a loop -> an assignment that rebinds the list (issue 31).

    l.append(v)      ->  l = ag__.list_append(l, v)
    l.extend(vs)     ->  l = ag__.list_extend(l, vs)

in the body of a `for` or `while` loop, where `l` is a name the function binds itself. The
rebinding makes `l` a variable the loop writes, so the control-flow pass carries it as loop
state. On a Python list (a Python loop) `list_append` appends in place and returns the same
list: the converted code does what the original does. In a loop the graph runs, the list
enters the loop as a list of tensors (autograph.operators.lists.TensorList), whose append
makes a new value each iteration in O(1); after the loop it is used like the list
(`np.stack(l)`, `len(l)`, `l[i]`) and given back to the caller as a Python list of arrays.

Left as written: appends outside loops (a Python list is fine there), appends to names the
function does not bind (globals and closure variables: rebinding would make them locals),
to attributes or items (`self.l.append(v)`), and appends whose result is used.
"""

import gast

from autograph.converters.base import FunctionScopes
from autograph.source import templates
from autograph.source.templates import moved


_METHODS = {"append": "list_append", "extend": "list_extend"}


def _append_target(node, names):
    """The name `node` (a statement) appends to, when it is `name.append(v)` or
    `name.extend(v)`."""
    call = node.value if isinstance(node, gast.Expr) else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            call.func.attr in _METHODS and isinstance(call.func.value, gast.Name) and
            len(call.args) == 1 and not call.keywords and
            not isinstance(call.args[0], gast.Starred)):
        return None
    name = call.func.value.id
    return name if name in names else None


class _Lists(FunctionScopes):

    def __init__(self, ctx):
        super().__init__(ctx)
        self.loops = 0

    def visit_FunctionDef(self, node):
        depth, self.loops = self.loops, 0   # (a nested def's loops are its own)
        node = super().visit_FunctionDef(node)
        self.loops = depth
        return node

    def _loop(self, node):
        self.loops += 1
        node.body = self.visit_block(node.body)
        self.loops -= 1
        node.orelse = self.visit_block(node.orelse)
        return node

    visit_For = visit_While = _loop

    def visit_Expr(self, node):
        name = _append_target(node, self.locals) if self.loops else None
        if name is None:
            return node
        op = _METHODS[node.value.func.attr]
        return templates.replace(f"x = ag__.{op}(x, value)", origin=node, x=name,
                                 value=moved(node.value.args[0]))


def transform(node, ctx):
    return _Lists(ctx).visit(node)
