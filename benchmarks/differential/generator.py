"""Random valid Python programs for differential testing of the compiler.

`generate(rng)` returns a `Program`: module source text holding small helper functions and
one entry point `generated(x, n, xs)` (x: an int, n: a small int, xs: a list of three ints),
plus the input sets to call it with. Programs mix the shapes of everyday Python: nested
if/elif/else, while loops (bounded by a counter or a walrus countdown), for loops over
ranges, list literals, the list/array argument, enumerate and zip, break/continue/return at
any depth, variables bound on some paths only, attribute/dict-item/subscript state, lambdas
and nested functions over loop variables, try/finally, walrus, helper calls and tuple
unpacking.

Every loop is bounded by construction (at most a few iterations, at most three deep), and
values stay small (products are taken modulo 1009, divisors are positive constants), so
Python ints and int64 agree exactly. A variable bound on some paths only may be read where
Python would fail: then the Python run raises (UnboundLocalError) and the converted run
must raise the same exception type.
"""

import dataclasses
import random

ALWAYS = ("a", "b", "c")          # bound at the top of every program
SOMETIMES = ("t", "u")            # first bound inside branches and loops
MAX_DEPTH = 3

HELPERS = {
    "helper_dist": (
        "def helper_dist(p, q):\n"
        "    if p > q:\n"
        "        return p - q\n"
        "    return q - p\n"),
    "helper_pair": (
        "def helper_pair(p, q):\n"
        "    return q, (p + q) % 1009\n"),
    "helper_sum": (
        "def helper_sum(p, k):\n"
        "    s = 0\n"
        "    for j in range(k):\n"
        "        s += p + j\n"
        "    return s % 1009\n"),
    "helper_clip": (
        "def helper_clip(p):\n"
        "    while p > 50:\n"
        "        p = p // 2\n"
        "    if p < -50:\n"
        "        p = -p // 3\n"
        "    return p\n"),
}

PRELUDE = (
    "class State:\n"
    "    def __init__(self):\n"
    "        self.v = 0\n"
    "\n")


@dataclasses.dataclass
class Program:
    source: str
    inputs: list          # [(x, n, xs), ...]
    tensor_args: tuple    # which of (x, n, xs) are passed to the traced run as NumPy values


class _Gen:
    def __init__(self, rng, features):
        self.rng = rng
        self.f = features
        self.helpers = set()
        self.uses_fs = False
        self.closures = 0

    # -- expressions --------------------------------------------------------------------

    def atom(self, env):
        r = self.rng
        k = r.random()
        if k < 0.15:
            return str(r.randint(-4, 9))
        if k < 0.22 and self.f["xs"]:
            return f"xs[{r.randint(-3, 2)}]"
        if k < 0.27 and self.f["composite"]:
            return r.choice(["box[0]", 'd["k"]', "s.v", "box[1]"])
        if k < 0.29 and self.f["xs"]:
            return "len(xs)"
        names = sorted(env["defined"]) + ["x", "n"] + list(env["loop"])   # sorted: the same
        # program for a seed whatever PYTHONHASHSEED is (a set's order is the hash's)
        if env["maybe"] and r.random() < self.f["unbound_reads"]:
            names = sorted(env["maybe"])      # may raise in Python: the runs must agree
        return r.choice(names)

    def expr(self, env, depth=0):
        r = self.rng
        if depth >= 2 or r.random() < 0.45:
            return self.atom(env)
        op = r.choice(["+", "-", "*", "//", "%", "ifexp", "and", "or", "call", "abs", "+", "-"])
        left, right = self.expr(env, depth + 1), self.expr(env, depth + 1)
        if op == "*":
            return f"(({left}) * ({right})) % 1009"
        if op in ("//", "%"):
            return f"({left}) {op} {r.randint(1, 7)}"
        if op in ("and", "or"):
            return f"(({left}) {op} ({right}))"
        if op == "ifexp":
            return f"(({left}) if {self.cond(env, depth + 1)} else ({right}))"
        if op == "abs":
            return f"abs({left})"
        if op == "call" and self.f["helpers"]:
            name = r.choice(["helper_dist", "helper_sum", "helper_clip"])
            self.helpers.add(name)
            if name == "helper_dist":
                return f"helper_dist({left}, {right})"
            if name == "helper_sum":
                return f"helper_sum({left}, {r.choice(['n', '2', '3'])})"
            return f"helper_clip({left})"
        return f"({left}) + ({right})"

    def cond(self, env, depth=0):
        r = self.rng
        kind = r.randint(0, 7 if depth < 2 else 3)
        left = self.expr(env, 2)
        if kind == 0:
            return f"{left} > {self.expr(env, 2)}"
        if kind == 1:
            return f"({left}) % 2 == 0"
        if kind == 2:
            return f"{left} <= {r.randint(-3, 8)}"
        if kind == 3 and self.f["chained"]:
            return f"{r.randint(-3, 2)} < {left} <= {r.randint(3, 9)}"
        if kind == 4:
            return f"({self.cond(env, depth + 1)}) and ({self.cond(env, depth + 1)})"
        if kind == 5:
            return f"({self.cond(env, depth + 1)}) or ({self.cond(env, depth + 1)})"
        if kind == 6:
            return f"not ({self.cond(env, depth + 1)})"
        if kind == 7 and self.f["walrus"] and not env["in_lambda"]:
            if "w" not in env["defined"]:     # bound only where this operand is evaluated
                env["maybe"].add("w")
            return f"(w := {left}) > {r.randint(-2, 6)}"
        return f"{left} != {r.randint(-2, 6)}"

    # -- statements ---------------------------------------------------------------------

    def block(self, env, indent, depth, in_loop):
        lines = []
        for _ in range(self.rng.randint(1, 3 if depth == 0 else 2)):
            lines += self.stmt(env, indent, depth, in_loop)
        return lines

    def ret(self):
        return "return " + self.result

    def stmt(self, env, indent, depth, in_loop):
        r = self.rng
        pad = "    " * indent
        kinds = ["assign"] * 4 + ["aug"] * 2
        if self.f["composite"]:
            kinds += ["state", "state"]
        if self.f["sometimes"]:
            kinds += ["bind"] * 2
        if self.f["unpack"]:
            kinds.append("unpack")
        if self.f["closures"]:
            kinds.append("closure")
        if depth < MAX_DEPTH:
            kinds += ["if"] * 3 + ["for"] * 2 + ["while"]
            if self.f["try"]:
                kinds.append("try")
        if in_loop:
            kinds += ["break", "continue"]
        kinds.append("return")
        if self.f["keys"]:
            kinds.append("keys")
        kind = r.choice(kinds)
        e = lambda: self.expr(env)  # noqa: E731
        if kind == "assign":
            return [f"{pad}{r.choice(ALWAYS)} = {e()}"]
        if kind == "aug":
            return [f"{pad}{r.choice(ALWAYS)} {r.choice(['+=', '-='])} {e()}"]
        if kind == "bind":
            name = r.choice(SOMETIMES)
            value = e()
            if name not in env["defined"]:
                env["maybe"].add(name)
            return [f"{pad}{name} = {value}"]
        if kind == "state":
            target = r.choice(["box[0]", 'd["k"]', "s.v", "box[1]"])
            return [f"{pad}{target} {r.choice(['=', '+='])} {e()}"]
        if kind == "keys":
            return self.keys(env, pad)
        if kind == "unpack":
            a, b = r.sample(ALWAYS, 2)
            if self.f["helpers"] and r.random() < 0.5:
                self.helpers.add("helper_pair")
                return [f"{pad}{a}, {b} = helper_pair({a}, {e()})"]
            return [f"{pad}{a}, {b} = {b}, ({a} + {e()}) % 1009"]
        if kind == "closure":
            return self.closure(env, pad)
        if kind in ("break", "continue"):
            if r.random() < 0.2:
                return [f"{pad}{kind}"]
            return [f"{pad}if {self.cond(env, 1)}:", f"{pad}    {kind}"]
        if kind == "return":
            if r.random() < 0.2:
                return [f"{pad}{self.ret()}"]
            return [f"{pad}if {self.cond(env, 1)}:", f"{pad}    {self.ret()}"]
        if kind == "if":
            return self.if_stmt(env, indent, depth, in_loop)
        if kind == "try":
            return self.try_stmt(env, indent, depth, in_loop)
        if kind == "for":
            return self.for_stmt(env, indent, depth)
        return self.while_stmt(env, indent, depth)

    def keys(self, env, pad):
        r = self.rng
        k = r.randint(0, 3)
        if k == 0:
            return [f'{pad}if "m" in d:', f'{pad}    d["m"] += {self.expr(env)}',
                    f"{pad}else:", f'{pad}    d["m"] = 1']
        if k == 1:
            return [f'{pad}if not hasattr(s, "w"):', f"{pad}    s.w = {self.expr(env)}",
                    f"{pad}else:", f"{pad}    s.w += 1"]
        if k == 2:
            return [f'{pad}if "m" in d:', f'{pad}    del d["m"]']
        return [f'{pad}c = c + d.get("m", 0) + getattr(s, "w", 0)']

    def closure(self, env, pad):
        r = self.rng
        inner = dict(env, in_lambda=True)
        body = self.expr(inner, 1)
        k = r.randint(0, 2)
        self.closures += 1
        if k == 0:
            return [f"{pad}g = lambda: {body}", f"{pad}{r.choice(ALWAYS)} += g()"]
        if k == 1:
            return [f"{pad}def h(z):", f"{pad}    return (z + {body}) % 1009",
                    f"{pad}{r.choice(ALWAYS)} = h({r.choice(ALWAYS)})"]
        self.uses_fs = True
        return [f"{pad}fs.append(lambda: {body})"]

    def if_stmt(self, env, indent, depth, in_loop):
        r = self.rng
        pad = "    " * indent
        test = self.cond(env)
        if test.startswith("(w :="):          # the first test always runs: w is bound
            env["defined"].add("w")
            env["maybe"].discard("w")
        out = [f"{pad}if {test}:"]
        before = set(env["defined"])
        branches = []
        env_b = self.child(env)
        out += self.block(env_b, indent + 1, depth + 1, in_loop)
        branches.append(env_b)
        while r.random() < 0.3:
            out.append(f"{pad}elif {self.cond(env)}:")
            env_b = self.child(env)
            out += self.block(env_b, indent + 1, depth + 1, in_loop)
            branches.append(env_b)
        if r.random() < 0.6:
            out.append(f"{pad}else:")
            env_b = self.child(env)
            out += self.block(env_b, indent + 1, depth + 1, in_loop)
            branches.append(env_b)
            both = set.intersection(*(b["defined"] for b in branches))
        else:
            both = before
        self.merge(env, branches, both)
        return out

    def child(self, env):
        return dict(env, defined=set(env["defined"]), maybe=set(env["maybe"]))

    def merge(self, env, children, defined):
        for c in children:
            env["maybe"] |= c["maybe"] | (c["defined"] - defined)
        env["defined"] = set(defined)
        env["maybe"] -= env["defined"]

    def try_stmt(self, env, indent, depth, in_loop):
        pad = "    " * indent
        out = [f"{pad}try:"]
        body = self.child(env)
        out += self.block(body, indent + 1, depth + 1, in_loop)
        out += [f"{pad}finally:", f"{pad}    c = c + 1"]
        self.merge(env, [body], env["defined"])
        return out

    def for_stmt(self, env, indent, depth):
        r = self.rng
        pad = "    " * indent
        var = f"i{depth}"
        choices = ["range(n)", "range(1, n + 1)", "range(3)", "[a, 2, x]"]
        if self.f["xs"]:
            choices += ["xs", "xs", "enumerate", "zip"]
        it = r.choice(choices)
        body_env = self.child(env)
        body_env["loop"] = env["loop"] + (var,)
        if it == "enumerate":
            target, it = f"{var}, v{depth}", "enumerate(xs)"
            body_env["loop"] += (f"v{depth}",)
        elif it == "zip":
            target, it = f"{var}, v{depth}", r.choice(["zip(xs, range(n))", "zip([x, 2 * x], range(n))"])
            body_env["loop"] += (f"v{depth}",)
        else:
            target = var
        out = [f"{pad}for {target} in {it}:"]
        out += self.block(body_env, indent + 1, depth + 1, True)
        if r.random() < 0.2:
            out += [f"{pad}else:", f"{pad}    c = c + 1"]
        self.merge(env, [body_env], env["defined"])
        return out

    def while_stmt(self, env, indent, depth):
        r = self.rng
        pad = "    " * indent
        var = f"i{depth}"
        bound = r.choice(["n", "x % 5", "4", "2"])
        body_env = self.child(env)
        body_env["loop"] = env["loop"] + (var,)
        if self.f["walrus"] and r.random() < 0.3:
            out = [f"{pad}{var} = {bound}", f"{pad}while ({var} := {var} - 1) >= 0:"]
        else:
            out = [f"{pad}{var} = 0", f"{pad}while {var} < {bound}:", f"{pad}    {var} += 1"]
        out += self.block(body_env, indent + 1, depth + 1, True)
        if r.random() < 0.2:
            out += [f"{pad}else:", f"{pad}    b = b + {var}"]
        self.merge(env, [body_env], env["defined"])
        return out


def _features(rng):
    on = lambda p: rng.random() < p  # noqa: E731
    return {
        "xs": on(0.6), "composite": on(0.5), "sometimes": on(0.5), "unpack": on(0.4),
        "closures": on(0.35), "try": on(0.3), "walrus": on(0.35), "helpers": on(0.4),
        "chained": on(0.5), "keys": on(0.15),
        "unbound_reads": rng.choice([0.0, 0.0, 0.05, 0.2]),
    }


def generate(rng):
    """One random program (a `Program`) drawn from `rng` (a `random.Random`)."""
    f = _features(rng)
    g = _Gen(rng, f)
    result = "a, b, c"
    if f["composite"] or f["keys"]:
        result += ', box[0] + box[1], d["k"], s.v'
    g.result = result
    env = {"defined": set(ALWAYS), "maybe": set(), "loop": (), "in_lambda": False}
    body = ["    a = x", "    b = 1", "    c = 0"]
    if f["composite"] or f["keys"]:
        body += ["    box = [0, 0]", '    d = {"k": 0}', "    s = State()"]
    stmts = g.block(env, 1, 0, False)
    if rng.random() < 0.5:
        stmts += g.block(env, 1, 0, False)
    if g.uses_fs:
        body.append("    fs = []")
    body += stmts
    if g.uses_fs:
        body.append("    c = c + sum(fn() for fn in fs) % 1009")
    body.append("    return " + result)
    parts = []
    if f["composite"] or f["keys"]:
        parts.append(PRELUDE)
    parts += [HELPERS[name] + "\n" for name in sorted(g.helpers)]
    parts.append("def generated(x, n, xs):\n" + "\n".join(body) + "\n")
    source = "".join(parts)
    inputs = [(rng.randint(-6, 12), rng.randint(0, 4), [rng.randint(-5, 9) for _ in range(3)])
              for _ in range(3)]
    tensor_args = tuple(rng.random() < 0.75 for _ in range(3))
    if not any(tensor_args):
        tensor_args = (True, False, False)
    return Program(source, inputs, tensor_args)
