"""Reaching definitions and liveness checked against execution on random programs.

Each seed generates a small function (assignments, if/else, for and while loops with
break/continue, try/except/finally, del, early returns, a lambda reading a variable and
calls of it). Then:

- definitions: before every statement a probe records which locals are really bound; that
  set must contain DEFINED_VARS_IN and lie within MAYBE_DEFINED_VARS_IN;
- liveness: a mutant deletes, before every statement, each variable the analysis says is
  not live there; it must return (or raise) exactly what the original does.
"""

import random

import gast
import pytest

from autograph.analysis import activity, cfg, liveness, reaching_definitions
from autograph.source import anno, parser

VARS = ["a", "b", "c", "d"]


class _Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.loops = 0

    def expr(self):
        r = self.rng
        atoms = VARS + ["x", "y", str(r.randint(0, 3))]
        left, right = r.choice(atoms), r.choice(atoms)
        return r.choice([f"{left}", f"{left} + {right}", f"{left} - {right}",
                         f"{left} // ({right} - 1)"])

    def cond(self):
        r = self.rng
        return f"{r.choice(VARS + ['x', 'y'])} {r.choice(['>', '<', '==', '!='])} {r.randint(0, 3)}"

    def block(self, depth, in_loop, indent):
        out = []
        for _ in range(self.rng.randint(1, 3)):
            out += self.stmt(depth, in_loop, indent)
        return out

    def stmt(self, depth, in_loop, indent):
        r, pad = self.rng, "    " * indent
        kinds = ["assign"] * 4 + ["aug", "del"] + ["closure", "call"] * 2
        if depth < 3:
            kinds += ["if", "for", "while", "try"]
        if in_loop:
            kinds += ["break", "continue"]
        kinds.append("return")
        kind = r.choice(kinds)
        v = r.choice(VARS)
        if kind == "assign":
            return [f"{pad}{v} = {self.expr()}"]
        if kind == "aug":
            return [f"{pad}{v} += {self.expr()}"]
        if kind == "del":
            return [f"{pad}del {v}"]
        if kind == "closure":  # reads v whenever it is called, later
            return [f"{pad}h = lambda: {v}"]
        if kind == "call":
            return [f"{pad}{v} = h()"]
        if kind in ("break", "continue"):
            return [f"{pad}if {self.cond()}:", f"{pad}    {kind}"]
        if kind == "return":
            return [f"{pad}if {self.cond()}:", f"{pad}    return {self.expr()}"]
        if kind == "if":
            lines = [f"{pad}if {self.cond()}:"] + self.block(depth + 1, in_loop, indent + 1)
            if r.random() < 0.6:
                lines += [f"{pad}else:"] + self.block(depth + 1, in_loop, indent + 1)
            return lines
        if kind == "for":
            lines = [f"{pad}for {v} in range({r.randint(0, 3)}):"]
            lines += self.block(depth + 1, True, indent + 1)
            if r.random() < 0.3:
                lines += [f"{pad}else:"] + self.block(depth + 1, in_loop, indent + 1)
            return lines
        if kind == "while":
            self.loops += 1
            k = f"k{self.loops}"
            return [f"{pad}{k} = {r.randint(0, 3)}", f"{pad}while {k} > 0:",
                    f"{pad}    {k} -= 1"] + self.block(depth + 1, True, indent + 1)
        lines = [f"{pad}try:"] + self.block(depth + 1, in_loop, indent + 1)
        if r.random() < 0.7:
            name = f" as {r.choice(VARS)}" if r.random() < 0.5 else ""
            lines += [f"{pad}except ZeroDivisionError{name}:"] + self.block(depth + 1, in_loop, indent + 1)
        if r.random() < 0.5 or lines[-1].startswith(f"{pad}try"):
            lines += [f"{pad}finally:"] + self.block(depth + 1, in_loop, indent + 1)
        elif not any(l.startswith(f"{pad}except") for l in lines):
            lines += [f"{pad}finally:", f"{pad}    pass"]
        return lines

    def program(self):
        # most programs start with their variables bound, so that they run deep enough
        init = [f"    {v} = {self.rng.randint(0, 3)}" for v in VARS if self.rng.random() < 0.8]
        body = init + self.block(0, False, 1)
        final = " + ".join(self.rng.sample(VARS, 2))
        return "def f(x, y):\n" + "\n".join(body) + f"\n    return {final}\n"


def _statements(fn):
    return [n for n in gast.walk(fn) if isinstance(n, gast.stmt) and n is not fn]


def _run(code, x, y, extra_globals=None):
    ns = dict(extra_globals or {})
    exec(compile(code, "<random program>", "exec"), ns)
    try:
        return ("ok", ns["f"](x, y))
    except Exception as e:  # noqa: BLE001 - comparing behaviour, errors included
        return (type(e).__name__, str(e))


def _analyzed(code):
    fn = parser.parse_str(code).body[0]
    activity.resolve(fn)
    graphs = cfg.build_all(fn)
    liveness.resolve(fn, graphs)
    reaching_definitions.resolve(fn, graphs)
    return fn


def _instrument(fn, make_prefix):
    """Insert make_prefix(stmt) (a list of statements) before every statement."""
    for node in list(gast.walk(fn)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                new = []
                for s in block:
                    new += make_prefix(s) + [s]
                setattr(node, field, new)
    return fn


INPUTS = [(x, y) for x in (0, 1, 2, 3) for y in (0, 2)]


@pytest.mark.parametrize("seed", range(50))
def test_reaching_definitions_agree_with_execution(seed):
    code = _Gen(seed).program()
    fn = _analyzed(code)
    facts = {}

    def prefix(s):
        facts[len(facts)] = s
        return parser.parse_str(f"__probe({len(facts) - 1}, locals())").body

    probe_code = parser.unparse(_instrument(fn, prefix))
    seen = []
    for x, y in INPUTS:
        _run(probe_code, x, y, {"__probe": lambda i, loc: seen.append((i, set(loc)))})
    assert seen, code
    for i, bound in seen:
        s = facts[i]
        must = {str(q) for q in anno.getanno(s, anno.Static.DEFINED_VARS_IN)}
        may = {str(q) for q in anno.getanno(s, anno.Static.MAYBE_DEFINED_VARS_IN)}
        line = parser.unparse(s).split("\n")[0]
        assert must <= bound, f"{line!r}: {must - bound} not bound at run time\n{code}"
        assert bound <= may, f"{line!r}: {bound - may} bound but not 'maybe'\n{code}"


# seeds past 50 where calling a lambda reads a variable nothing else keeps live
CLOSURE_SEEDS = [65, 105, 208]


@pytest.mark.parametrize("seed", list(range(50)) + CLOSURE_SEEDS)
def test_deleting_dead_variables_changes_nothing(seed):
    code = _Gen(seed).program()
    fn = _analyzed(code)
    everything = set(VARS) | {"x", "y", "h"} | {f"k{i}" for i in range(1, 20)}
    # only the function's locals: `del` of a global name would make it local
    local = {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)
             and not isinstance(n.ctx, gast.Load)}

    def prefix(s):
        live = {str(q) for q in anno.getanno(s, anno.Static.LIVE_VARS_IN)}
        dead = sorted((everything - live) & local)
        return [st for v in dead for st in parser.parse_str(
            f"try:\n    del {v}\nexcept NameError:\n    pass").body]

    mutant = parser.unparse(_instrument(fn, prefix))
    for x, y in INPUTS:
        assert _run(mutant, x, y) == _run(code, x, y), f"inputs {x, y}\n{code}\n--- mutant:\n{mutant}"
