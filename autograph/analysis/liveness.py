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
defined, and since it may be called anywhere later (even after a return), the locals that
nested functions and lambdas read are live at every statement.
"""

import gast

from autograph.source import anno


def _gen_kill(node):
    scope = anno.getanno(node.ast_node, anno.Static.NODE_SCOPE, None)
    if scope is None:
        return frozenset(), frozenset()
    # `del x` needs x bound (it uses the binding) and then ends it
    return frozenset(scope.read | scope.deleted), frozenset(scope.modified)


def _transfer(gen, kill, live_out):
    if not kill:
        return gen | live_out
    kept = {q for q in live_out if q not in kill and not (q.owner_set & kill)}
    return gen | kept


def analyze(graph):
    """{cfg node: (live_in, live_out)} for one graph, by iteration to a fixed point."""
    gen_kill = {n: _gen_kill(n) for n in graph.nodes}
    live_in = {n: frozenset() for n in graph.nodes}
    live_out = {n: frozenset() for n in graph.nodes}
    worklist = list(reversed(graph.nodes))
    queued = set(worklist)
    while worklist:
        n = worklist.pop(0)
        queued.discard(n)
        out = frozenset().union(*(live_in[s] for s in n.next)) if n.next else frozenset()
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


def captured_names(graph):
    """Locals of the graph's function that a nested function or lambda reads: it may be
    called at any later point (or after returning), so they count as live everywhere."""
    fn = graph.fn_node
    body = anno.getanno(fn, anno.Static.BODY_SCOPE, None)
    args = anno.getanno(fn, anno.Static.ARGS_SCOPE, None)
    if body is None:
        return frozenset()
    local = set(body.local_names) | (set(args.params) if args is not None else set())
    captured = set()
    for node in _nested_functions(fn):
        inner = anno.getanno(node, anno.Static.BODY_SCOPE, None)
        if inner is not None:
            captured |= {q for q in inner.free if q.root in local}
    return frozenset(captured)


def _nested_functions(fn):
    """Functions and lambdas defined directly or deeper inside `fn` (not `fn` itself)."""
    todo = list(gast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
            yield node
        todo.extend(gast.iter_child_nodes(node))


def _annotate(graph, facts, always=frozenset()):
    for stmt, inside in graph.stmt_nodes.items():
        if not inside:
            continue
        entry = min(inside, key=lambda n: n.index)  # the first node built is the entry
        anno.setanno(stmt, anno.Static.LIVE_VARS_IN, facts[entry][0])
        after = graph.stmt_next[stmt]
        out = frozenset().union(*(facts[s][0] for s in after)) if after else frozenset()
        anno.setanno(stmt, anno.Static.LIVE_VARS_OUT, out | always)


def resolve(fn_node, cfgs):
    """Annotate LIVE_VARS_IN / LIVE_VARS_OUT on the statements of every function in
    `cfgs` ({function node: cfg.Graph}, from cfg.build_all(fn_node)). Returns fn_node."""
    for graph in cfgs.values():
        facts = analyze(graph)
        captured = captured_names(graph)
        if captured:
            facts = {n: (i | captured, o | captured) for n, (i, o) in facts.items()}
        _annotate(graph, facts, captured)
    return fn_node
