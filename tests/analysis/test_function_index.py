"""activity's list of nested functions (Static.FUNCTIONS) gives cfg.build_all the same
graphs and owners as build_all's own walk, and the same dataflow facts downstream."""

import textwrap

import gast
import pytest

from autograph.analysis import activity, cfg, liveness, reaching_definitions
from autograph.source import anno, parser

SOURCES = [
    """
    def f(x, g=lambda a: a + 1):
        y = g(x)
        return y
    """,
    """
    def f(x):
        @(lambda d: d)
        def inner(a, b=lambda: x):
            h = lambda q: (lambda r: r + q + a)
            return h(a)(b())
        class C:
            def method(self):
                return [lambda: i for i in range(3)]
        if x:
            z = sorted(range(3), key=lambda v: -v)
        else:
            z = inner(x)
        while x > 0:
            x = (lambda t: t - 1)(x)
        try:
            pass
        except ValueError as e:
            w = lambda: e
        return z
    """,
    """
    def f(n):
        total = 0
        for i in range(n):
            def add(a, i=i):
                return a + i
            total = add(total)
        return total
    """,
]


def _parse(code):
    return parser.parse_str(textwrap.dedent(code)).body[0]


@pytest.mark.parametrize("code", SOURCES)
def test_activity_index_matches_the_walk(code):
    fn = _parse(code)
    activity.resolve(fn)
    functions = anno.getanno(fn, anno.Static.FUNCTIONS)
    walked = cfg.build_all(fn)
    indexed = cfg.build_all(fn, functions)
    assert set(walked) == set(indexed) == {f for f, _ in functions}
    assert [f for f in walked if isinstance(f, (gast.FunctionDef, gast.Lambda))] == list(walked)
    for node in walked:
        assert indexed[node].owner is walked[node].owner
    # outer functions first: the functions inside a function's body come after it
    order = [f for f, _ in functions]
    for f in order:
        body = f.body if isinstance(f.body, list) else [f.body]
        for inner in (n for b in body for n in gast.walk(b)):
            if inner in indexed:
                assert order.index(inner) > order.index(f)


@pytest.mark.parametrize("code", SOURCES)
def test_dataflow_facts_are_the_same_either_way(code):
    facts = []
    for use_index in (False, True):
        fn = _parse(code)
        activity.resolve(fn)
        graphs = cfg.build_all(fn, anno.getanno(fn, anno.Static.FUNCTIONS) if use_index else None)
        liveness.resolve(fn, graphs)
        reaching_definitions.resolve(fn, graphs)
        keys = (anno.Static.LIVE_VARS_IN, anno.Static.LIVE_VARS_OUT,
                anno.Static.DEFINED_VARS_IN, anno.Static.MAYBE_DEFINED_VARS_IN)
        facts.append([tuple(sorted(map(str, anno.getanno(n, k, ()))) for k in keys)
                      for n in gast.walk(fn) if isinstance(n, gast.stmt)])
    assert facts[0] == facts[1]
