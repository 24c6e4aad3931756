"""Annotations on AST nodes: one small, documented home for per-node facts.

Passes communicate by annotating gast nodes: the parser records where a node came from
(`Basic.ORIGIN`), `qual_names.resolve` records the symbol a Name/Attribute/Subscript denotes
(`Basic.QN`), the analyses record scopes and dataflow facts (`Static.*`). Annotations live in
a dict stored on the node under one private attribute, so they travel with the node (and are
copied by `copy.deepcopy`) but never reach the unparser.

Keys are Enum members; each member's value is its description, so `print(key.value)`
documents it.
"""

import enum

from autograph.source import traversal

_FIELD = "___autograph_anno"


class NoValue(enum.Enum):
    """Base of the key enums: repr shows the description, not a number."""

    def __repr__(self):
        return self.name

    # Members are singletons compared by identity: hash them by identity too, in C
    # (Enum's own __hash__ is Python code, and annotation lookups hash a key each time).
    __hash__ = object.__hash__


class Basic(NoValue):
    """Facts about a node that do not come from static analysis."""

    QN = "The qual_names.QN (symbol) that a Name, Attribute or Subscript node denotes."
    ORIGIN = ("The origin.LineLocation in the user's file this node came from; generated "
              "nodes inherit the ORIGIN of the user statement they replace.")
    SKIP_PROCESSING = "Converters leave this node (and its children) untouched."
    INDENT_BLOCK_REMAINDER = ("Statements that a converter moved into a nested block "
                              "(e.g. the rest of a loop body after a guarded continue).")
    EXTRA_LOOP_TEST = "An extra condition a converter adds to a loop's test (e.g. a break flag)."
    DIRECTIVES = "Per-statement directives from the user (e.g. loop options)."
    GENERATED = "True on nodes created by a converter rather than parsed from user code."
    TRUTH_TEST = ("True on an expression whose value is only tested for truth (the test of an "
                  "if, while or conditional expression, and the operands of and/or there).")


class Static(NoValue):
    """Facts computed by the analyses in autograph.analysis."""

    FUNCTIONS = ("On the node analysed by activity.resolve: ((function or lambda node, the "
                 "statement defining it), ...) for it and every function nested in it, outer first.")

    SCOPE = ("activity.Scope of a statement or expression: the symbols it reads, modifies, "
             "binds and deletes (nested statements included).")
    BODY_SCOPE = "activity.Scope of the body block of a compound statement (if/while/for/with/try/def)."
    ORELSE_SCOPE = "activity.Scope of the orelse block of an if/while/for/try."
    ITERATE_SCOPE = "activity.Scope of a for loop's target (the symbols each iteration binds)."
    NODE_SCOPE = ("activity.Scope of what a CFG node's own ast_node does: the whole of a simple "
                  "statement, the test of an if/while, iterable and target of a for, items of a "
                  "with, the binding of a def, the parameters of a function's arguments node.")
    COND_SCOPE = "activity.Scope of the test expression of an if/while (or an IfExp)."
    ARGS_SCOPE = "activity.Scope of a function's or lambda's parameters (params/bound)."
    FINALBODY_SCOPE = "activity.Scope of the finally block of a try statement."
    HANDLERS_SCOPE = "activity.Scope of the except handlers of a try statement, all together."
    LIVE_VARS_IN = "frozenset of QN live just before the statement runs (liveness)."
    LIVE_VARS_OUT = ("frozenset of QN live just after the statement (for a compound "
                     "statement: after the whole statement).")
    DEFINED_VARS_IN = ("frozenset of QN defined on every path that reaches the statement "
                       "(reaching definitions).")
    MAYBE_DEFINED_VARS_IN = "frozenset of QN defined on at least one path reaching the statement."


def _annos(node, create=False):
    try:
        annos = node.__dict__.get(_FIELD)  # much faster than getattr on a missing name
    except AttributeError:  # an object without a __dict__
        annos = getattr(node, _FIELD, None)
    if annos is None and create:
        annos = {}
        setattr(node, _FIELD, annos)
    return annos


_MISSING = object()


def getanno(node, key, default=_MISSING):
    """The annotation `key` of `node`; `default` if given and absent, else KeyError."""
    annos = _annos(node)
    if annos is not None:
        value = annos.get(key, _MISSING)
        if value is not _MISSING:
            return value
    if default is _MISSING:
        raise KeyError(f"{type(node).__name__} node has no annotation {key!r}")
    return default


def hasanno(node, key):
    annos = _annos(node)
    return annos is not None and key in annos


def setanno(node, key, value):
    _annos(node, create=True)[key] = value


def delanno(node, key):
    annos = _annos(node)
    if annos is not None:
        annos.pop(key, None)


def copyanno(from_node, to_node, key):
    """Copy annotation `key` from one node to another when the source has it."""
    if hasanno(from_node, key):
        setanno(to_node, key, getanno(from_node, key))


def keys(node):
    annos = _annos(node)
    return set(annos) if annos else set()


def dup(node, copy_map):
    """Copy annotations onto themselves under new keys: `copy_map` maps old key -> new key,
    for every node of the tree under `node`."""
    import gast
    for n in traversal.walk(node):
        for old, new in copy_map.items():
            if hasanno(n, old):
                setanno(n, new, getanno(n, old))


def clear(node, *which):
    """Remove annotations from every node under `node`: all of them, or only the keys
    given (e.g. `clear(tree, Static)` drops all static-analysis results, so the analyses
    can be re-run after a transformation)."""
    import gast
    for n in traversal.walk(node):
        annos = _annos(n)
        if not annos:
            continue
        if not which:
            annos.clear()
            continue
        for k in list(annos):
            for w in which:
                if k is w or (isinstance(w, type) and isinstance(k, w)):
                    del annos[k]
                    break


def copy_tree(node):
    """A copy of a gast tree (a node, a list of nodes, or a leaf value) with its
    annotations: each node's annotation dict is copied, the values are shared (they are
    immutable facts: QNs, LineLocations, analysis results). Several times faster than
    copy.deepcopy, which matters because templates copy every replacement."""
    if node.__class__ is list:
        return [copy_tree(n) for n in node]
    fields = getattr(node, "_fields", None)
    if fields is None:
        return node  # str, int, None, ...
    cls = node.__class__
    new = cls.__new__(cls)  # no __init__: every field is set below
    src = node.__dict__
    d = new.__dict__
    for field in fields:
        v = src.get(field)
        if v is not None and (v.__class__ is list or hasattr(v, "_fields")):
            v = copy_tree(v)
        d[field] = v
    for attr in node._attributes:
        if attr in src:
            d[attr] = src[attr]
    annos = src.get(_FIELD)
    if annos:
        d[_FIELD] = dict(annos)
    return new


def copy_origin(from_node, to_nodes, overwrite=False, skip=None):
    """Give every node under `to_nodes` (a node or a list of nodes) the ORIGIN of
    `from_node`, so generated code maps back to the user statement it replaces.
    Nodes that already have an ORIGIN (user code spliced into a template) keep theirs
    unless `overwrite`. The subtree of `skip` (a node known to have its origins) is left
    as it is."""
    if not hasanno(from_node, Basic.ORIGIN):
        return
    origin = getanno(from_node, Basic.ORIGIN)
    if not isinstance(to_nodes, (list, tuple)):
        to_nodes = [to_nodes]
    todo = list(to_nodes)
    while todo:
        n = todo.pop()
        if n is skip:
            continue
        if overwrite or not hasanno(n, Basic.ORIGIN):
            setanno(n, Basic.ORIGIN, origin)
        todo.extend(traversal.children(n))
