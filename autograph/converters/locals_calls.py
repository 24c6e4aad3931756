"""`locals()` (and `vars()`) in converted code shows the user's variables, as in Python.

Converted code runs parts of a function in generated branch and loop functions and holds
generated names (`ag__`, `if_true`, `loop_body`, `retval_`, ...), so a plain `locals()`
would show those, and would miss a variable a branch assigned but nothing reads later
(the converters do not carry it out of the branch). Each call becomes

    ag__.user_locals((('x', lambda: x), ('y', lambda: y), ...))

naming the variables Python's `locals()` would show there (parameters, assigned names,
free variables; not globals): the reads make them live, so they are carried out of the
branches, and `user_locals` leaves out those not assigned yet, as Python does.
"""

import gast

from autograph.converters import base
from autograph.converters.base import SCOPE_NODES, walk_scope
from autograph.source import templates, traversal

_CALLS = ("locals", "vars")


def _is_locals_call(node, shadowed):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id in _CALLS and node.func.id not in shadowed
            and not node.args and not node.keywords)


def _scope_names(fn_node, free):
    """Python's order: parameters, then local names as first written, then free variables."""
    args = fn_node.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    params += [a.id for a in (args.vararg, args.kwarg) if a is not None]
    declared_global = set()
    assigned, read = [], []

    def at(node, name):
        return (getattr(node, "lineno", 0) or 0, getattr(node, "col_offset", 0) or 0, name)

    for n in walk_scope(fn_node):
        if isinstance(n, gast.Global):
            declared_global.update(n.names)
        elif isinstance(n, gast.Nonlocal):
            read.extend(at(n, name) for name in n.names)
        elif isinstance(n, gast.Name):
            (read if isinstance(n.ctx, gast.Load) else assigned).append(at(n, n.id))
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            assigned.append(at(n, n.name))
        elif isinstance(n, gast.alias):
            assigned.append(at(n, (n.asname or n.name).split(".")[0]))
        elif isinstance(n, gast.ExceptHandler) and isinstance(n.name, gast.Name):
            assigned.append(at(n, n.name.id))
    # walk_scope does not go in source order: sort by where the names are written
    assigned = [name for _, _, name in sorted(assigned)]
    read = [name for _, _, name in sorted(read)]
    names = []
    for name in params + assigned:
        if name not in names and name not in declared_global:
            names.append(name)
    names += [n for n in read if n in free and n not in names]
    return names


def _calls(node, shadowed, handlers, out):
    """(call, names of the `except ... as name` clauses around it) for each locals() call
    under `node`, in this scope."""
    for child in traversal.children(node):
        if isinstance(child, SCOPE_NODES):
            continue
        if _is_locals_call(child, shadowed):
            out.append((child, handlers))
        inner = handlers
        if isinstance(child, gast.ExceptHandler) and isinstance(child.name, gast.Name):
            inner = handlers | {child.name.id}
        _calls(child, shadowed, inner, out)
    return out


def _rewrite(fn_node, shadowed, free):
    calls = _calls(fn_node, shadowed, frozenset(), [])
    if not calls:
        return
    names = _scope_names(fn_node, free)
    # the name of an `except E as name:` is unbound after its handler: read only inside
    caught = {h.name.id for h in walk_scope(fn_node)
              if isinstance(h, gast.ExceptHandler) and isinstance(h.name, gast.Name)}
    for call, handlers in calls:
        readers = [templates.replace_as_expression(
            "(name_str, lambda: name)", origin=call, name=n,
            name_str=gast.Constant(value=n, kind=None))
            for n in names if n not in caught or n in handlers]
        call.func = templates.replace_as_expression("ag__.user_locals", origin=call)
        call.args = [gast.Tuple(elts=readers, ctx=gast.Load())]


def transform(node, ctx):
    if isinstance(node, gast.Lambda) or not (base.may_contain(ctx, "locals") or
                                             base.may_contain(ctx, "vars")):
        return node
    shadowed = {n for n in _CALLS if n in ctx.namespace}
    free = set(getattr(getattr(ctx.fn, "__code__", None), "co_freevars", ()))
    for n in traversal.walk(node, leaves=False):
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef)):
            # a nested function's free variables are the names it reads from outside
            _rewrite(n, shadowed, free if n is node else _all_names(node))
    return node


def _all_names(node):
    return {n.id for n in traversal.walk(node, leaves=False) if isinstance(n, gast.Name)}
