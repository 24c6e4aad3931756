"""The converters' own walks (converters.base: local_names, find_outermost) read only the
fields that may hold nodes and test node classes by identity (they run for every statement
of every conversion): checked against plain reference walks over ast's iter_child_nodes,
on a function with every kind of statement and expression."""

import ast

import gast

from autograph.converters import base
from autograph.source import parser
from tests.source.test_traversal import _CODE, _EVERY_KIND


def _functions(source):
    tree = parser.parse_str(source)
    return [n for n in ast.walk(tree) if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef))]


def _reference_local_names(fn):
    names = set()
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            names.add(a.id)
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(n.name)
            continue
        if isinstance(n, gast.Lambda):
            continue
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            names.add(n.id)
        elif isinstance(n, gast.alias):
            names.add((n.asname or n.name).split(".")[0])
        todo.extend(ast.iter_child_nodes(n))
    return names


def test_local_names_match_a_reference_walk():
    fns = _functions(_CODE) + _functions(_EVERY_KIND)
    assert len(fns) == 3
    for fn in fns:
        assert base.local_names(fn) == _reference_local_names(fn), fn.name
    assert {"a", "b", "i", "inner", "group", "s", "w", "n", "C"} <= base.local_names(fns[1])


def _reference_outermost(root, wanted):
    out = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop,
                                  ast.boolop)):
                continue
            if wanted(child):
                out.append(child)
            elif not isinstance(child, gast.ClassDef):   # (class bodies are left as written)
                visit(child)
    visit(root)
    return out


def test_find_outermost_matches_a_reference_walk():
    for fn in _functions(_CODE) + _functions(_EVERY_KIND):
        for wanted in (lambda n: isinstance(n, gast.Call), lambda n: isinstance(n, gast.Name),
                       lambda n: isinstance(n, (gast.BinOp, gast.Compare, gast.Lambda))):
            found = base.find_outermost(fn, wanted)
            for parent, field, index, child in found:
                held = getattr(parent, field)
                assert (held[index] if index is not None else held) is child
            assert sorted(id(f[3]) for f in found) == sorted(
                id(n) for n in _reference_outermost(fn, wanted))
