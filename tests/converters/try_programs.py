"""Random small programs mixing return, raise, try/except/else/finally, with, loops with
break/continue and ifs, run as plain Python and converted on Python values.

Each program appends to a log as it goes, so the comparison sees the path taken, not just
the result. Inside a `try`, `x` is not rebound: an exception raised in a converted `if` or
loop body drops the body's rebindings (a control-flow limitation of its own, not one of
returns), and these programs test the return/try machinery. Used by tests/converters/test_returns_scopes.py (a few hundred programs) and
by `python -m tests.converters.try_programs N` (a longer run).
"""

import contextlib
import random
import sys
import textwrap


def _raises(k):
    raise ValueError(k)


def _value(k):
    return k


class _Ctx:
    """A context manager that lets exceptions through (the control-flow analysis assumes
    a `with` does; `contextlib.suppress` is tested on its own)."""

    def __init__(self, log, k):
        self.log, self.k = log, k

    def __enter__(self):
        self.log.append(("enter", self.k))

    def __exit__(self, *exc):
        self.log.append(("exit", self.k, exc[0] is not None))
        return False


class _Gen:
    def __init__(self, rng):
        self.rng = rng
        self.in_try = 0
        self.loops = 0

    def block(self, depth, in_loop, n=None):
        n = n or self.rng.randint(1, 3)
        out = []
        for _ in range(n):
            lines = self.stmt(depth, in_loop)
            out += lines
            if len(lines) == 1 and lines[0].split()[0] in _JUMPS:
                break   # no dead code after a jump
        return out

    def stmt(self, depth, in_loop):
        r = self.rng
        k = r.randint(0, 5)
        simple = [
            [f"log.append({k})"],
            [f"log.append(x + {k})"] if self.in_try else [f"x += {k}"],
            [f"return x + {k}"],
            [f"return _raises({k})"],
            [f"return _value({k}) + x"],
            [f"raise ValueError({k})"],
            [f"log.append(_raises({k}))"],
        ]
        if in_loop:
            simple += [["break"], ["continue"]]
        if depth <= 0 or r.random() < 0.35:
            return r.choice(simple)
        kind = r.choice(["if", "for", "while", "try", "try", "try", "with"])
        d = depth - 1
        if kind == "if":
            out = [f"if x > {k}:"] + _ind(self.block(d, in_loop))
            if r.random() < 0.5:
                out += ["else:"] + _ind(self.block(d, in_loop))
            return out
        if kind == "for":
            out = [f"for i in range({r.randint(0, 3)}):"] + _ind(
                [f"log.append(i * 10 + {k})"] + self.block(d, True))
            if r.random() < 0.3:
                out += ["else:"] + _ind(self.block(d, in_loop))
            return out
        if kind == "while":
            n = f"n{self.loops}"
            self.loops += 1
            return ([f"{n} = [{r.randint(0, 3)}]", f"while {n}[0] > 0:"]
                    + _ind([f"{n}[0] -= 1", f"log.append({n}[0])"] + self.block(d, True)))
        if kind == "with":
            return [f"with _Ctx(log, {k}):"] + _ind(self.block(d, in_loop))
        self.in_try += 1
        try:
            return self._try(r, k, d, in_loop)
        finally:
            self.in_try -= 1

    def _try(self, r, k, d, in_loop):
        out = ["try:"] + _ind(self.block(d, in_loop))
        handlers = r.random() < 0.7
        if handlers:
            out += ["except ValueError as e:"] + _ind(["log.append(e.args[0])"] + self.block(d, in_loop))
            if r.random() < 0.3:
                out += ["else:"] + _ind(self.block(d, in_loop))
        if not handlers or r.random() < 0.5:
            out += ["finally:"] + _ind(["log.append(-1)"] + self.block(d, in_loop))
        return out


_JUMPS = {"return", "raise", "break", "continue"}


def _ind(lines):
    return ["    " + line for line in lines]


def program(seed, depth=3):
    """Source of one program `def f(x, log): ...` (valid Python)."""
    rng = random.Random(seed)
    body = _Gen(rng).block(depth, False, n=rng.randint(1, 4))
    if rng.random() < 0.7:
        body.append("return (x, 'end')")
    return "def f(x, log):\n" + "\n".join(_ind(body)) + "\n"


def _outcome(fn, x):
    log = []
    with _quiet_warnings():
        try:
            result = ("value", fn(x, log))
        except Exception as e:  # noqa: BLE001 - the exception is part of the outcome
            result = ("raise", type(e).__name__, e.args)
    return result, log


@contextlib.contextmanager
def _quiet_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        yield


def build(source, filename):
    """Compile `source` as a file autograph can read (registered in linecache)."""
    import linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"_raises": _raises, "_value": _value, "_Ctx": _Ctx}
    with _quiet_warnings():
        exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


def check(seed, xs=(-1, 0, 2, 4, 7), depth=2):
    """None when the converted program agrees with Python on every x, else a report.
    (Depth 3 also meets open control-flow limitations: a `with` is assumed never to
    swallow exceptions, and a variable first assigned on every path of an inner `if`
    inside a `with` is not passed to the enclosing branch function.)"""
    import autograph as ag
    source = program(seed, depth)
    fn = build(source, f"<try-program {seed}>")
    converted = ag.to_graph(fn)
    for x in xs:
        want, got = _outcome(fn, x), _outcome(converted, x)
        if want != got:
            return (f"seed {seed}, x={x}: python {want}, converted {got}\n"
                    f"{source}\n{ag.to_code(fn)}")
    return None


def main(n):
    bad = 0
    for seed in range(n):
        report = check(seed)
        if report:
            bad += 1
            if bad <= 3:
                print(textwrap.indent(report, "  "))
    print(f"{n} programs, {bad} differ")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000) else 0)
