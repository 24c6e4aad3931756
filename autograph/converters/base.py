"""What every converter shares: the conversion context and a few tree helpers.

A converter is one module ending in `transform(node, ctx)`: it takes the gast FunctionDef
(or Lambda) being converted and returns it rewritten. `ctx` carries what the passes need to
know about the function: its globals and closure (to resolve callees), a Namer for fresh
names that never shadow the user's, and the user's name for messages.
"""

import gast

from autograph.source import anno, traversal
from autograph.source.naming import Namer

class Conv(anno.NoValue):
    """Annotations converters leave for later converters."""

    RETURN_IF = ("An `if` at the end of a function whose branches all end in `return`: the "
                 "control-flow converter emits `return ag__.if_stmt(...)` for it, with branch "
                 "functions that return the function's return value.")
    LOCALS = ("The names a function's own scope binds in the source as written (Python's "
              "symbol table: statements after a return, break or continue count too, though "
              "the jump passes drop them as dead). The variables pass reads it: a name bound "
              "only there is still a local, whose read raises UnboundLocalError.")
    JUMP_IF = ("An `if` that a loop's own break/continue/return decides: it sets the jump's "
               "flag, or guards the statements a jump skips. The control-flow converter "
               "emits `if_stmt(..., jump=True)` for it: when its condition is a tensor, the "
               "Python loop around it learns that its jumps depend on a tensor (a long "
               "Python range loop then stages the rest of its range; see "
               "autograph.operators.for_loops._py_for).")


# Nodes that open a new scope: converters that rewrite a function's own statements
# (return, break, continue) stop at them.
SCOPE_NODES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda, gast.ClassDef)


class Context:
    """The facts about the function under conversion that converters read."""

    def __init__(self, fn, node, info=None, namespace=None, source=None):
        self.fn = fn
        self.source = source  # the function's text, when known: passes skip what it lacks
        self.info = info
        self.name = getattr(fn, "__name__", "<function>")
        self.namespace = dict(namespace if namespace is not None else getattr(fn, "__globals__", {}))
        self.closure = _closure_values(fn)
        self.namer = Namer.for_function(node, self.namespace, extra_reserved=("ag__",),
                                        source=source)


def may_contain(ctx, text):
    """Could the function's source hold `text` (e.g. ':=' or 'locals')? A cheap gate that
    lets a pass skip its walk of the tree; True when the source is not known."""
    source = getattr(ctx, "source", None)
    return source is None or text in source


def _closure_values(fn):
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is None:
        return {}
    out = {}
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # an empty cell: the nonlocal is not assigned yet
            pass
    return out


def name(id_, ctx=None):
    """A gast Name node (Load unless told)."""
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def walk_scope(node):
    """Like gast.walk over `node`'s children, but not into nested functions/classes/lambdas
    (and without context/operator leaves such as Load or Add)."""
    todo = traversal.children(node)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, SCOPE_NODES):
            todo.extend(traversal.children(n))


def find_outermost(root, wanted):
    """(parent, field, index, node) for each node under `root` for which `wanted(node)` is
    true and no ancestor's is; `index` is the position in a list field, else None.
    Classes and functions marked SKIP_PROCESSING are not entered (as Transformer.visit)."""
    found = []
    todo = [root]
    pop, push = todo.pop, todo.append
    child_fields = traversal.child_fields   # (no field of these holds a leaf)
    while todo:
        parent = pop()
        d = parent.__dict__
        for field in child_fields(parent.__class__):
            v = d.get(field)
            if v is None:
                continue
            if v.__class__ is list:
                for index, child in enumerate(v):
                    if not isinstance(child, gast.AST):
                        continue
                    if wanted(child):
                        found.append((parent, field, index, child))
                    elif child.__class__ not in _GUARDED or not _skipped(child):
                        push(child)
            elif isinstance(v, gast.AST):
                if wanted(v):
                    found.append((parent, field, None, v))
                elif v.__class__ not in _GUARDED or not _skipped(v):
                    push(v)
    return found


def rewrite_outermost(root, wanted, visit):
    """Replace each node that find_outermost(root, wanted) finds by visit(node)."""
    for parent, field, index, child in find_outermost(root, wanted):
        new = visit(child)
        if index is None:
            setattr(parent, field, new)
        else:
            getattr(parent, field)[index] = new


def _skipped(node):
    return node.__class__ is gast.ClassDef or anno.getanno(node, anno.Basic.SKIP_PROCESSING, False)


def statement_kinds(fn_node):
    """The classes of every statement under `fn_node`, nested functions and classes
    included."""
    body = fn_node.body if isinstance(fn_node.body, list) else []
    return {n.__class__ for n in traversal.statements(body)}


def contains(stmts, types):
    """True when a node of one of `types` is among `stmts` or under them, in this scope
    (nested functions, classes and lambdas excluded)."""
    for s in stmts:
        if isinstance(s, types):
            return True
        if isinstance(s, SCOPE_NODES):
            continue
        for n in walk_scope(s):
            if isinstance(n, types):
                return True
    return False


def is_generator(fn_node):
    """True when the function (not a nested one) contains yield / yield from / await."""
    return any(isinstance(n, (gast.Yield, gast.YieldFrom, gast.Await)) for n in walk_scope(fn_node))


def skip_generators(node):
    """Mark nested generator functions: converting their control flow would move their
    `yield`s into other functions, so they run as plain Python."""
    for n in traversal.walk(node, leaves=False):
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef)) and n is not node and is_generator(n):
            anno.setanno(n, anno.Basic.SKIP_PROCESSING, True)


_GUARDED = frozenset({gast.ClassDef, gast.FunctionDef, gast.AsyncFunctionDef})
_visit = traversal.NodeTransformer.visit


class Transformer(traversal.NodeTransformer):
    """A NodeTransformer that knows the context and visits statement blocks as lists.

    Built on autograph.source.traversal.NodeTransformer (gast's contract, faster): a pass
    whose visit_ methods are all for statements does not walk into expressions."""

    def __init__(self, ctx):
        self.ctx = ctx

    def visit(self, node):
        # class bodies run once, as Python, when the class is defined: left as written;
        # only functions carry SKIP_PROCESSING (skip_generators), so only they are looked up
        if node.__class__ in _GUARDED and _skipped(node):
            return node
        return _visit(self, node)

    def visit_block(self, stmts):
        """Visit a list of statements; a visit may return one node, a list, or None."""
        out = []
        for s in stmts:
            r = self.visit(s)
            if r is None:
                continue
            if isinstance(r, list):
                out.extend(r)
            else:
                out.append(r)
        return out


def run_analyses(node, ctx):
    """The annotations the control-flow and variables passes read (activity scopes and QNs,
    liveness, reaching definitions), computed for the current tree. Here, below both
    passes, since each may run them for the other."""
    from autograph.analysis import activity, cfg, liveness, reaching_definitions
    activity.resolve(node)  # also sets the QNs (anno.Basic.QN) of the symbols it meets
    cfgs = cfg.build_all(node, anno.getanno(node, anno.Static.FUNCTIONS))
    liveness.resolve(node, cfgs)
    reaching_definitions.resolve(node, cfgs)


def local_names(fn_node):
    """Names bound in the function itself: parameters, assignments, defs, imports."""
    names = set()
    args = fn_node.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            names.add(a.id)
    todo = list(fn_node.body) if isinstance(fn_node.body, list) else [fn_node.body]
    children = traversal.children
    while todo:
        n = todo.pop()
        cls = n.__class__
        if cls is gast.Name:
            if n.ctx.__class__ is gast.Store or n.ctx.__class__ is gast.Del:
                names.add(n.id)
            if n.annotation is None:
                continue   # (no child nodes)
        elif cls in _GUARDED:
            names.add(n.name)
            continue
        elif cls is gast.alias:
            names.add((n.asname or n.name).split(".")[0])
        elif cls is gast.Lambda:
            continue
        todo.extend(children(n))
    return names


class FunctionScopes(Transformer):
    """A pass over each function's own statements that knows the names the function binds
    itself (`self.locals`: rewriting a write of any other name would make it a local);
    nested async defs, classes and lambdas are left as written."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.locals = set()

    def visit_FunctionDef(self, node):
        saved, self.locals = self.locals, local_names(node)
        node.body = self.visit_block(node.body)
        self.locals = saved
        return node

    def _left_as_written(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _left_as_written
