"""Passes for one kind of statement (assert, break, continue) are skipped for functions
without it: the generated code must be exactly what running every pass gives."""

import inspect

import pytest

from autograph import api, converters
from tests.converters import samples

FUNCTIONS = [f for _, f in inspect.getmembers(samples, inspect.isfunction)
             if f.__module__ == samples.__name__]


def _code(fn, gate):
    saved = dict(converters._ONLY_FOR)
    if not gate:
        converters._ONLY_FOR.clear()
    try:
        api._by_code.clear()
        return api.to_code(fn)
    finally:
        converters._ONLY_FOR.update(saved)
        api._by_code.clear()


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_skipping_passes_changes_no_generated_code(fn):
    assert _code(fn, gate=True) == _code(fn, gate=False)


def test_statement_kinds_see_nested_blocks_and_functions():
    import gast
    from autograph.converters import base
    from autograph.source import parser
    node = parser.parse_str(
        "def f(x):\n"
        "    while x:\n"
        "        try:\n"
        "            pass\n"
        "        except E:\n"
        "            def g():\n"
        "                for i in x:\n"
        "                    continue\n"
        "    assert x\n").body[0]
    kinds = base.statement_kinds(node)
    assert {gast.While, gast.Try, gast.Pass, gast.FunctionDef, gast.For, gast.Continue,
            gast.Assert} <= kinds
    assert gast.Break not in kinds
