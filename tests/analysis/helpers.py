"""Parse a small function and look up its statements by their first line of code."""

import textwrap

import gast

from autograph.analysis import activity, cfg, liveness, reaching_definitions
from autograph.source import anno, parser


def analyzed(code):
    """The first function of `code` with every analysis run: (fn_node, graphs)."""
    fn = parser.parse_str(textwrap.dedent(code)).body[0]
    activity.resolve(fn)
    graphs = cfg.build_all(fn)
    liveness.resolve(fn, graphs)
    reaching_definitions.resolve(fn, graphs)
    return fn, graphs


def stmt(fn, first_line, nth=0):
    """The nth statement under `fn` whose unparsed first line is `first_line`."""
    found = [n for n in gast.walk(fn) if isinstance(n, (gast.stmt, gast.ExceptHandler))
             and n is not fn and parser.unparse(n).split("\n")[0] == first_line]
    return found[nth]


def names(node, key):
    """The annotation `key` of `node` as a set of strings ('a', 'a.b', ...)."""
    value = anno.getanno(node, key)
    return {str(q) for q in value}
