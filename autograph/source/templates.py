"""Generated code written as Python source with placeholders.

    templates.replace('''
        def body_name(state_args):
            body
            return state_ret
        ''', body_name='loop_body', state_args=[QN('x'), QN('i')], body=stmts,
        state_ret=[QN('x'), QN('i')])

A placeholder is any name in the template that is a keyword of the call. What it becomes
depends on the value and on where the placeholder stands:

- str or QN: a Name / Attribute / Subscript node (`'ag__.if_stmt'` is parsed: dotted
  strings are fine);
- a gast expression node: a copy of it (anno.copy_tree: annotations, e.g. ORIGIN, travel
  with it);
- a statement node, or a list/tuple of statements, where the placeholder stands alone as a
  statement: spliced there (None or [] removes the line; an emptied block gets `pass`);
- a list/tuple of names or expressions: spliced where a list of them is expected (function
  parameters, call arguments, tuple/list elements, `global`/`nonlocal` names; an empty list
  removes a `global`/`nonlocal`), elsewhere a tuple: `return state_ret` with [x] gives
  `return (x,)`, with [] gives `return ()`;
- int/float/bool/bytes/None: a Constant;
- `moved(node)` (an expression or statements the caller gives up, e.g. the parts of the
  node being replaced): that node itself, not a copy (copying at every level would make
  nested rewrites quadratic);
- as the name of a `def`: a str or simple QN renames the function.

Expression contexts (Load/Store/Del/Param) are recomputed from where each node lands, so
the same replacement can serve as a loop variable, a parameter and an assignment target.
`origin=node` gives every node created by the template the ORIGIN of `node` (user nodes
spliced in keep their own), so generated lines map back to the user statement they replace.
"""

import functools

import gast

from autograph.source import anno
from autograph.source import parser, traversal
from autograph.source.qual_names import QN

_SPLICE_FIELDS = {
    (gast.Call, "args"), (gast.Tuple, "elts"), (gast.List, "elts"), (gast.Set, "elts"),
    (gast.arguments, "args"), (gast.arguments, "posonlyargs"), (gast.arguments, "kwonlyargs"),
    (gast.Delete, "targets"),
}
_CTX_NODES = (gast.Name, gast.Attribute, gast.Subscript, gast.Tuple, gast.List, gast.Starred)


class Moved:
    """A replacement node handed over to the template (see `moved`)."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node


def moved(node):
    """Wrap a replacement node that the caller gives up (a part of the node being
    replaced): the template uses it where it stands instead of a copy. A second use of the
    same wrapper in one template gets a copy, so no node is in the tree twice."""
    return Moved(node)


def _to_expr(value, placeholder, placed=None):
    if value.__class__ is Moved:
        if placed is None or id(value) in placed:
            return anno.copy_tree(value.node)
        placed.add(id(value))
        return value.node
    if isinstance(value, QN):
        return value.ast()
    if isinstance(value, str):
        if value.isidentifier():
            return gast.Name(id=value, ctx=gast.Load(), annotation=None, type_comment=None)
        return parser.parse_expression(value)
    if isinstance(value, gast.expr):
        return anno.copy_tree(value)
    if isinstance(value, (list, tuple)):
        return gast.Tuple(elts=[_to_expr(v, placeholder, placed) for v in value], ctx=gast.Load())
    if value is None or isinstance(value, (bool, int, float, complex, bytes)):
        return gast.Constant(value=value, kind=None)
    if isinstance(value, gast.AST):
        raise ValueError(f"template placeholder {placeholder!r}: a {type(value).__name__} "
                         "node cannot stand in an expression")
    raise TypeError(f"template placeholder {placeholder!r}: cannot use a "
                    f"{type(value).__name__} as a replacement")


def _as_statements(value, placeholder, placed=None):
    if value is None:
        return []
    if value.__class__ is Moved:
        node = value.node
        if isinstance(node, gast.stmt) or (isinstance(node, list) and
                                           all(isinstance(v, gast.stmt) for v in node)):
            if placed is None or id(value) in placed:
                return _as_statements(node, placeholder)
            placed.add(id(value))
            return list(node) if isinstance(node, list) else [node]
        return None
    if isinstance(value, gast.stmt):
        return [anno.copy_tree(value)]
    if isinstance(value, (list, tuple)) and all(isinstance(v, gast.stmt) for v in value):
        return [anno.copy_tree(v) for v in value]
    return None  # not statements: the placeholder is an expression statement


def _identifier(value, placeholder):
    if isinstance(value, QN) and value.is_simple():
        return str(value)
    if isinstance(value, str) and value.isidentifier():
        return value
    raise ValueError(f"template placeholder {placeholder!r} names a function or a declared "
                     f"variable; it needs an identifier, got {value!r}")


class _Replacer:
    """Builds a new tree from a (cached, never modified) template tree: template nodes are
    copied as they are visited, placeholders are replaced, so the template needs no copy
    of its own first. What each template node needs (its class, positions, fields sorted by
    kind) is worked out once, on its first use (`_plan`)."""

    def __init__(self, replacements):
        self.replacements = replacements
        self.placed = set()  # ids of the Moved replacements already used once

    def visit(self, node):
        """Visit one template node; returns a new node or a list of nodes (statement
        splices)."""
        kind, cls, attrs, annos, fields, ident = node.__dict__.get(_PLAN) or _plan(node)
        repl = self.replacements
        if kind == _NAME:
            if ident in repl:
                return _to_expr(repl[ident], ident, self.placed)
        elif kind == _EXPR_OF_NAME and ident in repl:
            stmts = _as_statements(repl[ident], ident, self.placed)
            if stmts is not None:
                return stmts
        new = _new(cls)
        d = new.__dict__
        if attrs:
            d.update(attrs)
        if annos:
            d[_ANNO] = dict(annos)
        for field, code, payload in fields:
            if code is _VALUE:
                d[field] = payload
            elif code is _CHILD:
                r = self.visit(payload)
                if r.__class__ is list:
                    raise ValueError(f"template: statements cannot replace the {field} of a "
                                     f"{cls.__name__}")
                d[field] = r
            elif code is _LIST:
                d[field] = self._visit_list(*payload)
            else:  # a context/operator leaf
                d[field] = _new(payload)
        if kind == _DEF:
            if new.name in repl:
                d["name"] = _identifier(repl[new.name], new.name)
        elif kind == _DECLARATION:
            names = []
            for n in new.names:
                value = repl.get(n, n)
                values = value if isinstance(value, (list, tuple)) else [value]
                names.extend(_identifier(v, n) for v in values)
            if not names:
                return []
            new.names = names
        return new

    def _visit_list(self, items, splice, keep_a_statement):
        out = []
        repl = self.replacements
        for code, item, ident in items:
            if code is _VALUE:
                out.append(item)
                continue
            if code is _LEAF:
                out.append(_new(item))
                continue
            if splice and ident is not None and ident in repl:
                value = repl[ident]
                if isinstance(value, (list, tuple)):
                    out.extend(_to_expr(v, ident, self.placed) for v in value)
                    continue
            new = self.visit(item)
            if new.__class__ is list:
                out.extend(new)
            else:
                out.append(new)
        if keep_a_statement and not out:
            out = [gast.Pass()]  # a block emptied by splicing nothing must stay valid
        return out


# what a template node is, for _Replacer.visit
_PLAIN, _NAME, _EXPR_OF_NAME, _DEF, _DECLARATION = range(5)
# how a field (or list item) is copied
_VALUE, _CHILD, _LIST, _LEAF = "value", "child", "list", "leaf"
_PLAN = "_ag_template_plan"


def _new(cls):
    return cls.__new__(cls)  # no __init__: the fields are filled in by the caller


def _plan(node):
    """(kind, class, positions, annotations, fields, identifier) of a template node,
    stored on the node (template trees are cached and never change)."""
    cls = node.__class__
    src = node.__dict__
    kind, ident = _PLAIN, None
    if cls is gast.Name:
        kind, ident = _NAME, node.id
    elif cls is gast.Expr and node.value.__class__ is gast.Name:
        kind, ident = _EXPR_OF_NAME, node.value.id
    elif cls in (gast.FunctionDef, gast.AsyncFunctionDef):
        kind = _DEF
    elif cls in (gast.Global, gast.Nonlocal):
        kind = _DECLARATION
    attrs = {a: src[a] for a in node._attributes if a in src}
    fields = []
    for field in node._fields:
        value = src.get(field)
        if value.__class__ is list:
            items = tuple(_item_plan(x) for x in value)
            keep = field == "body" and bool(value) and isinstance(value[0], gast.stmt)
            fields.append((field, _LIST, (items, (cls, field) in _SPLICE_FIELDS, keep)))
        elif isinstance(value, _LEAVES):
            fields.append((field, _LEAF, value.__class__))
        elif isinstance(value, gast.AST):
            fields.append((field, _CHILD, value))
        else:
            fields.append((field, _VALUE, value))
    plan = (kind, cls, attrs, src.get(anno._FIELD), tuple(fields), ident)
    src[_PLAN] = plan
    return plan


def _item_plan(item):
    if not isinstance(item, gast.AST):
        return (_VALUE, item, None)
    if isinstance(item, _LEAVES):
        return (_LEAF, item.__class__, None)
    return (_CHILD, item, item.id if item.__class__ is gast.Name else None)


def _set_ctx(node, ctx_type):
    if isinstance(node, (gast.Tuple, gast.List)):
        node.ctx = ctx_type()
        for elt in node.elts:
            _set_ctx(elt, ctx_type)
    elif isinstance(node, gast.Starred):
        node.ctx = ctx_type()
        _set_ctx(node.value, ctx_type)
    elif isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):
        node.ctx = ctx_type()


def fix_contexts(nodes):
    """Recompute the ctx (Load/Store/Del/Param) of every node from where it stands."""
    roots = nodes if isinstance(nodes, (list, tuple)) else [nodes]
    for root in roots:
        for node in gast.walk(root):
            if isinstance(node, _CTX_NODES):
                node.ctx = gast.Load()
        for node in gast.walk(root):
            if isinstance(node, gast.Assign):
                for target in node.targets:
                    _set_ctx(target, gast.Store)
            elif isinstance(node, (gast.AugAssign, gast.AnnAssign, gast.For, gast.AsyncFor,
                                   gast.comprehension, gast.NamedExpr)):
                _set_ctx(node.target, gast.Store)
            elif isinstance(node, gast.withitem) and node.optional_vars is not None:
                _set_ctx(node.optional_vars, gast.Store)
            elif isinstance(node, gast.ExceptHandler) and node.name is not None:
                _set_ctx(node.name, gast.Store)
            elif isinstance(node, gast.Delete):
                for target in node.targets:
                    _set_ctx(target, gast.Del)
            elif isinstance(node, gast.arguments):
                for arg in node.posonlyargs + node.args + node.kwonlyargs:
                    _set_ctx(arg, gast.Param)
                for arg in (node.vararg, node.kwarg):
                    if arg is not None:
                        _set_ctx(arg, gast.Param)
    return nodes


# where a node stands as a target: (node class, field) -> the context it gets
_TARGET_FIELDS = {
    gast.Assign: (("targets", gast.Store),),
    gast.AugAssign: (("target", gast.Store),), gast.AnnAssign: (("target", gast.Store),),
    gast.For: (("target", gast.Store),), gast.AsyncFor: (("target", gast.Store),),
    gast.comprehension: (("target", gast.Store),), gast.NamedExpr: (("target", gast.Store),),
    gast.withitem: (("optional_vars", gast.Store),),
    gast.ExceptHandler: (("name", gast.Store),),
    gast.Delete: (("targets", gast.Del),),
    gast.arguments: (("posonlyargs", gast.Param), ("args", gast.Param),
                     ("kwonlyargs", gast.Param), ("vararg", gast.Param), ("kwarg", gast.Param)),
}
_PROPAGATE = {gast.Tuple: "elts", gast.List: "elts", gast.Starred: "value"}
_ORIGIN = anno.Basic.ORIGIN
_ANNO = anno._FIELD


def _finish(roots, loc):
    """fix_contexts and copy_origin(loc) in one walk (operator and context leaves get no
    ORIGIN: they have no line of their own)."""
    todo = [(r, None) for r in roots]
    pop, push = todo.pop, todo.append
    load = gast.Load
    while todo:
        node, ctx = pop()
        cls = node.__class__
        d = node.__dict__
        if loc is not None:
            annos = d.get(_ANNO)
            if annos is None:
                d[_ANNO] = {_ORIGIN: loc}
            elif _ORIGIN not in annos:
                annos[_ORIGIN] = loc
        has_ctx, fields = _FINISH_PLANS.get(cls) or _finish_plan(cls)
        if has_ctx:
            d["ctx"] = (ctx or load)()
        for f, target_ctx, inherits in fields:
            v = d.get(f)
            if v is None:
                continue
            child_ctx = target_ctx or (ctx if inherits else None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, gast.AST) and x.__class__ not in _LEAF_CLASSES:
                        push((x, child_ctx))
            elif v.__class__ not in _LEAF_CLASSES and isinstance(v, gast.AST):
                push((v, child_ctx))


_FINISH_PLANS = {}


def _finish_plan(cls):
    """(does the class have a ctx, [(field, the ctx a child there gets or None, does a
    child there inherit the node's ctx)]) for _finish."""
    targets = dict(_TARGET_FIELDS.get(cls, ()))
    inherit = _PROPAGATE.get(cls)
    plan = (cls in _CTX_CLASSES,
            tuple((f, targets.get(f), f == inherit) for f in cls._fields if f != "ctx"))
    _FINISH_PLANS[cls] = plan
    return plan


_CTX_CLASSES = frozenset(_CTX_NODES)
_LEAVES = (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)
_LEAF_CLASSES = traversal.LEAF_CLASSES


@functools.lru_cache(maxsize=512)
def _parsed(template):
    return parser.parse_str(template)


def replace(template, origin=None, **replacements):
    """The statements of `template` with placeholders replaced (see the module docstring).
    Returns a list of gast statements."""
    module = _parsed(template)  # parsed once; the replacer builds a new tree from it
    body_plan = (module.__dict__.get(_PLAN) or _plan(module))[4][0][2]  # Module.body comes first
    body = _Replacer(replacements)._visit_list(*body_plan)
    loc = None if origin is None else anno.getanno(origin, _ORIGIN, None)
    _finish(body, loc)
    return body


def replace_as_expression(template, origin=None, **replacements):
    """Like `replace` for a template that is one expression; returns the expression node."""
    body = replace(template, origin=origin, **replacements)
    if len(body) != 1 or not isinstance(body[0], gast.Expr):
        raise ValueError(f"template {template.strip()!r} is not a single expression")
    return body[0].value
