"""templates.replace: placeholders become names, expressions, spliced statements and lists."""

import gast
import pytest

from autograph.source import anno, parser, templates
from autograph.source.origin import LineLocation
from autograph.source.qual_names import QN


def _code(nodes):
    return parser.unparse(nodes)


def test_loop_body_function_template():
    stmts = parser.parse_str("x = x * 2\ni += 1").body
    out = templates.replace('''
        def body_name(state_args):
            body
            return state_ret
        ''', body_name="loop_body", state_args=[QN("x"), QN("i")], body=stmts,
        state_ret=[QN("x"), QN("i")])
    assert _code(out) == "def loop_body(x, i):\n    x = x * 2\n    i += 1\n    return (x, i)"
    args = out[0].args.args
    assert all(isinstance(a.ctx, gast.Param) for a in args)
    # the generated code runs like the hand-written one
    ns = {}
    exec(_code(out), ns)
    assert ns["loop_body"](3, 0) == (6, 1)


def test_contexts_follow_where_the_node_lands():
    out = templates.replace("target = ag__.call(value, (vars_,))", target=[QN("a"), QN("b")],
                            value=QN(QN("s"), attr="t"), vars_=["a", "b"])
    assert _code(out) == "a, b = ag__.call(s.t, (a, b))"
    assign = out[0]
    assert all(isinstance(e.ctx, gast.Store) for e in assign.targets[0].elts)
    assert all(isinstance(e.ctx, gast.Load) for e in assign.value.args[1].elts)


def test_single_and_empty_lists_become_tuples():
    assert _code(templates.replace("return r", r=[QN("x")])) == "return (x,)"
    assert _code(templates.replace("return r", r=[])) == "return ()"


def test_statements_removed_and_empty_block_gets_pass():
    assert _code(templates.replace("def f():\n    body", body=None)) == "def f():\n    pass"
    assert _code(templates.replace("nonlocal names\nx = 1", names=[])) == "x = 1"
    assert _code(templates.replace("nonlocal names", names=["a", QN("b")])) == "nonlocal a, b"


def test_replacement_nodes_are_copied_and_not_rewritten():
    expr = parser.parse_expression("body + 1")  # a user name equal to a placeholder name
    out1 = templates.replace_as_expression("f(body)", body=expr)
    out2 = templates.replace_as_expression("f(body)", body=expr)
    assert parser.unparse(out1) == "f(body + 1)"
    assert out1.args[0] is not expr and out1.args[0] is not out2.args[0]


def test_dotted_string_and_constants():
    out = templates.replace_as_expression("fn(a, n, flag)", fn="ag__.if_stmt", a="x", n=3,
                                          flag=None)
    assert parser.unparse(out) == "ag__.if_stmt(x, 3, None)"


def test_origin_is_inherited_by_generated_nodes_only():
    user = parser.parse_str("y = g(x)").body[0]
    loc_user = LineLocation("user.py", 7, 0, "y = g(x)", "f")
    loc_other = LineLocation("user.py", 9, 4, "z", "f")
    anno.setanno(user, anno.Basic.ORIGIN, loc_other)
    stmt = parser.parse_str("y = g(x)").body[0]
    anno.setanno(stmt, anno.Basic.ORIGIN, loc_user)
    out = templates.replace("if c:\n    body", origin=stmt, body=[user])
    assert anno.getanno(out[0], anno.Basic.ORIGIN) == loc_user
    assert anno.getanno(out[0].test, anno.Basic.ORIGIN) == loc_user
    assert anno.getanno(out[0].body[0], anno.Basic.ORIGIN) == loc_other


def test_statements_in_expression_position_are_rejected():
    stmts = parser.parse_str("a = 1").body
    with pytest.raises(ValueError):
        templates.replace_as_expression("f(x)", x=stmts[0])
    with pytest.raises(ValueError):
        templates.replace_as_expression("a = 1")


def test_replace_round_trips_plain_code():
    code = "for i in range(n):\n    if i % 2:\n        continue\n    total += i\nelse:\n    done = True"
    assert _code(templates.replace(code)) == code


def test_moved_nodes_are_used_in_place_and_a_second_use_is_a_copy():
    x = parser.parse_expression("a + b")
    wrapped = templates.moved(x)
    out = templates.replace_as_expression("f(x, x)", x=wrapped)
    assert out.args[0] is x                      # the node itself, not a copy
    assert out.args[1] is not x                  # the same node never stands twice
    assert parser.unparse(out) == "f(a + b, a + b)"
    first, second = ({id(n) for n in gast.walk(arg)} for arg in out.args)
    assert first.isdisjoint(second)


def test_moved_target_gets_the_context_of_where_it_lands():
    t = parser.parse_expression("a")
    out = templates.replace("t = v", t=templates.moved(t), v=1)
    assert out[0].targets[0] is t
    assert isinstance(t.ctx, gast.Store)


def test_moved_statements_are_spliced_without_copies():
    stmts = parser.parse_str("y = 1\nz = y").body
    out = templates.replace("if c:\n    body", body=templates.moved(stmts))
    assert out[0].body[0] is stmts[0] and out[0].body[1] is stmts[1]
    assert _code(out) == "if c:\n    y = 1\n    z = y"
    # a moved expression where statements may stand is an expression statement
    out = templates.replace("if c:\n    body", body=templates.moved(parser.parse_expression("g()")))
    assert _code(out) == "if c:\n    g()"


def test_moved_and_copied_replacements_give_the_same_code():
    src = "lambda: (u if v and not w else 0 < q < 3)"
    for template in ("ag__.f(a, lambda: a)", "a(a)", "[a, b, a]"):
        plain = templates.replace_as_expression(template, a=parser.parse_expression(src),
                                                b=parser.parse_expression("k"))
        moved = templates.replace_as_expression(template,
                                                a=templates.moved(parser.parse_expression(src)),
                                                b=templates.moved(parser.parse_expression("k")))
        assert parser.unparse(moved) == parser.unparse(plain)
