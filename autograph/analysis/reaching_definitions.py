"""Reaching definitions: which symbols are defined on the paths reaching a statement.

`resolve(fn_node, cfgs)` requires activity.resolve (Static.NODE_SCOPE, ARGS_SCOPE) and the
graphs of cfg.build_all; it adds on each statement of every function in `cfgs`:

- Static.DEFINED_VARS_IN: symbols defined on EVERY path that reaches the statement;
- Static.MAYBE_DEFINED_VARS_IN: symbols defined on SOME path reaching it.

Values are frozensets of QN (simple and composite: `a.b = 1` defines `a.b`). Parameters are
defined at the entry. A nested function or lambda starts with its parameters, its own name
(recursion) and what is defined on every path to where it is defined; other names of the
enclosing function are in neither set inside it, like globals (it may run much later). `del x` undefines
`x` (and `x.y`, `x[i]`). Converters use the difference between the two sets to find
variables that are undefined on some path (e.g. assigned in only one branch of an if).
"""

import collections

import gast

from autograph.source import anno
from autograph.source.qual_names import QN



def _gen_del(node):
    scope = anno.getanno(node.ast_node, anno.Static.NODE_SCOPE, None)
    if scope is None:
        return frozenset(), frozenset()
    return frozenset(scope.modified - scope.deleted), frozenset(scope.deleted)


def _apply(defined, gen, deleted):
    if deleted:
        defined = {q for q in defined if q not in deleted and not (q.owner_set & deleted)}
    return frozenset(defined) | gen


def analyze(graph, initial=frozenset()):
    """{cfg node: (must_in, may_in)} for one graph; `initial` is defined at the entry.

    Must-sets start at the universe of all symbols (the greatest fixed point), may-sets
    empty; a node no path reaches has nothing defined."""
    facts = {n: _gen_del(n) for n in graph.nodes}
    universe = frozenset(initial).union(*(g for g, _ in facts.values()))
    must_out = {n: universe for n in graph.nodes}
    may_out = {n: frozenset() for n in graph.nodes}
    must_in = {n: frozenset() for n in graph.nodes}
    may_in = {n: frozenset() for n in graph.nodes}
    worklist = collections.deque(graph.nodes)
    queued = set(worklist)
    while worklist:
        n = worklist.popleft()
        queued.discard(n)
        if n is graph.entry:
            m_in = y_in = frozenset(initial)
        elif n.prev:
            m_in = frozenset.intersection(*(must_out[p] for p in n.prev))
            y_in = frozenset().union(*(may_out[p] for p in n.prev))
        else:
            m_in = y_in = frozenset()
        must_in[n], may_in[n] = m_in, y_in
        gen, deleted = facts[n]
        new_must, new_may = _apply(m_in, gen, deleted), _apply(y_in, gen, deleted)
        if new_must != must_out[n] or new_may != may_out[n]:
            must_out[n], may_out[n] = new_must, new_may
            for s in n.next:
                if s not in queued:
                    worklist.append(s)
                    queued.add(s)
    return {n: (must_in[n], may_in[n]) for n in graph.nodes}


def _annotate(graph, facts):
    for stmt in graph.stmt_span:
        entry = graph.stmt_entry(stmt)
        if entry is None:
            continue
        must, may = facts[entry]
        anno.setanno(stmt, anno.Static.DEFINED_VARS_IN, must)
        anno.setanno(stmt, anno.Static.MAYBE_DEFINED_VARS_IN, may)


def resolve(fn_node, cfgs):
    """Annotate DEFINED_VARS_IN / MAYBE_DEFINED_VARS_IN on the statements of every
    function in `cfgs` (from cfg.build_all(fn_node)), outer functions first. Returns fn_node."""
    for fn, graph in cfgs.items():
        initial = set()
        owner = graph.owner
        if owner is not None and anno.hasanno(owner, anno.Static.DEFINED_VARS_IN):
            initial |= anno.getanno(owner, anno.Static.DEFINED_VARS_IN)
            if isinstance(fn, (gast.FunctionDef, gast.AsyncFunctionDef)):
                initial.add(QN(fn.name))
        args = anno.getanno(fn, anno.Static.ARGS_SCOPE, None)
        if args is not None:
            initial |= set(args.params)
        _annotate(graph, analyze(graph, frozenset(initial)))
    return fn_node
