"""The loader on random programs: the loaded function behaves like the original, and the
origin map sends every generated line to the user line it came from."""

import ast
import linecache

import pytest

from autograph.source import loader, origin, parser
from tests.analysis.test_dataflow_random import INPUTS, _Gen


def _outcome(fn, x, y):
    try:
        return ("ok", fn(x, y))
    except Exception as e:  # noqa: BLE001 - behaviour, errors included
        return (type(e).__name__, str(e))


def _normal(line):
    """A line of code without layout differences (ast.unparse normalizes spacing)."""
    text = line.strip().rstrip(":")
    if text.startswith("elif "):
        text = text[2:]  # unparse writes `else: if` as `elif`
    try:
        return ast.unparse(ast.parse(text))
    except SyntaxError:  # a header like `else` or `try`
        return text


@pytest.mark.parametrize("seed", range(25))
def test_random_program_round_trip(seed):
    code = _Gen(seed).program()
    # the user's layout differs from unparse's: extra spaces and a comment per line
    user_code = "\n".join(l.replace(" = ", " =  ") + ("  # user" if l.strip() else "")
                          for l in code.splitlines()) + "\n"
    filename = f"<random user program {seed}>"
    linecache.cache[filename] = (len(user_code), None, user_code.splitlines(True), filename)
    ns = {}
    exec(compile(user_code, filename, "exec"), ns)
    original = ns["f"]

    node, _, _ = parser.parse_entity(original)
    new, text, generated_file = loader.load(node, original, {})
    for x, y in INPUTS:
        assert _outcome(new, x, y) == _outcome(original, x, y)

    omap = origin.origin_map(generated_file)
    generated = linecache.getlines(generated_file)
    start = new.__code__.co_firstlineno
    for lineno in range(start, start + len(text.splitlines())):
        line = generated[lineno - 1]
        if not line.strip():
            continue
        if _normal(line) in ("else", "finally"):
            continue  # no node of their own: they map to their if/for/while/try (no code runs there)
        loc = omap[lineno]
        assert loc.filename == filename
        user_line = loc.source_line.split("#")[0]
        assert _normal(user_line) == _normal(line), (lineno, line, loc)
