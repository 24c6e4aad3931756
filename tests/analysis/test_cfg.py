import gast
import pytest

from autograph.analysis import cfg
from autograph.source import parser

from tests.analysis.helpers import stmt


def graph_of(code):
    import textwrap
    fn = parser.parse_str(textwrap.dedent(code)).body[0]
    return fn, cfg.build(fn)


def edges(graph):
    """{description of node: sorted descriptions of its successors}."""
    def d(n):
        return cfg._describe(n.ast_node)
    return {d(n): sorted(d(s) for s in n.next) for n in graph.nodes}


def test_if_elif_else_and_return():
    fn, g = graph_of("""
        def f(x):
            if x > 0:
                y = 1
            elif x < 0:
                return -1
            else:
                y = 2
            return y
        """)
    assert edges(g) == {
        "<args>": ["if x > 0"],
        "if x > 0": ["if x < 0", "y = 1"],
        "y = 1": ["return y"],
        "if x < 0": ["return -1", "y = 2"],
        "return -1": [],
        "y = 2": ["return y"],
        "return y": [],
    }
    assert {cfg._describe(n.ast_node) for n in g.exit} == {"return -1", "return y"}
    assert g.entry.ast_node is fn.args


def test_while_with_break_continue_else():
    fn, g = graph_of("""
        def f(i):
            while i < 10:
                if i == 5:
                    break
                i += 1
                if i == 3:
                    continue
                i *= 2
            else:
                i = -1
            return i
        """)
    assert edges(g) == {
        "<args>": ["while i < 10"],
        "while i < 10": ["i = -1", "if i == 5"],
        "if i == 5": ["break", "i += 1"],
        "break": ["return i"],
        "i += 1": ["if i == 3"],
        "if i == 3": ["continue", "i *= 2"],
        "continue": ["while i < 10"],
        "i *= 2": ["while i < 10"],
        "i = -1": ["return i"],
        "return i": [],
    }
    loop = stmt(fn, "while i < 10:")
    assert {cfg._describe(n.ast_node) for n in g.stmt_next[loop]} == {"return i"}
    assert {cfg._describe(n.ast_node) for n in g.stmt_prev[loop]} == {"<args>"}


def test_for_loop_header_is_revisited():
    _, g = graph_of("""
        def f(xs):
            t = 0
            for x in xs:
                t += x
            return t
        """)
    # binding the target is a node of its own: the loop may end without binding it
    assert edges(g)["for x in xs"] == ["return t", "x"]
    assert edges(g)["x"] == ["t += x"]
    assert edges(g)["t += x"] == ["for x in xs"]


def test_try_except_finally_and_return_through_finally():
    fn, g = graph_of("""
        def f(x):
            try:
                a = g(x)
                return a
            except ValueError:
                a = 0
            finally:
                done = 1
            return a + done
        """)
    e = edges(g)
    # every statement of the try body (and the point before it) may raise into the handler
    assert e["<args>"] == ["a = g(x)", "done = 1", "except"]
    assert e["a = g(x)"] == ["done = 1", "except", "return a"]
    assert e["except"] == ["a = 0", "done = 1"]
    # the return goes through the finally, which then either returns or falls through
    assert e["return a"] == ["done = 1", "except"]  # computing the value may raise too
    assert e["done = 1"] == ["return a + done"]
    finally_node = g.index[stmt(fn, "done = 1")]
    assert finally_node in g.exit and finally_node in g.error


def test_break_inside_try_finally_in_loop():
    fn, g = graph_of("""
        def f(n):
            while n:
                try:
                    if n == 2:
                        break
                    n -= 1
                finally:
                    log = n
            return n
        """)
    e = edges(g)
    assert e["break"] == ["log = n"]
    assert e["log = n"] == ["return n", "while n"]  # loop goes on, or the break leaves it


def test_nested_functions_and_lambdas_are_opaque_with_their_own_graphs():
    fn, g = graph_of("""
        def f(x):
            def inner(y):
                if y:
                    return y
                return 0
            h = lambda z: z + 1
            return inner(h(x))
        """)
    assert edges(g) == {"<args>": ["def inner"], "def inner": ["h = lambda z: z + 1"],
                        "h = lambda z: z + 1": ["return inner(h(x))"], "return inner(h(x))": []}
    graphs = cfg.build_all(fn)
    kinds = sorted(type(k).__name__ + ":" + getattr(k, "name", "lambda") for k in graphs)
    assert kinds == ["FunctionDef:f", "FunctionDef:inner", "Lambda:lambda"]
    inner = stmt(fn, "def inner(y):")
    assert edges(graphs[inner])["if y"] == ["return 0", "return y"]
    lam = next(k for k in graphs if isinstance(k, gast.Lambda))
    assert [cfg._describe(n.ast_node) for n in graphs[lam].nodes] == ["<args>", "z + 1"]


def test_with_raise_and_dead_code():
    _, g = graph_of("""
        def f(m):
            with m as r:
                raise ValueError(r)
                dead = 1
            return 0
        """)
    e = edges(g)
    assert e["with"] == ["raise ValueError(r)"] and e["raise ValueError(r)"] == []
    assert e["dead = 1"] == ["return 0"]
    assert not g.index[g.nodes[3].ast_node].prev  # nothing reaches dead code
    assert {cfg._describe(n.ast_node) for n in g.error} == {"raise ValueError(r)"}


def test_build_rejects_non_functions():
    with pytest.raises(TypeError):
        cfg.build(parser.parse_str("x = 1"))


def test_match_statement():
    fn, g = graph_of("""
        def f(cmd):
            match cmd:
                case ("go", where):
                    out = where
                case _:
                    out = None
            return out
        """)
    e = edges(g)
    heads = [n for n in g.nodes if isinstance(n.ast_node, gast.match_case)]
    assert len(heads) == 2
    match_node = g.index[fn.body[0]]
    assert set(match_node.next) == set(heads) | {g.index[fn.body[1]]}
    assert e["out = where"] == ["return out"] and e["out = None"] == ["return out"]
