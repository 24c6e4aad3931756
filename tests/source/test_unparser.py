"""unparser.unparse writes the same text as ast.unparse(bridge.to_ast(node)): over real code
(standard library modules, every statement and expression in them), over the converted
code of the sample functions, and over the nodes it hands back to ast (f-strings, try,
match, type comments)."""

import ast
import functools
import importlib
import inspect
import os
import types

import gast
import pytest

from autograph import converters, errors
from autograph.source import bridge, parser, unparser

_STDLIB = os.path.dirname(ast.__file__)
_MODULES = ["ast.py", "dataclasses.py", "fractions.py",
            "functools.py", "statistics.py",
            "textwrap.py", "json/decoder.py", "test/test_grammar.py",
            "test/test_fstring.py", "test/test_unparse.py"]

_TRICKY = '''
"""module doc"""
async def f(a, /, b: int = 1, *args: "x", c, d=2, **kw: int) -> "r":
    """doc with "quotes" and \\\\ backslash
    and lines"""
    x: int = 1  # type: ignore
    (y): int
    a.b: int = 2
    try:
        pass
    except ValueError as e:
        raise
    except (A, B):
        raise X from e
    else:
        pass
    finally:
        del a, b[1]
    try:
        pass
    except* TypeError:
        pass
    async with a as (b, c), d:
        async for i, j in k:
            y = [z async for z in w if z if not z]
    match x:
        case [1, *rest] if rest: pass
        case {"k": v, **others}: pass
        case P(a, b=c) | None: pass
    while x:
        break
    else:
        continue
    for (a, b) in c: pass
    else: pass
    if a: pass
    elif b: pass
    elif c: pass
    else:
        if d: pass
    x = yield
    x = yield from y
    await z
    print((yield x))
    return lambda q=1, *r, s, **t: (q, r, s, t)
@d1
@d2.e(3)
class C(B, metaclass=M):
    """class doc"""
    x = f"{a!r:>{w}}" "b", b"c", ..., u"u", 1e400, -1e400j, float("nan"), (1,), ()
    del a[1:2, ::3], b.c, d[::], e[a:b], f[:, 1], g[()], h[(1,)], i[*j]
    global g
    nonlocal h
    assert x, "m"
    import a.b as c, d
    from ..e import (f as g, h)
    from . import i
    j = k = {**l, m: n}, {o for p in q}, {r: s for t, u in v}, (w for x in y), {*()}, {1}
    z = (a := 1), -(-1), not not a, ~a, +a, (-1) ** 2, 2 ** -1, a ** b ** c, (a ** b) ** c
    a = (1).real, 1 .real, 1.5.real, "s".upper, a if b else c, (a if b else c) if d else e
    a = a and b or c and (d or e), (a or b) and c, not (a and b), a < b < c, (a < b) < c
    a = a - (b - c), (a - b) - c, a @ b, a // b % c, a << b >> c, a | b ^ c & d
    a = f(*args, **kw, x=1), f(a for a in b), f((a for a in b), c), lambda: (yield)
    a = [*a, *b], (*a, *b), *a, *b
    a += 1; b //= 2; c **= 3; d @= e; f >>= g
    print(f"{x=}", f"{'a'}" f'{"b"}', f"{{}}", f"{x:{y}.{z}}", f"\\n{x!s}")
'''


@functools.lru_cache(maxsize=None)
def _trees():
    return dict(_stdlib_trees_uncached())


def _stdlib_trees():
    return list(_trees().items())


def _stdlib_trees_uncached():
    for name in _MODULES:
        path = os.path.join(_STDLIB, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                yield name, ast.parse(f.read())
    yield "<tricky>", ast.parse(_TRICKY)


def _reference(node):
    return ast.unparse(bridge.to_ast(node))


@pytest.mark.parametrize("name", [n for n, _ in _stdlib_trees()])
def test_real_code_unparses_as_ast_does(name):
    tree = _trees()[name]
    module = bridge.to_gast(tree)
    assert unparser.unparse(module) == _reference(module)
    # each top-level definition on its own (blank lines and indentation start afresh)
    for node in module.body:
        assert unparser.unparse(node) == _reference(node)


@pytest.mark.parametrize("name", ["<tricky>", "textwrap.py"])
def test_every_node_unparses_as_ast_does(name):
    # a node on its own sits in the loosest place: brackets come only from inside it
    module = bridge.to_gast(_trees()[name])
    n = 0
    for node in gast.walk(module):
        if isinstance(node, (gast.stmt, gast.expr)):
            assert unparser.unparse(node) == _reference(node), gast.dump(node)[:500]
            n += 1
    assert n > 200


def _sample_functions():
    names = ["tests.converters.samples", "tests.runtime.samples", "benchmarks.programs",
             "examples.collatz", "examples.fizzbuzz", "examples.dynamic_rnn",
             "examples.tanh_loop", "examples.square_if_positive", "examples.training_loop",
             "examples.python_vs_tensor_loops", "examples.retracing", "examples.variables"]
    for name in names:
        module = importlib.import_module(name)
        for value in vars(module).values():
            fn = getattr(value, "python_function", value)
            if isinstance(fn, types.FunctionType) and fn.__module__ == module.__name__:
                yield fn


def test_converted_sample_functions_unparse_as_ast_does():
    checked = 0
    for fn in _sample_functions():
        try:
            node, _, info = parser.parse_entity(fn)
        except errors.ConversionError:
            continue
        assert unparser.unparse(node) == _reference(node)
        node = converters.convert(node, converters.Context(fn, node, info))
        text = unparser.unparse(node)
        assert text == _reference(node), fn.__qualname__
        assert parser.unparse(node) == text
        checked += 1
    assert checked >= 40


def test_fallbacks_keep_indentation_and_precedence():
    # statements and expressions this module hands to ast sit inside ones it writes
    text = inspect.cleandoc('''
        def f(x):
            while x:
                try:
                    y = -f"{x}" if (match := 1) else [f"{y!r}" for y in x]
                except* E:
                    match x:
                        case 1:
                            def g():
                                return f"{x}".y
            x = (f"a" for _ in y), f"b"[1]
        ''')
    node = bridge.to_gast(ast.parse(text)).body[0]
    assert unparser.unparse(node) == _reference(node) == ast.unparse(ast.parse(text))


def test_lists_and_unknown_nodes():
    module = bridge.to_gast(ast.parse("x = 1\ny = f(x)"))
    assert parser.unparse(module.body) == "x = 1\ny = f(x)"
    args = module.body[1].value.keywords  # empty list
    assert parser.unparse(args) == ""
    alias = bridge.to_gast(ast.parse("import a as b")).body[0].names[0]
    assert unparser.unparse(alias) == _reference(alias) == "a as b"
