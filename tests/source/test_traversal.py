"""The fast visitors walk and rewrite trees as ast.NodeVisitor / NodeTransformer do."""

import ast

import gast

from autograph.source import parser, traversal

_CODE = '''
def f(a, b=1, *c, d, **e):
    x = [i + 1 for i in a if i]
    if x and not b:
        y = lambda q: q * 2
        while a < b <= c:
            a += -1
            del x[0]
    else:
        try:
            pass
        except ValueError as err:
            raise
    for k, (m, *n) in e.items():
        print(k, m, n)
    return a.b[c] if d else y(a)
'''


def _tree():
    return parser.parse_str(_CODE)


def test_walk_yields_what_gast_walk_yields():
    tree = _tree()
    ours = list(traversal.walk(tree))
    theirs = list(gast.walk(tree))
    assert sorted(map(id, ours)) == sorted(map(id, theirs))
    # source order: parents first, children in field order
    names = [n.id for n in ours if isinstance(n, gast.Name)]
    assert names[:4] == ["a", "b", "c", "d"]
    without = list(traversal.walk(tree, leaves=False))
    assert not any(isinstance(n, traversal.LEAVES) for n in without)
    assert {id(n) for n in without} == {id(n) for n in ours if not isinstance(n, traversal.LEAVES)}


def test_children_are_iter_child_nodes_without_leaves():
    for node in gast.walk(_tree()):
        want = [c for c in gast.iter_child_nodes(node) if not isinstance(c, traversal.LEAVES)]
        assert traversal.children(node) == want


_EVERY_KIND = '''
import os.path as p, sys
from ..pkg import name as other, more
global_value: int = 1
async def g(x, /, y=2, *args, z: "int" = 3, **kw) -> None:
    global global_value
    async with x as (a, b), y:
        async for i in aiter(x):
            await i
    def inner():
        nonlocal y
        y = yield from range(3)
        yield y
    try:
        pass
    except* (ValueError, TypeError) as group:
        pass
    else:
        pass
    finally:
        del x, y
    match x:
        case [1, *rest] if rest:
            pass
        case {"k": v, **others}:
            pass
        case Point(x=0, y=yy) | None as whole:
            pass
        case _:
            pass
    s = f"{x!r:>{y}} {z=}" + rb"raw"
    w = {k: v for k, v in kw.items()} | {*args} | {i for i in args}
    v = x[1:2, ::3][...] if (n := len(args)) > 1 else -x @ y
    assert x is not y, "message"
    x.attr += 1; x[0] **= 2; x.b.c = 1 < 2 < 3
    @decorator(1)
    class C(Base, metaclass=Meta):
        attr: int
    return lambda q=1, *r, s, **t: (q, *r, s)
'''


def test_children_read_every_field_that_holds_nodes():
    """children() and walk(leaves=False) read only the fields that may hold nodes
    (traversal._CHILD_FIELDS): on trees of every kind of statement and expression, gast's
    and ast's, and on one of this package's modules, they find what iter_child_nodes and
    ast.walk find, less the leaves."""
    import autograph.converters.control_flow as control_flow
    sources = [_CODE, _EVERY_KIND] + [open(m.__file__).read() for m in (control_flow,)]
    checked = set()
    for source in sources:
        for tree in (parser.parse_str(source), ast.parse(source)):
            for node in ast.walk(tree):
                want = [c for c in ast.iter_child_nodes(node)
                        if not isinstance(c, traversal.LEAVES)]
                assert traversal.children(node) == want, ast.dump(node)[:200]
                checked.add(type(node).__name__)
            everything = [n for n in ast.walk(tree) if not isinstance(n, traversal.LEAVES)]
            assert sorted(map(id, traversal.walk(tree, leaves=False))) == \
                sorted(map(id, everything))
    assert {"Match", "MatchMapping", "TryStar", "JoinedStr", "FormattedValue", "ImportFrom",
            "AsyncWith", "NamedExpr", "Nonlocal", "AnnAssign", "ExceptHandler"} <= checked


class _Record(traversal.NodeVisitor):
    def __init__(self):
        self.seen = []

    def visit_Name(self, node):
        self.seen.append(node.id)
        self.generic_visit(node)

    def visit_Load(self, node):  # a leaf method: leaves are visited for this visitor
        self.seen.append("Load")


class _RecordAst(ast.NodeVisitor):
    def __init__(self):
        self.seen = []

    def visit_Name(self, node):
        self.seen.append(node.id)
        self.generic_visit(node)

    def visit_Load(self, node):
        self.seen.append("Load")


def test_visitor_order_and_leaf_methods_match_ast():
    ours, theirs = _Record(), _RecordAst()
    ours.visit(_tree())
    theirs.visit(_tree())
    assert ours.seen == theirs.seen and "Load" in ours.seen


class _Rewrite(traversal.NodeTransformer):
    """Renames names, drops `del`, doubles `pass`, replaces a field node."""

    def visit_Name(self, node):
        node.id = node.id.upper()
        return node

    def visit_Delete(self, node):
        return None

    def visit_Pass(self, node):
        return [gast.Pass(), gast.Pass()]

    def visit_Constant(self, node):
        return gast.Constant(value=node.value, kind=None) if node.value != 2 else \
            gast.Constant(value=3, kind=None)


class _RewriteAst(gast.NodeTransformer):
    visit_Name = _Rewrite.visit_Name
    visit_Delete = _Rewrite.visit_Delete
    visit_Pass = _Rewrite.visit_Pass
    visit_Constant = _Rewrite.visit_Constant


def test_transformer_matches_gast_transformer():
    ours = _Rewrite().visit(_tree())
    theirs = _RewriteAst().visit(_tree())
    assert parser.unparse(ours) == parser.unparse(theirs)
    text = parser.unparse(ours)
    assert "del" not in text and "Q * 3" in text and text.count("pass") == 2


class _Statements(traversal.NodeTransformer):
    def __init__(self):
        self.visited = []

    def visit(self, node):
        self.visited.append(type(node).__name__)
        return super().visit(node)

    def visit_While(self, node):
        return self.generic_visit(node)


class _Everything(_Statements):
    def generic_visit(self, node):  # its own generic_visit: it sees every node
        return super().generic_visit(node)


def test_statement_only_visitors_skip_expressions():
    visitor = _Statements()
    visitor.visit(_tree())
    assert "While" in visitor.visited and "AugAssign" in visitor.visited
    assert "ExceptHandler" in visitor.visited and "Raise" in visitor.visited
    assert not {"Name", "BinOp", "Lambda", "Compare"} & set(visitor.visited)
    everything = _Everything()
    everything.visit(_tree())
    assert {"Name", "BinOp", "Lambda", "Compare"} <= set(everything.visited)
    assert not {"Load", "Add"} & set(everything.visited)  # leaves: no method, not visited
