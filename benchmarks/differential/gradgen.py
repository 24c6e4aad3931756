"""Random differentiable programs for the differential gradient run (issue 26).

`generate(rng)` returns a `GradProgram`: module source text with one entry point
`generated(x, v)` (x: a float64 vector of length 2, v: an `ag.Variable` of the same shape)
that returns a float64 vector of length 2, plus the point to differentiate at. The programs
mix the control flow a gradient has to go through, each kind both as Python (converted when
traced, plain Python on the eager tape's live values) and as the staged constructs (which
stage into the eager tape's live graph too):

- Python `if`/`else` on a value, and `ag.cond` with lambda branches;
- Python `for` over a short `range` (unrolled), `for` over `ag.range` (a staged loop),
  a Python `while` on a value with a counter, and `ag.while_loop` with a data-dependent
  stop;
- `ag.TensorArray` written in a loop and read back (`stack`, `read`);
- reads of the Variable `v` (at the top, in branches and in loop bodies).

It follows generator.py's way (a seeded `random.Random`, source text, bounded loops) with
smooth arithmetic instead of integer arithmetic: every loop runs at most a few times, every
value stays small (sin, tanh, and products with constants below 1.5), so central
differences are accurate away from the points where a condition flips.
"""

import dataclasses
import re

import numpy as np

VEC = ("x", "y", "z")


@dataclasses.dataclass
class GradProgram:
    source: str
    x: np.ndarray         # the point to differentiate at
    v: np.ndarray         # the Variable's value


class _Gen:
    def __init__(self, rng):
        self.rng = rng
        self.loops = 0

    def const(self):
        return f"{self.rng.choice([0.3, 0.5, 0.7, -0.4, 1.1, 0.9, -0.8, 0.2])}"

    def atom(self, env):
        r = self.rng.random()
        if r < 0.12:
            return "v.read_value()"
        if r < 0.2:
            return self.const()
        return self.rng.choice(env)

    def expr(self, env, depth=0):
        """An expression of vector shape (2,): at least one vector operand, so that no
        branch or loop joins a scalar with a vector (the rank would be unknown, and
        gradient rules need ranks)."""
        while True:
            e = self._expr(env, depth)
            if depth or re.search(r"\b(x|y|z|w|v)\b", e):
                return e

    def _expr(self, env, depth=0):
        if depth >= 2 or self.rng.random() < 0.3:
            return self.atom(env)
        a, b = self._expr(env, depth + 1), self._expr(env, depth + 1)
        k = self.rng.randrange(8)
        if k == 0:
            return f"np.sin({a})"
        if k == 1:
            return f"np.tanh({a})"
        if k == 2:
            return f"({a}) * ({b})"
        if k == 3:
            return f"({a}) - {self.const()} * ({b})"
        if k == 4:
            return f"np.cos({a}) * {self.const()}"
        if k == 5:
            return f"np.tanh({a}) * ({b})"
        return f"({a}) + ({b})"

    def bounded(self, env):
        """An expression whose values stay within [-2, 2]: safe to iterate."""
        return f"np.tanh({self.expr(env)}) * {self.const()} + np.sin({self.atom(env)}) * 0.5"

    def test(self, env):
        return f"np.sum({self.expr(env)}) > {self.rng.choice([-0.3, 0.0, 0.2, 0.5])}"

    def block(self, env, pad, depth):
        n = self.rng.randint(1, 2)
        out = []
        for _ in range(n):
            out += self.stmt(env, pad, depth)
        return out

    def stmt(self, env, pad, depth):
        r = self.rng
        target = r.choice(("y", "z"))
        kinds = ["assign"] * 3 + (["if", "cond", "for", "agrange", "while", "ag_while", "ta"]
                                  if depth < 1 or self.rng.random() < 0.3 and depth < 2 else [])
        kind = r.choice(kinds)
        if kind == "assign":
            return [f"{pad}{target} = {self.expr(env)}"]
        if kind == "if":
            return ([f"{pad}if {self.test(env)}:"] + self.block(env, pad + "    ", depth + 1)
                    + [f"{pad}else:"] + self.block(env, pad + "    ", depth + 1))
        if kind == "cond":
            return [f"{pad}{target} = ag.cond({self.test(env)}, lambda: {self.expr(env)}, "
                    f"lambda: {self.expr(env)})"]
        self.loops += 1
        i = f"i{self.loops}"
        if kind == "for":
            return [f"{pad}for {i} in range({r.randint(1, 3)}):"] + \
                [f"{pad}    {target} = {self.bounded(env)}"] + \
                self.block(env, pad + "    ", depth + 1)
        if kind == "agrange":
            return [f"{pad}for {i} in ag.range({r.randint(1, 3)}):"] + \
                [f"{pad}    {target} = {self.bounded(env)}"] + \
                self.block(env, pad + "    ", depth + 1)
        if kind == "while":
            return [f"{pad}{i} = 0",
                    f"{pad}while np.sum({target} * {target}) < {r.choice([0.5, 1.0, 2.0])} "
                    f"and {i} < {r.randint(1, 4)}:",
                    f"{pad}    {target} = {target} * 1.4 + {self.bounded(env)} * 0.3",
                    f"{pad}    {i} += 1"]
        if kind == "ag_while":
            return [f"{pad}{target} = ag.while_loop(lambda k, w: np.logical_and(k < "
                    f"{r.randint(1, 4)}, np.sum(w * w) < {r.choice([0.5, 1.0, 2.0])}), "
                    f"lambda k, w: (k + 1, w * 1.3 + np.tanh({self.expr(env + ['w'])}) * 0.2), "
                    f"[np.int64(0), {target}])[1]"]
        n = r.randint(1, 3)
        read = r.choice(["np.sum(ta.stack(), axis=0)", f"ta.read({n - 1})",
                         "ta.stack()[0] * ta.stack()[-1]"])
        return [f"{pad}ta = ag.TensorArray(np.float64, size={n})",
                f"{pad}for {i} in ag.range({n}):",
                f"{pad}    {target} = {self.bounded(env)}",
                f"{pad}    ta = ta.write({i}, {target})",
                f"{pad}{target} = {read}"]


def generate(rng):
    g = _Gen(rng)
    body = ["    y = np.sin(x) + 0.1", "    z = x * " + g.const()]
    for _ in range(rng.randint(1, 3)):
        body += g.block(list(VEC), "    ", 0)
    body.append(f"    return {g.expr(list(VEC))} + y * 0.5 + z * 0.25")
    source = ("import numpy as np\nimport autograph as ag\n\n\n"
              "def generated(x, v):\n" + "\n".join(body) + "\n")
    x = np.array([rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)])
    v = np.array([rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)])
    return GradProgram(source, x, v)
