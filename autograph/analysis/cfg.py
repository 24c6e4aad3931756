"""Control flow graphs of functions, at statement granularity.

`build(fn_node)` returns the `Graph` of one gast FunctionDef or Lambda. Its nodes are:

- one node for the parameters (`ast_node` is the `arguments` node): the entry;
- one node per simple statement (assign, expr, return, break, continue, raise, del, ...);
- one node for the header of each compound statement: the If / While node (its test), the
  For node (take the next item, or leave), the With node (enter, bind `as`), each
  ExceptHandler (bind the exception), each Match and match_case; a For's target expression
  has a node of its own at the start of the body (binding it happens only with an item);
  the end of `except E as name:` has a `HandlerExit` node (Python unbinds the name there);
- one opaque node per nested FunctionDef / ClassDef (defining binds the name; the nested
  body gets its own Graph from `build_all`); lambdas and comprehensions are expressions.

A `try` has no node of its own. Edges approximate exceptions soundly: every statement of a
try body (and the point before it) may jump to each handler; the finally block is entered
from the normal ends, from the jumps (return/break/continue) that leave through it and from
anywhere an exception may be raised, and leaves towards each of those continuations. A
`with` is assumed not to swallow exceptions (as for nearly every context manager).

`Graph.stmt_next[stmt]` / `Graph.stmt_prev[stmt]` are the nodes control reaches right after
leaving / right before entering any statement (compound ones included), and
`Graph.stmt_nodes[stmt]` are the nodes inside it; the dataflow analyses use them to annotate
compound statements. The nodes of a statement are contiguous in `Graph.nodes`
(`Graph.stmt_span[stmt]` is their range, `Graph.stmt_entry(stmt)` the first), and the edges
leaving a statement are gathered from its children's, so that none of this costs more for
deeply nested statements (a statement's node set is made only when asked for).
"""

import collections.abc

import gast

from autograph.analysis.activity import Scope
from autograph.source import anno, parser, traversal
from autograph.source.qual_names import QN


class Node:
    """A CFG node: `ast_node` plus the `next` and `prev` node sets.

    `raises` are the handler / finally entry nodes an exception raised WHILE this node runs
    goes to (its writes may not have happened: liveness needs what they read live before
    the node). The `next` edges to them stand for exceptions raised after it."""

    __slots__ = ("ast_node", "next", "prev", "index", "raises")

    def __init__(self, ast_node, index):
        self.ast_node = ast_node
        self.next = set()
        self.prev = set()
        self.index = index
        self.raises = set()

    def __repr__(self):
        return f"Node({self.index}: {_describe(self.ast_node)})"


def _describe(ast_node):
    if isinstance(ast_node, gast.arguments):
        return "<args>"
    if isinstance(ast_node, (gast.If, gast.While)):
        head = "if" if isinstance(ast_node, gast.If) else "while"
        return f"{head} {_unparse(ast_node.test)}"
    if isinstance(ast_node, gast.For):
        return f"for {_unparse(ast_node.target)} in {_unparse(ast_node.iter)}"
    if isinstance(ast_node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
        return f"def {ast_node.name}"
    if isinstance(ast_node, gast.ExceptHandler):
        return "except"
    if isinstance(ast_node, HandlerExit):
        return f"<unbind {ast_node.handler.name.id}>"
    if isinstance(ast_node, gast.With):
        return "with"
    return _unparse(ast_node).split("\n")[0]


def _unparse(node):
    try:
        return parser.unparse(node)
    except Exception:  # noqa: BLE001 - only for repr
        return type(node).__name__


class HandlerExit:
    """A CFG node's ast_node for the end of `except E as name:`, where Python unbinds
    `name`. Its Static.NODE_SCOPE says it deletes the name."""

    def __init__(self, handler):
        self.handler = handler
        scope = Scope()
        qn = QN(handler.name.id)
        scope.modified.add(qn)
        scope.deleted.add(qn)
        anno.setanno(self, anno.Static.NODE_SCOPE, scope)


class Graph:
    """The CFG of one function. `entry` is the parameters node; `exit` the nodes after
    which the function returns normally; `error` those after which it may raise out."""

    def __init__(self, fn_node):
        self.fn_node = fn_node
        self.nodes = []
        self.entry = None
        self.exit = set()
        self.error = set()
        self.index = {}       # ast node -> its CFG Node
        self.stmt_span = {}   # statement -> (first, end): graph.nodes[first:end] are inside it
        self.stmt_nodes = _StmtNodes(self)  # statement -> frozenset of the CFG nodes inside it
        self.stmt_prev = {}
        self.stmt_next = {}
        # the statement of the enclosing function that defines this one (a def: itself; a
        # lambda: the statement it stands in); None for the outermost (set by build_all)
        self.owner = None

    def node_for(self, ast_node):
        return self.index[ast_node]

    def stmt_entry(self, stmt):
        """The first node built for `stmt` (its entry), or None if it has no node."""
        first, end = self.stmt_span[stmt]
        return self.nodes[first] if first < end else None

    def __repr__(self):
        lines = [f"Graph({_describe(self.fn_node)})"]
        for n in self.nodes:
            nxt = ", ".join(str(s.index) for s in sorted(n.next, key=lambda s: s.index))
            lines.append(f"  {n.index}: {_describe(n.ast_node)} -> [{nxt}]")
        return "\n".join(lines)


class _Loop:
    """An enclosing loop while its body is built: continue goes to `header`, breaks
    collect in `breaks` and join the code after the loop."""

    def __init__(self, header):
        self.header = header
        self.breaks = set()


class _Finally:
    """An enclosing try/finally while its body and handlers are built: jumps that cross
    it wait in `pending` as (from_nodes, kind, stack depth) until the finally block is
    built, then continue from its end."""

    def __init__(self):
        self.pending = []


class _StmtNodes(collections.abc.Mapping):
    """statement -> frozenset of its CFG nodes, made from Graph.stmt_span when looked up
    (making them all up front costs the sum of the statements' sizes: quadratic in depth)."""

    def __init__(self, graph):
        self._graph = graph

    def __getitem__(self, stmt):
        first, end = self._graph.stmt_span[stmt]
        return frozenset(self._graph.nodes[first:end])

    def __iter__(self):
        return iter(self._graph.stmt_span)

    def __len__(self):
        return len(self._graph.stmt_span)


class _Handlers:
    """An enclosing try body with except handlers: a raise inside stops there (the
    handler edges are added when the handlers are built)."""


class _Builder(traversal.NodeVisitor):
    def __init__(self, fn_node):
        self.graph = Graph(fn_node)
        self.leaves = set()
        self.stack = []
        self.children = {}   # statement -> the statements directly inside it, in order
        self._open = [[]]    # the children found so far of each statement being visited

    # -- plumbing --------------------------------------------------------------------------
    def add(self, ast_node):
        node = Node(ast_node, len(self.graph.nodes))
        self.graph.nodes.append(node)
        self.graph.index[ast_node] = node
        for leaf in self.leaves:
            leaf.next.add(node)
            node.prev.add(leaf)
        self.leaves = {node}
        return node

    def connect(self, sources, target):
        for s in sources:
            s.next.add(target)
            target.prev.add(s)

    def jump(self, sources, kind, depth=None):
        """Control leaves `sources` by return/break/continue/raise: find where it goes,
        through the finally blocks it crosses."""
        depth = len(self.stack) if depth is None else depth
        for i in range(depth - 1, -1, -1):
            frame = self.stack[i]
            if isinstance(frame, _Finally):
                frame.pending.append((set(sources), kind, i))
                return
            if isinstance(frame, _Handlers) and kind == "raise":
                return  # the try's handlers take it (edges are added by visit_Try)
            if isinstance(frame, _Loop) and kind in ("break", "continue"):
                if kind == "break":
                    frame.breaks |= set(sources)
                else:
                    self.connect(sources, frame.header)
                return
        if kind == "raise":
            self.graph.error |= set(sources)
        else:
            self.graph.exit |= set(sources)

    def block(self, stmts):
        for stmt in stmts:
            self.visit(stmt)

    def visit(self, node):
        if not isinstance(node, (gast.stmt, gast.ExceptHandler, gast.match_case)):
            return
        first = len(self.graph.nodes)
        self._open.append([])
        super().visit(node)
        self.children[node] = self._open.pop()
        self._open[-1].append(node)
        self.graph.stmt_span[node] = (first, len(self.graph.nodes))

    def generic_visit(self, node):  # simple statements
        self.add(node)

    # -- jumps -----------------------------------------------------------------------------
    def visit_Return(self, node):
        self.jump({self.add(node)}, "return")
        self.leaves = set()

    def visit_Break(self, node):
        self.jump({self.add(node)}, "break")
        self.leaves = set()

    def visit_Continue(self, node):
        self.jump({self.add(node)}, "continue")
        self.leaves = set()

    def visit_Raise(self, node):
        self.jump({self.add(node)}, "raise")
        self.leaves = set()

    # -- compound statements ---------------------------------------------------------------
    def visit_If(self, node):
        head = self.add(node)
        self.block(node.body)
        after_body = self.leaves
        self.leaves = {head}
        self.block(node.orelse)
        self.leaves |= after_body

    def _loop(self, node):
        head = self.add(node)
        loop = _Loop(head)
        self.stack.append(loop)
        if isinstance(node, (gast.For, gast.AsyncFor)):
            # the target is bound only when there is an item: its own node starts the body
            self.add(node.target)
        self.block(node.body)
        self.connect(self.leaves, head)
        self.stack.pop()
        self.leaves = {head}
        self.block(node.orelse)  # runs when the test fails / the iterator is exhausted
        self.leaves |= loop.breaks

    visit_While = _loop
    visit_For = _loop
    visit_AsyncFor = _loop

    def visit_With(self, node):
        self.add(node)
        self.block(node.body)

    visit_AsyncWith = visit_With

    def visit_FunctionDef(self, node):
        self.add(node)  # opaque: its body has its own graph

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_ClassDef = visit_FunctionDef

    def visit_Match(self, node):
        head = self.add(node)
        ends = set()
        for case in node.cases:
            self.leaves = {head}
            self.visit(case)
            ends |= self.leaves
        self.leaves = ends | {head}  # no case matched

    def visit_match_case(self, node):
        self.add(node)
        self.block(node.body)

    def visit_Try(self, node):
        before = set(self.leaves)
        fin = _Finally() if node.finalbody else None
        if fin is not None:
            self.stack.append(fin)
        handlers_frame = _Handlers() if node.handlers else None
        if handlers_frame is not None:
            self.stack.append(handlers_frame)
        first = len(self.graph.nodes)
        self.block(node.body)
        body_nodes = set(self.graph.nodes[first:])
        if handlers_frame is not None:
            self.stack.pop()
        first_orelse = len(self.graph.nodes)
        self.block(node.orelse)
        orelse_nodes = set(self.graph.nodes[first_orelse:])
        normal = set(self.leaves)
        may_raise = before | body_nodes  # where an exception may leave the body from
        first_handler = len(self.graph.nodes)
        for handler in node.handlers:
            self.leaves = set(may_raise)
            self.visit(handler)
            normal |= self.leaves
        handler_nodes = set(self.graph.nodes[first_handler:])
        for n in body_nodes:  # an exception raised while n runs goes to a handler
            n.raises.update(self.graph.index[h] for h in node.handlers)
        if fin is None:
            self.leaves = normal
            return
        self.stack.pop()
        # the finally block is entered normally, by jumps crossing it, and by exceptions
        raising = (may_raise | orelse_nodes | handler_nodes |
                   {s for srcs, k, _ in fin.pending if k == "raise" for s in srcs})
        entry_sources = normal | raising | {s for srcs, _, _ in fin.pending for s in srcs}
        self.leaves = entry_sources
        first_final = len(self.graph.nodes)
        self.block(node.finalbody)
        for n in body_nodes | orelse_nodes | handler_nodes:
            n.raises.add(self.graph.nodes[first_final])
        ends = set(self.leaves)
        kinds = {(k, i) for _, k, i in fin.pending}
        for kind, depth in sorted(kinds, key=lambda kd: kd[0]):
            self.jump(ends, kind, depth)
        if raising:
            self.jump(ends, "raise", len(self.stack))
        self.leaves = ends if normal else set()

    visit_TryStar = visit_Try

    def visit_ExceptHandler(self, node):
        self.add(node)
        self.block(node.body)
        if node.name is not None:
            self.add(HandlerExit(node))

    # -- driver ----------------------------------------------------------------------------
    def build(self):
        fn = self.graph.fn_node
        self.graph.entry = self.add(fn.args)
        if isinstance(fn, gast.Lambda):
            self.add(fn.body)
        else:
            self.block(fn.body)
        self.graph.exit |= self.leaves  # falling off the end returns None
        g = self.graph
        for stmt, (first, end) in g.stmt_span.items():   # children before their parents
            kids = self.children[stmt]
            nxt, prev = set(), set()
            for n in self._own_nodes(first, end, kids):
                nxt.update(n.next)
                prev.update(n.prev)
            for kid in kids:   # what leaves a child and is not inside this statement
                nxt.update(g.stmt_next[kid])
                prev.update(g.stmt_prev[kid])
            g.stmt_next[stmt] = frozenset(n for n in nxt if not first <= n.index < end)
            g.stmt_prev[stmt] = frozenset(n for n in prev if not first <= n.index < end)
        return g

    def _own_nodes(self, first, end, kids):
        """The nodes of graph.nodes[first:end] that no statement in `kids` holds."""
        nodes, spans, at = self.graph.nodes, self.graph.stmt_span, first
        for kid in kids:
            kid_first, kid_end = spans[kid]
            yield from nodes[at:kid_first]
            at = max(at, kid_end)
        yield from nodes[at:end]


def build(fn_node):
    """The CFG of one gast FunctionDef or Lambda (nested functions stay opaque)."""
    if not isinstance(fn_node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
        raise TypeError(f"cfg.build needs a FunctionDef or Lambda, got {type(fn_node).__name__}")
    return _Builder(fn_node).build()


def build_all(fn_node, functions=None):
    """{function node: Graph} for `fn_node` and every function and lambda nested in it,
    outer functions first; each nested one's Graph.owner is the statement defining it.
    `functions`: those (function, defining statement) pairs when already known (activity's
    Static.FUNCTIONS of the same, unchanged tree); else a walk finds them."""
    graphs = {}
    if functions is not None:
        for node, owner in functions:
            graph = graphs[node] = build(node)
            if node is not fn_node:
                graph.owner = owner
        return graphs
    todo = [(fn_node, None)]   # (node, the statement it stands in)
    while todo:  # depth first, parents before the functions nested in them
        node, stmt = todo.pop()
        if isinstance(node, _FUNCTIONS):
            graph = graphs[node] = build(node)
            if node is not fn_node:
                graph.owner = node if isinstance(node, gast.stmt) else stmt
        for child in reversed(traversal.children(node)):
            todo.append((child, child if isinstance(child, gast.stmt) else stmt))
    return graphs


_FUNCTIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)
