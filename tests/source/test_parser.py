"""parse_entity on every kind of entity; the parsed tree must unparse to the same code."""

import ast
import functools
import linecache
import textwrap

import gast
import hypothesis
import hypothesis.strategies
import pytest

from autograph import errors
from autograph.source import anno, parser


def _same_code(node, fn_source):
    """The unparsed tree equals the normalized original source."""
    return parser.unparse(node) == ast.unparse(ast.parse(textwrap.dedent(fn_source)))


def plain(x):
    y = x + 1
    return y * 2


def decorator(f):
    @functools.wraps(f)
    def wrapper(*a):
        return f(*a)
    return wrapper


@decorator
@functools.lru_cache(maxsize=None)
def decorated(x):
    return x - 1


class Thing:
    def method(self, x):
        if x > 0:
            return x
        return -x

    @staticmethod
    def static(a, b):
        return a * b


def outer(k):
    def nested(x):
        return x + k
    return nested


first, second = lambda x: x + 1, lambda x: x * 2
adder = lambda x: lambda y: x + y  # noqa: E731
two_args = [lambda a, b: a - b, lambda a: -a]


def test_plain_function():
    node, source, info = parser.parse_entity(plain)
    assert isinstance(node, gast.FunctionDef) and node.name == "plain"
    assert source == "def plain(x):\n    y = x + 1\n    return y * 2\n"
    assert _same_code(node, source)
    assert info.filename == __file__ and info.lineno == plain.__code__.co_firstlineno
    assert info.name == "plain" and info.col_offset == 0


def test_method_bound_and_unbound_are_dedented():
    for fn in (Thing.method, Thing().method):
        node, source, info = parser.parse_entity(fn)
        assert source.startswith("def method(self, x):")
        assert _same_code(node, source)
        assert info.col_offset == 4
        assert info.qualname == "Thing.method"


def test_staticmethod():
    node, _, info = parser.parse_entity(Thing.__dict__["static"])
    assert node.name == "static" and [a.id for a in node.args.args] == ["a", "b"]


def test_nested_function():
    node, source, _ = parser.parse_entity(outer(3))
    assert node.name == "nested"
    assert parser.unparse(node) == "def nested(x):\n    return x + k"


def test_decorated_function_has_decorators_stripped():
    # lru_cache/wraps expose the user's function through __wrapped__
    node, source, info = parser.parse_entity(decorated.__wrapped__.__wrapped__)
    assert node.name == "decorated" and node.decorator_list == []
    assert parser.unparse(node) == "def decorated(x):\n    return x - 1"
    assert info.lineno == decorated.__wrapped__.__wrapped__.__code__.co_firstlineno + 2


def test_two_lambdas_on_one_line():
    n1, s1, _ = parser.parse_entity(first)
    n2, s2, _ = parser.parse_entity(second)
    assert isinstance(n1, gast.Lambda) and isinstance(n2, gast.Lambda)
    assert (s1, s2) == ("lambda x: x + 1", "lambda x: x * 2")
    assert parser.unparse(n2) == "lambda x: x * 2"


def test_nested_lambdas():
    assert parser.parse_entity(adder)[1] == "lambda x: lambda y: x + y"
    assert parser.parse_entity(adder(1))[1] == "lambda y: x + y"


def test_lambdas_told_apart_by_arguments():
    assert parser.parse_entity(two_args[0])[1] == "lambda a, b: a - b"
    assert parser.parse_entity(two_args[1])[1] == "lambda a: -a"


def test_exec_code_with_linecache():
    code = "def from_exec(a):\n    while a > 1:\n        a -= 1\n    return a\n"
    filename = "<exec test_exec_code_with_linecache>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    ns = {}
    exec(compile(code, filename, "exec"), ns)
    node, source, info = parser.parse_entity(ns["from_exec"])
    assert source == code and info.filename == filename
    loc = anno.getanno(node.body[0].body[0], anno.Basic.ORIGIN)
    assert (loc.filename, loc.lineno, loc.source_line) == (filename, 3, "        a -= 1")


def test_exec_without_source_is_a_clear_error():
    ns = {}
    exec(compile("def lost(a):\n    return a\n", "<nowhere>", "exec"), ns)
    with pytest.raises(errors.ConversionError) as e:
        parser.parse_entity(ns["lost"])
    msg = str(e.value)
    assert "lost" in msg and "<nowhere>" in msg and "do_not_convert" in msg


def test_builtin_is_a_clear_error():
    with pytest.raises(errors.ConversionError) as e:
        parser.parse_entity(len)
    assert "len" in str(e.value) and "no Python source" in str(e.value)
    assert "do_not_convert" in str(e.value)


def test_every_node_has_origin_in_user_file():
    node, _, _ = parser.parse_entity(Thing.method)
    lines = {n.lineno: anno.getanno(n, anno.Basic.ORIGIN) for n in gast.walk(node)
             if isinstance(n, gast.stmt)}
    for n in gast.walk(node):
        if hasattr(n, "lineno"):
            loc = anno.getanno(n, anno.Basic.ORIGIN)
            assert loc.filename == __file__ and loc.lineno == n.lineno
            assert loc.function_name == "method"
        elif not isinstance(n, parser._SHARED_LEAVES):
            assert anno.hasanno(n, anno.Basic.ORIGIN), type(n).__name__
    assert anno.getanno(node.args, anno.Basic.ORIGIN).lineno == node.lineno
    src = open(__file__).read().splitlines()
    for lineno, loc in lines.items():
        assert loc.source_line == src[lineno - 1]


def test_origin_function_name_of_nested_def():
    def host():
        def inner():
            return 1
        return inner
    node, _, _ = parser.parse_entity(host)
    ret = node.body[0].body[0]
    assert anno.getanno(ret, anno.Basic.ORIGIN).function_name == "inner"
    assert anno.getanno(node.body[1], anno.Basic.ORIGIN).function_name == "host"


def test_parse_str_and_expression_round_trip():
    module = parser.parse_str("""
        if a:
            b = [c, d[1]]
        """)
    assert parser.unparse(module) == "if a:\n    b = [c, d[1]]"
    expr = parser.parse_expression("x if y else z")
    assert isinstance(expr, gast.IfExp) and parser.unparse(expr) == "x if y else z"
    with pytest.raises(ValueError):
        parser.parse_expression("a = 1")


def test_cell_with_magics_falls_back_to_parsing_the_block():
    # a notebook keeps the raw cell (with % magics) in linecache, and compiles a transformed
    # text with the same line numbers: the whole cell does not parse, the function does
    raw = "%timeit 1\nclass K:\n    def m(self, a):\n        return a + 1\n"
    compiled = "\nclass K:\n    def m(self, a):\n        return a + 1\n"
    filename = "<ipython-input-magic-test>"
    linecache.cache[filename] = (len(raw), None, raw.splitlines(True), filename)
    ns = {}
    exec(compile(compiled, filename, "exec"), ns)
    node, source, info = parser.parse_entity(ns["K"].m)
    assert parser.unparse(node) == "def m(self, a):\n    return a + 1"
    assert info.lineno == 3 and info.col_offset == 4
    assert anno.getanno(node.body[0], anno.Basic.ORIGIN).lineno == 4


def test_multiline_lambda():
    fn = (lambda a,
          b: a * b)
    node, source, info = parser.parse_entity(fn)
    assert parser.unparse(node) == "lambda a, b: a * b"
    assert info.lineno == fn.__code__.co_firstlineno


same_a, same_b = lambda x: x, lambda x: x


def test_identical_lambdas_on_one_line_by_column():
    assert parser.parse_entity(same_a)[2].col_offset == 17
    assert parser.parse_entity(same_b)[2].col_offset == 30


def test_defs_in_compound_statements_and_lambdas_found_by_line():
    code = textwrap.dedent('''
        class Box:
            if True:
                def in_if(self, v):
                    return v + 1
        try:
            def in_try(v):
                with open(__file__) as fh:
                    def in_with(w):
                        return w * 2
                return in_with
        except ValueError:
            pass
        match 1:
            case 1:
                def in_case(v):
                    return (lambda u: u - 1)(v)
        pair = [lambda a: a + 1, lambda a, b: a + b]
        ''')
    filename = "<exec test_defs_in_compound_statements>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    ns = {"__file__": __file__}
    exec(compile(code, filename, "exec"), ns)
    fns = [ns["Box"].in_if, ns["in_try"], ns["in_try"](0), ns["in_case"], *ns["pair"]]
    names = ["in_if", "in_try", "in_with", "in_case", "<lambda>", "<lambda>"]
    for fn, name in zip(fns, names):
        node, _, info = parser.parse_entity(fn)
        assert info.name == name and info.lineno == fn.__code__.co_firstlineno
        if name == "<lambda>":
            assert isinstance(node, gast.Lambda)
            assert [a.id for a in node.args.args] == list(fn.__code__.co_varnames[:fn.__code__.co_argcount])
        else:
            assert node.name == name


def _reference_defs(tree):
    """The file index's defs, found as ast.walk would (every non-expression node)."""
    import collections
    defs = {}
    todo = collections.deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            for line in {first, node.lineno}:
                defs.setdefault(line, []).append(node)
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.expr))
    return defs


def test_file_index_finds_the_defs_a_full_walk_finds():
    import glob
    import os
    text = '''
class A:
    @d
    def f(self):
        def g(): pass
        try:
            def h(): pass
        except E:
            async def i(): pass
        else:
            def j(): pass
        finally:
            def k(): pass
        match x:
            case 1:
                def l(): pass
        with a:
            for b in c:
                while d:
                    if e:
                        def m(): pass
                    else:
                        def n(): pass
                else:
                    def o(): pass
'''
    trees = [ast.parse(text)]
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))[:30]:
        with open(path, encoding="utf-8") as f:
            trees.append(ast.parse(f.read()))
    for tree in trees:
        assert parser._FileIndex(tree).defs == _reference_defs(tree)
    assert len(parser._FileIndex(trees[0]).defs) == 11  # f at two lines, g to o


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(hypothesis.strategies.lists(
    hypothesis.strategies.text(alphabet=" \ta\x0c\r", max_size=6), min_size=1, max_size=6),
    hypothesis.strategies.booleans())
def test_dedent_lines_is_textwrap_dedent(parts, last_newline):
    lines = [p + "\n" for p in parts]
    if not last_newline:
        lines[-1] = lines[-1][:-1]
    assert parser._dedent_lines(lines) == textwrap.dedent("".join(lines))


def test_dedent_lines_on_methods_and_strings():
    text = 'class A:\n    def f(self):\n        s = """\nflush left\n  """\n\n  \n        return s\n'
    lines = text.splitlines(True)
    for start in range(len(lines)):
        assert parser._dedent_lines(lines[start:]) == textwrap.dedent("".join(lines[start:]))
    assert parser._dedent_lines(["    def f():\n", "        pass\n"]) == "def f():\n    pass\n"


def test_lazy_find_def_finds_what_the_full_index_finds():
    import glob
    import os
    import random
    paths = sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))[:15]
    rng = random.Random(0)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        full = _reference_defs(tree)
        queries = [(line, n.name) for line, nodes in full.items() for n in nodes]
        queries += [(line, "no_such_function") for line in list(full)[:3]]
        rng.shuffle(queries)
        index = parser._FileIndex(tree)  # one lazy index answers them all, in any order
        for line, name in queries:
            expected = next((n for n in full.get(line, ()) if n.name == name), None)
            assert index.find_def(line, name) is expected, (path, line, name)
        assert index.defs == full
