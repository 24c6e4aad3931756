"""The fast ast <-> gast converters build the trees gast builds (fields, positions,
origins), and unparse to the same text."""

import ast
import glob
import os

import gast
import pytest

from autograph.source import anno, bridge, loader, origin, parser

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_FILES = sorted(glob.glob(os.path.join(_ROOT, "autograph", "source", "*.py")) +
                glob.glob(os.path.join(_ROOT, "autograph", "converters", "*.py")))
_FILES += [os.path.join(os.path.dirname(ast.__file__), "ast.py")]

_TRICKY = '''
async def f(a, /, b: int = 1, *args, c, d=2, **kw) -> "r":
    """doc"""
    x: int = 1  # type: ignore
    try:
        pass
    except ValueError as e:
        raise
    try:
        pass
    except* TypeError:
        pass
    async with a as (b, c):
        async for i, j in k:
            y = [z async for z in w if z]
    match x:
        case [1, *rest] if rest: pass
        case {"k": v, **others}: pass
        case P(a, b=c) | None: pass
    return lambda q=1, *r, s, **t: (q, r, s, t)
class C(B, metaclass=M):
    x = f"{a!r:>{w}}" "b", b"c", ...
    del a[1:2, ::3], b.c
    global g
'''


def _texts():
    for path in _FILES:
        with open(path, encoding="utf-8") as f:
            yield path, f.read()
    yield "<tricky>", _TRICKY


@pytest.mark.parametrize("path,text", list(_texts()), ids=lambda v: os.path.basename(str(v))[:30])
def test_to_gast_and_to_ast_match_gast(path, text):
    tree = ast.parse(text)
    theirs, ours = gast.ast_to_gast(tree), bridge.to_gast(tree)
    assert gast.dump(ours) == gast.dump(theirs)
    for a, b in zip(gast.walk(theirs), gast.walk(ours)):
        assert type(a) is type(b)
        assert set(a.__dict__) == set(b.__dict__)
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            assert getattr(a, attr, None) == getattr(b, attr, None)
    expected = gast.gast_to_ast(theirs)
    ast.fix_missing_locations(expected)
    assert ast.unparse(bridge.to_ast(theirs)) == ast.unparse(expected)
    assert parser.unparse(theirs) == ast.unparse(expected)


def test_origins_match_annotate_origins():
    lines = _TRICKY.splitlines(keepends=True)
    tree = ast.parse(_TRICKY)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        theirs = parser.annotate_origins(gast.ast_to_gast(node), "t.py", lines, "outer")
        ours = bridge.to_gast(node, ("t.py", lines, "outer"))
        pairs = list(zip(gast.walk(theirs), gast.walk(ours)))
        assert pairs
        for a, b in pairs:
            assert anno.getanno(a, anno.Basic.ORIGIN, None) == anno.getanno(b, anno.Basic.ORIGIN, None)
    # a nested function's nodes name it; the lambda's body names '<lambda>'
    fn = bridge.to_gast(tree.body[0], ("t.py", lines, "f"))
    lam = fn.body[-1].value
    assert anno.getanno(lam, anno.Basic.ORIGIN).function_name == "f"
    assert anno.getanno(lam.body, anno.Basic.ORIGIN).function_name == "<lambda>"
    handler_name = fn.body[2].handlers[0].name
    assert anno.getanno(handler_name, anno.Basic.ORIGIN).lineno == 7


def test_origin_map_is_built_on_first_use():
    calls = []

    def build():
        calls.append(1)
        return {3: "here"}

    omap = origin.register("<autograph test lazy map>", "a\nb\nc\n", build)
    assert calls == [] and "not built" in repr(omap)
    assert origin.lookup("<autograph test lazy map>", 3) == "here"
    assert origin.lookup("<autograph test lazy map>", 2) is None
    assert calls == [1]


def test_origin_map_build_failure_maps_nothing():
    def build():
        raise RuntimeError("boom")

    origin.register("<autograph test broken map>", "a\n", build)
    assert origin.lookup("<autograph test broken map>", 1) is None


def test_private_name_hint_never_misses_a_private_name():
    for text in ("self.__x", "__x_", "a.__b1", "__é", "(__q)", "___x"):
        assert loader._PRIVATE_HINT.search(text), text
    for text in ("__init__", "x__y", "___", "__a__", "'a'"):
        assert not loader._PRIVATE_HINT.search(text), text


@pytest.mark.parametrize("with_origin", [False, True])
def test_to_gast_shares_no_mutable_state_with_the_parsed_tree(with_origin):
    # parser caches a file's ast tree: the gast copy handed to the converters must own
    # every node and list it holds, so rewriting it leaves the cache as it was
    tree = ast.parse(_TRICKY + "\ndef g():\n    global a, b\n    nonlocal c\n    import d\n")
    py_objects = {id(x) for n in ast.walk(tree) for x in [n] + [
        v for v in n.__dict__.values() if isinstance(v, list)]}
    origin_arg = ("t.py", _TRICKY.splitlines(True), "m") if with_origin else None
    ours = bridge.to_gast(tree, origin_arg)
    for node in gast.walk(ours):
        assert id(node) not in py_objects
        for v in node.__dict__.values():
            if isinstance(v, list):
                assert id(v) not in py_objects, type(node).__name__
