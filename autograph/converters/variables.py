"""Reads of variables that may be unassigned -> `ag__.ld(x)`.

Converted code passes every state variable into branch and loop functions, so a variable
that the original program had not assigned yet holds `ag__.Undefined('x')` there instead of
being unbound. Where the original could read such a variable (assigned on some paths that
reach the read but not on all of them), the read becomes `ag__.ld(x)`, which raises the
same UnboundLocalError Python would. Reads of variables assigned on every path stay as
written, so ordinary code shows no `ld` at all.

Requires reaching definitions (DEFINED_VARS_IN / MAYBE_DEFINED_VARS_IN on statements).
"""

import gast

from autograph.converters import base
from autograph.converters.base import SCOPE_NODES, Transformer
from autograph.source import anno, templates, traversal
from autograph.source.anno import Static

_HEADERS = {gast.If: ["test"], gast.While: ["test"], gast.For: ["iter"],
            gast.With: ["items"], gast.Return: None}


def _simple(symbols):
    return {str(s) for s in symbols if s.is_simple()}


class _Loads(traversal.NodeTransformer):
    """Wrap loads of `names` in one statement's expressions (not inside nested scopes)."""

    def __init__(self, names, never=()):
        self.names = names
        self.never = never   # assigned on no path to here: Python always raises

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.names:
            if node.id in self.never:
                # in converted code the name may not even exist in this scope (NameError):
                # raise Python's UnboundLocalError (or, in a traced branch, a refusal)
                return templates.replace_as_expression(
                    f"ag__.ld(ag__.Undefined('{node.id}'))", origin=node)
            return templates.replace_as_expression("ag__.ld(x)", origin=node, x=node.id)
        return node

    def visit_AugAssign(self, node):
        """`y += 1` reads `y` where it stands as a target: a tensor that may have no value
        (a branch or loop gave it its first one) is checked by `ag__.ld(y)` just before."""
        node = self.generic_visit(node)
        t = node.target
        if t.__class__ is gast.Name and t.id in self.names and t.id not in self.never:
            return templates.replace("ag__.ld(x)", origin=node, x=t.id) + [node]
        return node

    def visit_Lambda(self, node):
        return node  # its body runs later: the variable may be assigned by then

    def _comprehension(self, node):
        """A comprehension binds its own targets: those names are not the function's."""
        bound = {n.id for g in node.generators for n in traversal.walk(g.target)
                 if n.__class__ is gast.Name}
        if not bound & self.names:
            return self.generic_visit(node)
        return _Loads(self.names - bound, self.never - bound).generic_visit(node)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def lazy_walrus_targets(fn):
    """Names a `:=` assigns in a part Python may skip (a later operand of and/or, a branch
    of a conditional expression): the analyses count them assigned, they may not be."""
    out = set()
    for node in traversal.walk(fn, leaves=False):
        if isinstance(node, gast.BoolOp):
            parts = node.values[1:]
        elif isinstance(node, gast.IfExp):
            parts = [node.body, node.orelse]
        else:
            continue
        out |= {n.target.id for p in parts for n in traversal.walk(p, leaves=False)
                if isinstance(n, gast.NamedExpr) and isinstance(n.target, gast.Name)}
    return out


_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef)


def record_locals(node):
    """Annotate every function in `node` (itself included) with the names its own scope
    binds as written (Conv.LOCALS), before any pass drops code after a jump."""
    for fn in traversal.walk(node, leaves=False):
        if isinstance(fn, _FUNCTIONS):
            anno.setanno(fn, base.Conv.LOCALS, frozenset(_bound_as_written(fn.body)))


def _bound_as_written(body):
    out, todo = set(), list(body)
    while todo:
        n = todo.pop()
        cls = n.__class__
        if cls in _FUNCTIONS or cls is gast.ClassDef:
            out.add(n.name)   # (its decorators and defaults are evaluated here: rare binders)
            continue
        if cls is gast.Lambda:
            continue
        if cls is gast.Name:
            if n.ctx.__class__ is not gast.Load:
                out.add(n.id)
            continue
        if cls in _COMPREHENSIONS:   # its targets are its own; a `:=` in it binds here
            out.update(w.target.id for w in traversal.walk(n, leaves=False)
                       if w.__class__ is gast.NamedExpr and w.target.__class__ is gast.Name)
            continue
        if cls is gast.alias:
            if n.name != "*":
                out.add(n.asname or n.name.split(".")[0])
            continue
        for field in ("name", "rest"):   # match patterns: `case [x, *rest]`, `case {**rest}`
            value = getattr(n, field, None) if cls.__name__.startswith("Match") else None
            if isinstance(value, str):
                out.add(value)
        todo.extend(traversal.children(n))
    return out


def _locals(fn):
    """The function's own variables: what it binds (as written: Conv.LOCALS), less its
    global/nonlocal names."""
    body = anno.getanno(fn, Static.BODY_SCOPE, None)
    args = anno.getanno(fn, Static.ARGS_SCOPE, None)
    names = _simple(body.bound if body is not None else ()) | _simple(args.bound if args else ())
    names |= anno.getanno(fn, base.Conv.LOCALS, frozenset())
    declared = {n for s in traversal.statements(fn.body, stop=SCOPE_NODES)
                if isinstance(s, (gast.Global, gast.Nonlocal)) for n in s.names}
    return names - declared


class _Variables(Transformer):
    """A variable of the function that is not assigned on every path to a read may hold
    Undefined there in converted code (it is state somewhere), whether or not some path
    assigns it: each such read goes through `ld`."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.locals = [set()]
        self.lazy = [set()]
        self.walrus = base.may_contain(ctx, ":=")

    def visit_FunctionDef(self, node):
        self.locals.append(_locals(node))
        self.lazy.append(lazy_walrus_targets(node) if self.walrus else set())
        try:
            return super().generic_visit(node)
        finally:
            self.locals.pop()
            self.lazy.pop()

    def _never(self, stmt):
        maybe = _simple(anno.getanno(stmt, Static.MAYBE_DEFINED_VARS_IN, frozenset()))
        never = self.locals[-1] - maybe - self.lazy[-1]
        if never and self.walrus:   # a `:=` earlier in the same statement assigns it
            never -= {n.target.id for n in traversal.walk(stmt, leaves=False)
                      if n.__class__ is gast.NamedExpr and n.target.__class__ is gast.Name}
        return never

    def _maybe_undefined(self, stmt):
        if not anno.hasanno(stmt, Static.DEFINED_VARS_IN):
            return set()
        defined = _simple(anno.getanno(stmt, Static.DEFINED_VARS_IN)) - self.lazy[-1]
        return self.locals[-1] - defined

    def generic_visit(self, node):
        if isinstance(node, gast.expr):
            return node  # no statement stands inside an expression: nothing more to find
        if isinstance(node, gast.stmt) and not isinstance(node, SCOPE_NODES):
            names = self._maybe_undefined(node)
            if names:
                fields = _HEADERS.get(type(node), "all")
                if fields == "all" or fields is None:
                    if not any(isinstance(getattr(node, f, None), list) and getattr(node, f) and
                               isinstance(getattr(node, f)[0], gast.stmt)
                               for f in ("body", "orelse")):
                        return _Loads(names, self._never(node)).visit(node)
                else:
                    for f in fields:
                        value = getattr(node, f)
                        if isinstance(value, list):
                            setattr(node, f, [_Loads(names, self._never(node)).visit(v) for v in value])
                        else:
                            setattr(node, f, _Loads(names, self._never(node)).visit(value))
        return super().generic_visit(node)


def transform(node, ctx, analysed=False):
    """Wrap reads of maybe-unassigned variables; `analysed`: the reaching-definitions
    annotations are already on the tree (the control-flow pass shares its analyses)."""
    if isinstance(node, gast.Lambda):
        return node
    if not analysed:
        base.run_analyses(node, ctx)
    return _Variables(ctx).visit(node)
