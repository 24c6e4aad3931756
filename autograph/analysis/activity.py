"""Activity analysis: which symbols each statement reads, modifies, binds and deletes.

`resolve(fn_node)` requires nothing (it sets anno.Basic.QN on the symbols it meets, as
`qual_names.resolve` would) and adds:

- Static.SCOPE on every statement: a `Scope` covering the statement, nested blocks included;
- Static.NODE_SCOPE on every node that is a CFG node's `ast_node` (see analysis.cfg): what
  that node itself does. For a simple statement it is its SCOPE; for an if/while the test;
  for a for the iterable (and, on the target node, the binding); for a with its items; for an except handler the
  type and name; for a def/class the binding of the name, its decorators and defaults, and
  the free variables its body reads; for a function's `arguments` the parameters;
- Static.BODY_SCOPE / ORELSE_SCOPE on if, while, for, try (ORELSE), with, except handlers,
  defs and lambdas (BODY_SCOPE); Static.FINALBODY_SCOPE and HANDLERS_SCOPE on try;
- Static.COND_SCOPE on if/while tests (the If/While node) and on IfExp nodes (with
  BODY_SCOPE/ORELSE_SCOPE for its two branches);
- Static.ITERATE_SCOPE on for loops: the target (what each iteration binds);
- Static.ARGS_SCOPE on FunctionDef and Lambda nodes: the parameters;
- Static.FUNCTIONS on `fn_node`: its functions and lambdas (itself included) with the
  statements defining them, outer first (what cfg.build_all needs, without a walk).

Conventions: reading `a.b` reads `a.b` and `a`; writing `a.b = 1` or `a[i] = 1` modifies
`a.b` / `a[i]` and reads `a` (and `i`); a write through a subscript that is not a symbol
(`a[i + 1] = 1`) modifies `a`. `x += 1` reads and modifies `x`. Names bound by a nested
function or comprehension stay inside it; the enclosing statement reads their free
variables. `global`/`nonlocal` declarations are recorded on the function's scope.
"""

import gast

from autograph.source import anno, traversal
from autograph.source import qual_names
from autograph.source.qual_names import QN


class Scope:
    """Symbols a region of code touches. Non-isolated scopes add what they see to their
    parent when closed; isolated ones (function bodies, comprehensions) report only the
    reads of free variables."""

    def __init__(self, parent=None, isolated=False, function_name=None):
        self.parent = parent
        self.isolated = isolated
        self.function_name = function_name
        self.read = set()
        self.modified = set()
        self.lazy = set()     # names a `:=` assigns in a part Python may skip (and/or, x if c else y)
        self.bound = set()
        self.deleted = set()
        self.params = {}      # QN -> the parameter's Name node (function argument scopes)
        self.globals = set()
        self.nonlocals = set()

    @property
    def free(self):
        """Symbols read here whose root is not bound here (free variables and globals)."""
        local = (self.bound | set(self.params)) - self.globals - self.nonlocals
        return {q for q in self.read if q.root not in local}

    @property
    def local_names(self):
        return (self.bound | set(self.params)) - self.globals - self.nonlocals

    def __deepcopy__(self, memo):
        # analysis facts are shared, not copied, when converters deep-copy annotated nodes
        # (they describe the tree as analysed; re-run the analyses after transforming)
        return self

    def merge_from(self, child):
        self.read |= child.read
        self.modified |= child.modified
        self.lazy |= child.lazy
        self.bound |= child.bound
        self.deleted |= child.deleted
        self.globals |= child.globals
        self.nonlocals |= child.nonlocals

    def __repr__(self):
        def fmt(s):
            return "{" + ", ".join(sorted(str(q) for q in s)) + "}"
        return (f"Scope(read={fmt(self.read)}, modified={fmt(self.modified)}, "
                f"bound={fmt(self.bound)}, deleted={fmt(self.deleted)})")


def _qn(node):
    """The QN of a symbol node (None for other expressions), recorded as anno.Basic.QN:
    computed here, where the analysis meets the node, instead of by a walk of its own."""
    qn = qual_names.qn_of(node)
    if qn is not None:
        anno.setanno(node, anno.Basic.QN, qn)
    else:
        anno.delanno(node, anno.Basic.QN)
    return qn


def _function_scope(scope):
    while scope is not None and not scope.isolated:
        scope = scope.parent
    return scope


class _Activity(traversal.NodeVisitor):
    def __init__(self):
        self.scope = None
        self.statements = []  # the statements being visited, innermost last
        self.functions = []   # (function or lambda node, its defining statement), outer first
        self.root = None      # the node analysed: it is nobody's defining statement
        self.lazy_depth = 0   # inside a part of and/or or a conditional expression that may not run

    # -- scope stack -----------------------------------------------------------------------
    def enter(self, isolated=False, function_name=None):
        self.scope = Scope(self.scope, isolated, function_name)
        return self.scope

    def exit(self):
        scope = self.scope
        self.scope = scope.parent
        if self.scope is not None:
            if scope.isolated:
                self.scope.read |= scope.free
            else:
                self.scope.merge_from(scope)
        return scope

    def scoped(self, nodes, isolated=False):
        """Visit a node or list of nodes in a new child scope; returns the closed scope."""
        self.enter(isolated)
        for n in nodes if isinstance(nodes, list) else [nodes]:
            if n is not None:
                self.visit(n)
        return self.exit()

    # -- symbols ---------------------------------------------------------------------------
    def _symbol(self, node):
        qn = _qn(node)
        ctx = node.ctx
        if isinstance(ctx, gast.Load):
            if qn is not None:
                self.scope.read.add(qn)
        elif isinstance(ctx, (gast.Store, gast.Param)):
            target = qn if qn is not None else self._base_qn(node)
            if target is not None:
                self.scope.modified.add(target)
                if qn is not None and qn.is_simple():
                    self.scope.bound.add(qn)
        elif isinstance(ctx, gast.Del):
            target = qn if qn is not None else self._base_qn(node)
            if target is not None:
                self.scope.modified.add(target)
                self.scope.deleted.add(target)

    def _base_qn(self, node):
        while isinstance(node, (gast.Attribute, gast.Subscript)):
            node = node.value
            qn = _qn(node)
            if qn is not None:
                return qn
        return None

    def visit_Name(self, node):
        self._symbol(node)
        if node.annotation is not None:
            self.visit(node.annotation)

    def visit_Attribute(self, node):
        self._symbol(node)
        self.visit(node.value)  # the object is read to get or set its attribute

    def visit_Subscript(self, node):
        self._symbol(node)
        self.visit(node.value)
        self.visit(node.slice)

    # -- statements ------------------------------------------------------------------------
    def visit_stmt(self, node, body=None):
        scope = self.enter()
        anno.setanno(node, anno.Static.SCOPE, scope)
        (body or self.generic_visit)(node)
        self.exit()
        if not anno.hasanno(node, anno.Static.NODE_SCOPE):
            anno.setanno(node, anno.Static.NODE_SCOPE, scope)
        return scope

    def visit(self, node):
        if isinstance(node, gast.stmt):
            method = getattr(self, "stmt_" + type(node).__name__, None)
            self.statements.append(node)
            try:
                return self.visit_stmt(node, method)
            finally:
                self.statements.pop()
        return super().visit(node)

    def stmt_AugAssign(self, node):
        self.visit(node.value)
        self.visit(node.target)
        qn = _qn(node.target) or self._base_qn(node.target)
        if qn is not None:
            self.scope.read.add(qn)  # x += 1 reads x

    def stmt_AnnAssign(self, node):
        # a local annotation is not evaluated; without a value it binds nothing, it only
        # makes the name local
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)
        elif isinstance(node.target, gast.Name):
            self.scope.bound.add(QN(node.target.id))
        else:
            self.visit(node.target.value)

    def stmt_Global(self, node):
        _function_scope(self.scope).globals.update(QN(n) for n in node.names)
        self.scope.globals.update(QN(n) for n in node.names)

    def stmt_Nonlocal(self, node):
        _function_scope(self.scope).nonlocals.update(QN(n) for n in node.names)
        self.scope.nonlocals.update(QN(n) for n in node.names)

    def _test_header(self, node):
        cond = self.scoped(node.test)
        anno.setanno(node, anno.Static.COND_SCOPE, cond)
        anno.setanno(node, anno.Static.NODE_SCOPE, cond)

    def stmt_If(self, node):
        self._test_header(node)
        anno.setanno(node, anno.Static.BODY_SCOPE, self.scoped(node.body))
        anno.setanno(node, anno.Static.ORELSE_SCOPE, self.scoped(node.orelse))

    stmt_While = stmt_If

    def stmt_For(self, node):
        iterable = self.scoped(node.iter)
        target = self.scoped(node.target)
        anno.setanno(node, anno.Static.ITERATE_SCOPE, target)
        anno.setanno(node, anno.Static.NODE_SCOPE, iterable)
        anno.setanno(node.target, anno.Static.NODE_SCOPE, target)
        anno.setanno(node, anno.Static.BODY_SCOPE, self.scoped(node.body))
        anno.setanno(node, anno.Static.ORELSE_SCOPE, self.scoped(node.orelse))

    stmt_AsyncFor = stmt_For

    def stmt_With(self, node):
        anno.setanno(node, anno.Static.NODE_SCOPE, self.scoped(node.items))
        anno.setanno(node, anno.Static.BODY_SCOPE, self.scoped(node.body))

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, node):
        anno.setanno(node, anno.Static.BODY_SCOPE, self.scoped(node.body))
        anno.setanno(node, anno.Static.HANDLERS_SCOPE, self.scoped(node.handlers))
        anno.setanno(node, anno.Static.ORELSE_SCOPE, self.scoped(node.orelse))
        anno.setanno(node, anno.Static.FINALBODY_SCOPE, self.scoped(node.finalbody))

    stmt_TryStar = stmt_Try

    def visit_ExceptHandler(self, node):
        scope = self.enter()
        anno.setanno(node, anno.Static.SCOPE, scope)
        anno.setanno(node, anno.Static.NODE_SCOPE, self.scoped([node.type, node.name]))
        anno.setanno(node, anno.Static.BODY_SCOPE, self.scoped(node.body))
        self.exit()

    def stmt_Match(self, node):
        anno.setanno(node, anno.Static.NODE_SCOPE, self.scoped(node.subject))
        for case in node.cases:
            self.visit(case)

    def visit_match_case(self, node):
        scope = self.enter()
        anno.setanno(node, anno.Static.SCOPE, scope)
        anno.setanno(node, anno.Static.NODE_SCOPE, self.scoped([node.pattern, node.guard]))
        anno.setanno(node, anno.Static.BODY_SCOPE, self.scoped(node.body))
        self.exit()

    def _capture_names(self, node):
        for name in (getattr(node, "name", None), getattr(node, "rest", None)):
            if isinstance(name, str):
                self.scope.modified.add(QN(name))
                self.scope.bound.add(QN(name))
        self.generic_visit(node)

    visit_MatchAs = visit_MatchStar = visit_MatchMapping = _capture_names

    # -- functions -------------------------------------------------------------------------
    def _args(self, node):
        """Parameters in their own scope; defaults and annotations are read outside."""
        args = node.args
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default)
        scope = Scope(self.scope)
        params = args.posonlyargs + args.args + args.kwonlyargs + \
            [a for a in (args.vararg, args.kwarg) if a is not None]
        for p in params:
            qn = QN(p.id)
            scope.params[qn] = p
            scope.bound.add(qn)
            scope.modified.add(qn)
            if p.annotation is not None:
                self.visit(p.annotation)
        anno.setanno(node, anno.Static.ARGS_SCOPE, scope)
        anno.setanno(args, anno.Static.NODE_SCOPE, scope)
        return scope

    def _function(self, node, body):
        args = self._args(node)
        # (function, the statement defining it): a def is its own statement, a lambda stands
        # in the innermost statement being visited; outer functions come first
        owner = node if isinstance(node, gast.stmt) else (self.statements[-1] if self.statements else None)
        self.functions.append((node, None if owner is self.root else owner))
        inner = self.enter(isolated=True, function_name=getattr(node, "name", "<lambda>"))
        inner.params = dict(args.params)
        for n in body if isinstance(body, list) else [body]:
            self.visit(n)
        self.exit()  # the free variables it reads are read by the enclosing code
        anno.setanno(node, anno.Static.BODY_SCOPE, inner)

    def stmt_FunctionDef(self, node):
        for d in node.decorator_list:
            self.visit(d)
        if node.returns is not None:
            self.visit(node.returns)
        self._function(node, node.body)
        # a recursive reference inside reads the binding this statement makes
        self.scope.read.discard(QN(node.name))
        self.scope.modified.add(QN(node.name))
        self.scope.bound.add(QN(node.name))

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def visit_Lambda(self, node):
        self._function(node, node.body)
        anno.setanno(node, anno.Static.SCOPE, anno.getanno(node, anno.Static.BODY_SCOPE))

    def stmt_ClassDef(self, node):
        for n in node.decorator_list + node.bases + node.keywords:
            self.visit(n)
        self.enter(isolated=True, function_name=node.name)
        for n in node.body:
            self.visit(n)
        anno.setanno(node, anno.Static.BODY_SCOPE, self.exit())
        self.scope.modified.add(QN(node.name))
        self.scope.bound.add(QN(node.name))

    def stmt_Import(self, node):
        for alias in node.names:
            name = QN((alias.asname or alias.name).split(".")[0])
            self.scope.modified.add(name)
            self.scope.bound.add(name)

    stmt_ImportFrom = stmt_Import

    # -- expressions with scopes -----------------------------------------------------------
    def _comprehension(self, node, elements):
        # the first iterable is evaluated in the enclosing scope, the rest inside
        self.visit(node.generators[0].iter)
        self.enter(isolated=True, function_name="<comprehension>")
        for i, gen in enumerate(node.generators):
            self.visit(gen.target)
            if i:
                self.visit(gen.iter)
            for cond in gen.ifs:
                self.visit(cond)
        for e in elements:
            self.visit(e)
        self.exit()

    def visit_ListComp(self, node):
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._comprehension(node, [node.key, node.value])

    def visit_NamedExpr(self, node):
        self.visit(node.value)
        # `(y := ...)` in a comprehension binds y in the enclosing function, not inside it
        inner = self.scope
        while self.scope.function_name == "<comprehension>":
            self.scope = self.scope.parent
        try:
            self.visit(node.target)
            if self.lazy_depth and isinstance(node.target, gast.Name):
                self.scope.lazy.add(QN(node.target.id))
        finally:
            self.scope = inner

    def visit_BoolOp(self, node):
        self.visit(node.values[0])
        self.lazy_depth += 1   # the later operands may not run
        try:
            for v in node.values[1:]:
                self.visit(v)
        finally:
            self.lazy_depth -= 1

    def visit_IfExp(self, node):
        anno.setanno(node, anno.Static.COND_SCOPE, self.scoped(node.test))
        self.lazy_depth += 1   # one of the two values does not run
        try:
            anno.setanno(node, anno.Static.BODY_SCOPE, self.scoped(node.body))
            anno.setanno(node, anno.Static.ORELSE_SCOPE, self.scoped(node.orelse))
        finally:
            self.lazy_depth -= 1


def resolve(fn_node):
    """Annotate the scopes of `fn_node` (a FunctionDef or Lambda; a Module works too), and
    anno.Basic.QN on the symbol nodes the scopes are made of. Returns `fn_node`."""
    visitor = _Activity()
    visitor.root = fn_node
    visitor.enter(isolated=True, function_name="<module>")
    visitor.visit(fn_node)
    anno.setanno(fn_node, anno.Static.FUNCTIONS, tuple(visitor.functions))
    return fn_node
