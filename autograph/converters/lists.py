"""Changes to a Python list in a loop or branch -> assignments that rebind it (issue 31).

    l.append(v)      ->  l = ag__.list_append(l, v)
    l.extend(vs)     ->  l = ag__.list_extend(l, vs)
    l += [v, w]      ->  l = ag__.list_iadd(l, [v, w])
    l.insert(i, v)   ->  l = ag__.list_insert(l, i, v)
    v = l.pop(i)     ->  l, v = ag__.list_pop(l, i)
    f(l.pop())       ->  l, l_popped = ag__.list_pop(l)
                         f(l_popped)

in the body of a `for`/`while` loop or an `if` (at any depth), where `l` is a name the
function binds itself (`l[i] = v` is item_updates' `l = ag__.setitem(l, i, v)`). The
rebinding makes `l` a variable the loop or branch writes, so the control-flow pass carries it
as state. On a Python list (a Python loop, a Python `if`) the operators change the list in
place and return it: the converted code does what the original does. In a loop or `if` the
graph runs, the list becomes a list of tensors (autograph.operators.tensor_list.TensorList),
each change a new value; after it the list is used like the list (`np.stack(l)`, `len(l)`,
`l[i]`) and given back to the caller as a Python list.

A pop inside an expression is taken out before its statement (as TensorFlow's converter
does), in the order Python evaluates the pops, when the pop always runs (not in a lambda,
comprehension, conditional expression or `and`/`or`) and the statement reads the list nowhere
else. Left as written: changes outside loops and branches (a Python list is fine there),
changes to names the function does not bind (globals and closure variables: rebinding would
make them locals), to attributes or items (`self.l.append(v)`), and uses of an append's
result.
"""

import gast

from autograph.converters.base import FunctionScopes
from autograph.source import templates
from autograph.source.templates import moved


_METHODS = {"append": ("list_append", 1), "extend": ("list_extend", 1),
            "insert": ("list_insert", 2), "pop": ("list_pop", (0, 1))}


def _list_call(call, names):
    """The name `call` changes, when it is `name.append(v)`, `name.extend(vs)`,
    `name.insert(i, v)` or `name.pop(i)` (positional arguments, no stars) of a name in
    `names`."""
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            call.func.attr in _METHODS and isinstance(call.func.value, gast.Name) and
            not call.keywords and not any(isinstance(a, gast.Starred) for a in call.args)):
        return None
    arity = _METHODS[call.func.attr][1]
    if len(call.args) not in (arity if isinstance(arity, tuple) else (arity,)):
        return None
    name = call.func.value.id
    return name if name in names else None


class _Lists(FunctionScopes):

    def __init__(self, ctx):
        super().__init__(ctx)
        self.depth = 0   # loops and `if`s around the statement

    def visit_FunctionDef(self, node):
        depth, self.depth = self.depth, 0   # (a nested def's loops are its own)
        node = super().visit_FunctionDef(node)
        self.depth = depth
        return node

    def _nested(self, node):
        self.depth += 1
        node.body = self.visit_block(node.body)
        node.orelse = self.visit_block(node.orelse)
        self.depth -= 1
        return node

    visit_For = visit_While = visit_If = _nested

    def visit_block(self, stmts):
        if self.depth:
            stmts = [h for s in stmts for h in self._hoisted(s)]
        return super().visit_block(stmts)

    def _hoisted(self, stmt):
        """`stmt` with each `name.pop(i)` inside its expression taken out before it, in
        the order Python evaluates them: `out.append(src.pop())` -> `src, src_popped =
        ag__.list_pop(src)` and `out.append(src_popped)`. Only pops evaluated on every path
        (not in a lambda, comprehension, `x if c else y`, `and`/`or`), and only when the
        rest of the statement does not read the list (the pops ran first, as written)."""
        if not isinstance(stmt, (gast.Expr, gast.Assign, gast.AugAssign, gast.Return)) or \
                stmt.value is None:
            return [stmt]
        if isinstance(stmt, (gast.Expr, gast.Assign)) and isinstance(stmt.value, gast.Call) \
                and _list_call(stmt.value, self.locals) and stmt.value.func.attr == "pop":
            return [stmt]   # `l.pop(i)`, `v = l.pop(i)`: rewritten as they stand
        pops = [c for c in _unconditional_calls(stmt.value)
                if c.func.attr == "pop" and _list_call(c, self.locals)]
        if not pops:
            return [stmt]
        receiver = _list_call(stmt.value, self.locals) if isinstance(
            stmt, (gast.Expr, gast.Assign)) else None   # `l.append(l.pop() + 1)`: the list
        for name in {c.func.value.id for c in pops}:     # popped is the one appended to
            reads = sum(isinstance(n, gast.Name) and n.id == name for n in gast.walk(stmt))
            if reads != sum(c.func.value.id == name for c in pops) + (receiver == name):
                return [stmt]
        out = []
        for call in pops:   # (a pop's arguments hold no pop of a list it reads: checked above)
            name = call.func.value.id
            temp = self.ctx.namer.new_symbol(f"{name}_popped")
            args = {f"a{k}": moved(a) for k, a in enumerate(call.args)}
            params = "".join(f", {k}" for k in args)
            out += templates.replace(f"x, t = ag__.list_pop(x{params})", origin=stmt,
                                     x=name, t=temp, **args)
            _replace(stmt, call, gast.Name(id=temp, ctx=gast.Load(), annotation=None,
                                           type_comment=None))
        return out + [stmt]

    def _rewrite(self, stmt, call, target=None):
        name = _list_call(call, self.locals) if self.depth else None
        if name is None:
            return None
        op = _METHODS[call.func.attr][0]
        args = {f"a{k}": moved(a) for k, a in enumerate(call.args)}
        params = "".join(f", {k}" for k in args)
        if op == "list_pop":
            # (a pop whose value is dropped binds a fresh name: `_` may be the user's)
            target = target or self.ctx.namer.new_symbol(f"{name}_popped")
            return templates.replace(f"x, target = ag__.list_pop(x{params})", origin=stmt,
                                     x=name, target=target, **args)
        if target is not None:
            return None
        return templates.replace(f"x = ag__.{op}(x{params})", origin=stmt, x=name, **args)

    def visit_Expr(self, node):
        return self._rewrite(node, node.value) or node

    def visit_AugAssign(self, node):
        # `l += [v, w]` changes a list in place (list.extend): in a loop's first trace it
        # would change the list the loop starts with
        if not (self.depth and isinstance(node.op, gast.Add) and
                isinstance(node.target, gast.Name) and node.target.id in self.locals and
                isinstance(node.value, gast.List)):
            return node
        return templates.replace("x = ag__.list_iadd(x, value)", origin=node,
                                 x=node.target.id, value=moved(node.value))

    def visit_Assign(self, node):
        if len(node.targets) != 1 or not (isinstance(node.value, gast.Call) and
                                          isinstance(node.value.func, gast.Attribute) and
                                          node.value.func.attr == "pop"):
            return node
        return self._rewrite(node, node.value, moved(node.targets[0])) or node


def _unconditional_calls(expr):
    """The attribute calls in `expr` that run whenever it is evaluated, in the order Python
    runs them (a call after its arguments, operands left to right)."""
    if isinstance(expr, (gast.Lambda, gast.IfExp, gast.BoolOp, gast.ListComp, gast.SetComp,
                         gast.DictComp, gast.GeneratorExp)):
        return []
    out = [c for child in gast.iter_child_nodes(expr) for c in _unconditional_calls(child)]
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute):
        out.append(expr)
    return out


def _replace(root, old, new):
    """Replace the node `old` below `root` by `new` (in place)."""
    for parent in gast.walk(root):
        for field, value in gast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                value[[id(v) for v in value].index(id(old))] = new
                return


def transform(node, ctx):
    return _Lists(ctx).visit(node)
