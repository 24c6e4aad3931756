import copy

import pytest

from autograph.source import anno, parser


def test_get_set_has_del_copy():
    a, b = parser.parse_str("x = 1\ny = 2").body
    anno.setanno(a, anno.Basic.SKIP_PROCESSING, True)
    assert anno.hasanno(a, anno.Basic.SKIP_PROCESSING) and not anno.hasanno(b, anno.Basic.SKIP_PROCESSING)
    assert anno.getanno(b, anno.Static.SCOPE, "none") == "none"
    with pytest.raises(KeyError):
        anno.getanno(b, anno.Static.SCOPE)
    anno.copyanno(a, b, anno.Basic.SKIP_PROCESSING)
    assert anno.getanno(b, anno.Basic.SKIP_PROCESSING) is True
    anno.delanno(a, anno.Basic.SKIP_PROCESSING)
    assert anno.keys(a) == set()
    c = copy.deepcopy(b)
    assert anno.getanno(c, anno.Basic.SKIP_PROCESSING) is True
    assert "unparsed" not in parser.unparse(c) and parser.unparse(c) == "y = 2"


def test_clear_by_enum_keeps_other_keys_and_dup():
    tree = parser.parse_str("x = 1")
    stmt = tree.body[0]
    anno.setanno(stmt, anno.Static.SCOPE, 1)
    anno.setanno(stmt, anno.Static.LIVE_VARS_IN, 2)
    anno.setanno(stmt, anno.Basic.QN, 3)
    anno.dup(tree, {anno.Basic.QN: anno.Basic.GENERATED})
    assert anno.getanno(stmt, anno.Basic.GENERATED) == 3
    anno.clear(tree, anno.Static)
    assert anno.keys(stmt) == {anno.Basic.QN, anno.Basic.GENERATED}
    anno.clear(tree)
    assert anno.keys(stmt) == set()


def test_keys_are_documented():
    for key in list(anno.Basic) + list(anno.Static):
        assert isinstance(key.value, str) and len(key.value) > 10
