"""`global` and `nonlocal` declared inside a block move to the top of their function.

Python lets a function say `global G` anywhere before G is used, inside an `if` or a loop
too, and the declaration holds for the whole function. The control-flow converter moves
blocks into branch and loop functions of their own, where a declaration left behind would
apply to the wrong function (and clash with G as a parameter). At the top of the
function, where it means the same thing, the converters see G as the global it is.
"""

import gast

from autograph.converters.base import SCOPE_NODES
from autograph.source import traversal

_DECLARATIONS = (gast.Global, gast.Nonlocal)


def _take(stmts, found):
    """`stmts` without its declarations (collected into `found`, searched through nested
    blocks, not nested scopes); a block left empty gets `pass`."""
    out = []
    for s in stmts:
        if isinstance(s, _DECLARATIONS):
            found.append(s)
            continue
        if not isinstance(s, SCOPE_NODES):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(s, field, None)
                if isinstance(block, list) and block:
                    setattr(s, field, _take(block, found) or ([gast.Pass()] if field == "body" else []))
            for clause in getattr(s, "handlers", None) or getattr(s, "cases", None) or ():
                clause.body = _take(clause.body, found) or [gast.Pass()]
        out.append(s)
    return out


def _hoist(fn_node):
    found = []
    body = _take(fn_node.body, found)
    if not found:
        return
    merged = []
    for kind in _DECLARATIONS:
        names = []
        for d in found:
            if isinstance(d, kind):
                names.extend(n for n in d.names if n not in names)
        if names:
            first = next(d for d in found if isinstance(d, kind))
            first.names = names
            merged.append(first)
    docstring = (body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant)
                 and isinstance(body[0].value.value, str))
    fn_node.body = body[:1] + merged + body[1:] if docstring else merged + body


def transform(node, ctx):
    """Hoist the declarations of the function and of every function nested in it."""
    if isinstance(node, gast.Lambda):
        return node
    for n in traversal.walk(node, leaves=False):
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef)):
            _hoist(n)
    return node
