"""Liveness: which symbols may be read later, before being overwritten.

`resolve(fn_node, cfgs)` requires activity.resolve (Static.NODE_SCOPE on CFG nodes) and the
graphs of cfg.build_all; it adds, for every function in `cfgs`:

- Static.LIVE_VARS_IN on each statement: symbols live just before it runs (for a compound
  statement, at its entry: the test of an if/while, the iterate of a for);
- Static.LIVE_VARS_OUT on each statement: symbols live right after control leaves it (for a
  compound statement: after the whole statement, on every way out of it).

Values are frozensets of QN. A backward may-analysis: live_in = reads | (live_out - writes),
where writing `a` also ends the liveness of `a.b` and `a[i]`, and `del a` reads `a` (it fails
when `a` is unbound) before ending it. Nodes after which the function
returns have nothing live after them. A nested def reads its free variables where it is
defined; and wherever a local name bound to a nested function or lambda is live, so are
the locals it reads (calling it reads them): `g = lambda: a` ... `g()` keeps `a` live.
"""

import collections

import gast

from autograph.source import anno, traversal
from autograph.source.qual_names import QN


def _gen_kill(node):
    scope = anno.getanno(node.ast_node, anno.Static.NODE_SCOPE, None)
    if scope is None:
        return frozenset(), frozenset()
    # `del x` needs x bound (it uses the binding) and then ends it
    # a `:=` Python may skip (in a later operand of and/or) does not end a value's life
    return frozenset(scope.read | scope.deleted), frozenset(scope.modified - scope.lazy)


def _transfer(gen, kill, live_out):
    if not kill:
        return gen | live_out
    kept = {q for q in live_out if q not in kill and not (q.owner_set & kill)}
    return gen | kept


def analyze(graph):
    """{cfg node: (live_in, live_out)} for one graph, by iteration to a fixed point."""
    closures = closure_reads(graph)
    gen_kill = {}
    for n in graph.nodes:
        gen, kill = _gen_kill(n)
        gen_kill[n] = (_with_closures(gen, closures), kill)
    live_in = {n: frozenset() for n in graph.nodes}
    live_out = {n: frozenset() for n in graph.nodes}
    worklist = collections.deque(reversed(graph.nodes))
    queued = set(worklist)
    while worklist:
        n = worklist.popleft()
        queued.discard(n)
        out = frozenset().union(*(live_in[s] for s in n.next)) if n.next else frozenset()
        out = _with_closures(out, closures)
        gen, kill = gen_kill[n]
        new_in = frozenset(_transfer(gen, kill, out))
        for target in n.raises:  # raised midway: what the handler reads was never overwritten
            new_in |= live_in[target]
        live_out[n] = out
        if new_in != live_in[n]:
            live_in[n] = new_in
            for p in n.prev:
                if p not in queued:
                    worklist.append(p)
                    queued.add(p)
    return {n: (live_in[n], live_out[n]) for n in graph.nodes}


def closure_reads(graph):
    """{QN of a local name bound to a nested function or lambda: the locals of this
    function that it reads}. Calling a closure reads them, so wherever the name is live,
    they are live too (`g = lambda: a` ... `g()` needs `a`)."""
    fn = graph.fn_node
    body = anno.getanno(fn, anno.Static.BODY_SCOPE, None)
    args = anno.getanno(fn, anno.Static.ARGS_SCOPE, None)
    if body is None:
        return {}
    local = set(body.local_names) | (set(args.params) if args is not None else set())
    reads = {}

    def add(name, closure):
        inner = anno.getanno(closure, anno.Static.BODY_SCOPE, None)
        if inner is not None:
            reads.setdefault(QN(name), set()).update(q for q in inner.free if q.root in local)

    # both kinds of binding are statements: the walk need not enter expressions; a nested
    # def's own closures belong to its own graph
    functions = (gast.FunctionDef, gast.AsyncFunctionDef)
    body = fn.body if isinstance(fn.body, list) else []
    for node in traversal.statements(body, stop=functions):
        if isinstance(node, functions):
            add(node.name, node)
        elif (isinstance(node, gast.Assign) and isinstance(node.value, gast.Lambda)
                and len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)):
            add(node.targets[0].id, node.value)
    return {k: frozenset(v) for k, v in reads.items() if v}


def _with_closures(live, closures):
    """`live` plus what the live closures read (transitively)."""
    if not closures:
        return live
    out = set(live)
    todo = [q for q in live if q in closures]
    while todo:
        for q in closures[todo.pop()]:
            if q not in out:
                out.add(q)
                if q in closures:
                    todo.append(q)
    return frozenset(out)


def _annotate(graph, facts):
    for stmt in graph.stmt_span:
        entry = graph.stmt_entry(stmt)   # the first node built for it
        if entry is None:
            continue
        anno.setanno(stmt, anno.Static.LIVE_VARS_IN, facts[entry][0])
        after = graph.stmt_next[stmt]
        out = frozenset().union(*(facts[s][0] for s in after)) if after else frozenset()
        anno.setanno(stmt, anno.Static.LIVE_VARS_OUT, out)


def resolve(fn_node, cfgs):
    """Annotate LIVE_VARS_IN / LIVE_VARS_OUT on the statements of every function in
    `cfgs` ({function node: cfg.Graph}, from cfg.build_all(fn_node)). Returns fn_node."""
    for graph in cfgs.values():
        _annotate(graph, analyze(graph))
    return fn_node
