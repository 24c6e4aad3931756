"""Fast tree walks for the compiler's passes.

`ast.NodeVisitor` finds each node's method with a string concatenation and a getattr, walks
fields through two generators, and visits every context/operator leaf (`Load()`, `Add()`,
...) although no pass has anything to do there; conversion of a small function visits a
few hundred nodes per pass, so this is most of the front end's cost. The classes here keep
the `ast.NodeVisitor` / `ast.NodeTransformer` contract (visit_<Class> methods, generic_visit,
a transformer's visit may return None, a node or a list of nodes) with:

- the method for each node class looked up once per visitor class;
- children read straight from the node's fields;
- context/operator leaves (no children, nothing to rewrite) not visited by generic_visit
  unless the visitor class has a visit_<Leaf> method;
- expressions not entered by generic_visit when every visit_<Class> method of the visitor
  is for a statement (or except handler, match case, module): no statement can stand
  inside an expression, so such a pass (asserts, jumps, control flow) has nothing to find
  there. A visitor with its own generic_visit is not narrowed: it may act on any node.

`walk(node)` yields every node under `node` (itself first, then depth first in field order),
like `gast.walk` but in source order and faster.
"""

import ast

_AST = ast.AST
LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
_MISSING = object()


# Fields that the grammar (ast's and gast's alike) gives no child node: the context and
# operator leaves (`ctx`, `op`, `ops`) and names, flags and strings. children() reads only
# a class's other fields (its `_CHILD_FIELDS`), so that it needs no leaf test: the passes
# call it for every node of every walk (42,000 times in a 1,000-statement first call),
# and reading only these fields halves its cost.
_NO_CHILD_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "type_comment", "kind",
                              "module", "level", "is_async", "conversion", "simple"})
_CHILD_FIELDS = {}   # node class -> its fields that may hold child nodes


def _child_fields(cls):
    fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields if f not in _NO_CHILD_FIELDS)
    return fields


def child_fields(cls):
    """The fields of node class `cls` that may hold child nodes (never a leaf)."""
    fields = _CHILD_FIELDS.get(cls)
    return _child_fields(cls) if fields is None else fields


def walk(node, leaves=True):
    """Every node under `node` (a node or a list of nodes), depth first in field order;
    without the context/operator leaves when `leaves` is False."""
    todo = list(reversed(node)) if isinstance(node, list) else [node]
    pop, push, extend = todo.pop, todo.append, todo.extend
    table = None if leaves else _CHILD_FIELDS   # (without leaves: see children)
    while todo:
        n = pop()
        yield n
        if table is None:
            fields = n._fields
        else:
            fields = table.get(n.__class__)
            if fields is None:
                fields = _child_fields(n.__class__)
        d = n.__dict__
        for f in reversed(fields):
            v = d.get(f)
            if v is None:
                continue
            if v.__class__ is list:
                if v:
                    extend([x for x in reversed(v) if isinstance(x, _AST)])
            elif isinstance(v, _AST):
                push(v)


def children(node):
    """The child nodes of `node` in field order, without context/operator leaves."""
    fields = _CHILD_FIELDS.get(node.__class__)
    if fields is None:
        fields = _child_fields(node.__class__)
    out = []
    d = node.__dict__
    for f in fields:
        v = d.get(f)
        if v is None:
            continue
        if v.__class__ is list:
            if v:
                out.extend([x for x in v if isinstance(x, _AST)])
        elif isinstance(v, _AST):
            out.append(v)
    return out


def _leaf_classes():
    import gast
    return frozenset(value for module in (ast, gast) for value in vars(module).values()
                     if isinstance(value, type) and issubclass(value, LEAVES))


# the concrete context/operator leaf classes of ast and gast: `x.__class__ in LEAF_CLASSES`
# is the fast form of `isinstance(x, LEAVES)`
LEAF_CLASSES = _leaf_classes()
_LEAF_NAMES = frozenset(c.__name__ for c in LEAF_CLASSES)

# the fields of a statement (or except handler, match case) that hold blocks of statements
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def statements(stmts, stop=()):
    """Every statement of the list `stmts` and of the blocks nested in them (except
    handlers and match cases included), depth first, in no promised order. A statement of
    a class in `stop` is yielded but not entered. No statement stands in an expression, so
    no expression is walked."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, stop):
            continue
        d = n.__dict__
        for field in BLOCK_FIELDS:
            block = d.get(field)
            if block:
                todo.extend(block)


def _dispatch_table(visitor_cls):
    table = visitor_cls.__dict__.get("_ag_dispatch")
    if table is None:
        # the skip set first: a thread that sees the table finds the skip set too
        visitor_cls._ag_skip = _skipped_classes(visitor_cls)
        table = {}
        visitor_cls._ag_dispatch = table
    return table


def _skipped_classes(visitor_cls):
    """What generic_visit need not enter for this visitor: the leaves unless it has a
    method for one, and expressions too when all its methods are for statements
    (statements never stand inside an expression, so such a visitor finds nothing there)."""
    import gast
    skip = ()
    if not any(hasattr(visitor_cls, "visit_" + n) for n in _LEAF_NAMES):
        skip = LEAVES
    # a visitor with its own generic_visit may act on any node: it sees them all
    statement_only = visitor_cls.generic_visit in (NodeVisitor.generic_visit,
                                                   NodeTransformer.generic_visit)
    for attr in dir(visitor_cls) if statement_only else ():
        if not attr.startswith("visit_"):
            continue
        node_cls = getattr(gast, attr[len("visit_"):], None)
        if not isinstance(node_cls, type) or not issubclass(node_cls, ast.AST):
            continue  # a helper (visit_block), not a node method
        if not issubclass(node_cls, _STATEMENT_LEVEL):
            statement_only = False
            break
    if statement_only:
        skip = skip + (gast.expr,)
    return skip


_STATEMENT_LEVEL = (ast.stmt, ast.excepthandler, ast.mod, ast.match_case)


def _skip(visitor):
    """The node classes generic_visit does not visit for this visitor."""
    cls = visitor.__class__
    skip = cls.__dict__.get("_ag_skip")
    if skip is None:
        _dispatch_table(cls)
        skip = cls.__dict__["_ag_skip"]
    return skip


class NodeVisitor:
    """ast.NodeVisitor, faster (see the module docstring)."""

    def visit(self, node):
        cls = node.__class__
        vcls = self.__class__
        table = vcls.__dict__.get("_ag_dispatch")
        if table is None:
            table = _dispatch_table(vcls)
        method = table.get(cls, _MISSING)
        if method is _MISSING:
            method = getattr(self.__class__, "visit_" + cls.__name__, None)
            if method is None and issubclass(cls, LEAVES):
                method = False  # nothing to do for a leaf
            table[cls] = method
        if method is None:
            return self.generic_visit(node)
        if method is False:
            return node if isinstance(self, NodeTransformer) else None
        return method(self, node)

    def generic_visit(self, node):
        d = node.__dict__
        visit = self.visit
        skip = self.__class__.__dict__.get("_ag_skip") or _skip(self)
        for f in node._fields:
            v = d.get(f)
            if v is None:
                continue
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, _AST) and not isinstance(x, skip):
                        visit(x)
            elif isinstance(v, _AST) and not isinstance(v, skip):
                visit(v)


class NodeTransformer(NodeVisitor):
    """ast.NodeTransformer, faster: a visit returning None removes the node (from a list;
    a single field is deleted), a list (or other non-node iterable) is spliced into a list
    field, a node replaces the old one."""

    def generic_visit(self, node):
        d = node.__dict__
        visit = self.visit
        skip = self.__class__.__dict__.get("_ag_skip") or _skip(self)
        for f in node._fields:
            v = d.get(f)
            if v is None or isinstance(v, skip):
                continue
            if v.__class__ is list:
                new_values = []
                changed = False
                for x in v:
                    if isinstance(x, _AST) and not isinstance(x, skip):
                        r = visit(x)
                        if r is not x:
                            changed = True
                        if r is None:
                            continue
                        if not isinstance(r, _AST):
                            new_values.extend(r)
                            continue
                        new_values.append(r)
                    else:
                        new_values.append(x)
                if changed:
                    v[:] = new_values
            elif isinstance(v, _AST):
                r = visit(v)
                if r is None:
                    delattr(node, f)
                elif r is not v:
                    setattr(node, f, r)
        return node
