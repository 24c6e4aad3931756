import gast
import pytest

from autograph.source import anno, parser, qual_names
from autograph.source.qual_names import QN, Literal


def test_value_semantics_and_str():
    a, i = QN("a"), QN("i")
    ab = QN(a, attr="b")
    ai = QN(a, subscript=i)
    a0 = QN(a, subscript=Literal(0))
    assert (str(ab), str(ai), str(a0), str(QN(ab, attr="c"))) == ("a.b", "a[i]", "a[0]", "a.b.c")
    assert QN(QN("a"), attr="b") == ab and hash(QN(QN("a"), attr="b")) == hash(ab)
    assert ab != ai and a0 != QN(a, subscript=Literal("0"))
    assert len({a, QN("a"), ab, QN(a, attr="b")}) == 2
    assert a.is_simple() and not ab.is_simple() and ab.parent == a
    assert QN(ab, attr="c").owner_set == {a, ab}
    assert ai.support_set == {a, i}
    with pytest.raises(ValueError):
        a.parent


def test_from_str_and_ast_round_trip():
    for text in ("a", "a.b", "a[i]", "a.b[0].c", "a['k']", "a[-1]"):
        qn = qual_names.from_str(text)
        assert parser.unparse(qn.ast()) == text
        assert qual_names.from_str(parser.unparse(qn.ast())) == qn
    with pytest.raises(ValueError):
        qual_names.from_str("a + b")


def test_resolve_annotates_symbols_only():
    tree = parser.parse_str("a.b[i] = f(x).y + c[i + 1]")
    qual_names.resolve(tree)
    found = {parser.unparse(n): anno.getanno(n, anno.Basic.QN, None)
             for n in gast.walk(tree) if isinstance(n, (gast.Name, gast.Attribute, gast.Subscript))}
    assert found["a.b[i]"] == qual_names.from_str("a.b[i]")
    assert found["a.b"] == qual_names.from_str("a.b")
    assert found["f(x).y"] is None and found["c[i + 1]"] is None
    assert found["c"] == QN("c") and found["x"] == QN("x")
