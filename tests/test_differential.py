"""Property-based differential tests: generated programs with nested control flow
(if/elif/else, for over ranges, while, break, continue, early return, and/or/not,
conditional expressions) run as plain Python and converted + traced on NumPy scalars;
the results must be equal.

Programs are generated as source text, registered with linecache (so the compiler can read
them, as it reads any file) and exec'd. Values stay small (every product is taken modulo a
constant), so Python ints and int64 agree exactly.
"""

import itertools
import linecache
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograph as ag
from autograph import api

VARS = ("a", "b", "c")
# more examples for a deeper search: AUTOGRAPH_DIFFERENTIAL_EXAMPLES=500 pytest ...
EXAMPLES = int(os.environ.get("AUTOGRAPH_DIFFERENTIAL_EXAMPLES", "25"))
_counter = itertools.count()


@st.composite
def expressions(draw, depth=0, loop_vars=()):
    names = VARS + ("x", "n") + tuple(loop_vars)
    if depth >= 2 or draw(st.booleans()):
        if draw(st.integers(0, 3)) == 0:
            return str(draw(st.integers(-5, 9)))
        return draw(st.sampled_from(names))
    left = draw(expressions(depth + 1, loop_vars))
    right = draw(expressions(depth + 1, loop_vars))
    op = draw(st.sampled_from(["+", "-", "*", "//", "%", "ifexp", "and", "or"]))
    if op == "*":
        return f"(({left}) * ({right})) % 1009"
    if op in ("//", "%"):
        return f"({left}) {op} {draw(st.integers(1, 7))}"
    if op in ("and", "or"):  # on ints these give an operand, as in Python
        return f"(({left}) {op} ({right}))"
    if op == "ifexp":
        return f"(({left}) if {draw(conditions(depth + 1, loop_vars))} else ({right}))"
    return f"({left}) {op} ({right})"


@st.composite
def conditions(draw, depth=0, loop_vars=()):
    kind = draw(st.integers(0, 5 if depth < 2 else 2))
    left = draw(expressions(2, loop_vars))
    if kind == 0:
        return f"{left} > {draw(expressions(2, loop_vars))}"
    if kind == 1:
        return f"({left}) % 2 == 0"
    if kind == 2:
        return f"{left} <= {draw(st.integers(-3, 8))}"
    if kind == 3:
        return f"({draw(conditions(depth + 1, loop_vars))}) and ({draw(conditions(depth + 1, loop_vars))})"
    if kind == 4:
        return f"({draw(conditions(depth + 1, loop_vars))}) or ({draw(conditions(depth + 1, loop_vars))})"
    return f"not ({draw(conditions(depth + 1, loop_vars))})"


@st.composite
def blocks(draw, indent, depth, in_loop, loop_vars=()):
    lines = []
    for _ in range(draw(st.integers(1, 3 if depth == 0 else 2))):
        lines += draw(statements(indent, depth, in_loop, loop_vars))
    return lines


@st.composite
def statements(draw, indent, depth, in_loop, loop_vars=()):
    pad = "    " * indent
    choices = ["assign", "assign", "box"]
    if depth < 2:
        choices += ["if", "if", "for", "while"]
    if in_loop:
        choices += ["break", "continue"]
    choices.append("return")
    kind = draw(st.sampled_from(choices))
    if kind == "box":  # a constant subscript as loop/branch state
        return [f"{pad}box[0] += {draw(expressions(1, loop_vars))}"]
    if kind == "assign":
        var = draw(st.sampled_from(VARS))
        aug = draw(st.sampled_from(["=", "+="]))
        return [f"{pad}{var} {aug} {draw(expressions(0, loop_vars))}"]
    if kind in ("break", "continue"):
        return [f"{pad}if {draw(conditions(1, loop_vars))}:", f"{pad}    {kind}"]
    if kind == "return":
        return [f"{pad}if {draw(conditions(1, loop_vars))}:", f"{pad}    return a, b, c"]
    if kind == "if":
        out = [f"{pad}if {draw(conditions(0, loop_vars))}:"]
        out += draw(blocks(indent + 1, depth + 1, in_loop, loop_vars))
        if draw(st.booleans()):
            out.append(f"{pad}elif {draw(conditions(0, loop_vars))}:")
            out += draw(blocks(indent + 1, depth + 1, in_loop, loop_vars))
        if draw(st.booleans()):
            out.append(f"{pad}else:")
            out += draw(blocks(indent + 1, depth + 1, in_loop, loop_vars))
        return out
    var = f"i{depth}"
    if kind == "for":
        bound = draw(st.sampled_from(["n", "3", "n + 1"]))
        start = draw(st.sampled_from(["", "1, "]))
        out = [f"{pad}for {var} in range({start}{bound}):"]
        out += draw(blocks(indent + 1, depth + 1, True, loop_vars + (var,)))
        if draw(st.integers(0, 3)) == 0:
            out += [f"{pad}else:", f"{pad}    c = c + 1"]
        return out
    # a while loop with a counter bumped first, so it always terminates
    bound = draw(st.sampled_from(["n", "x % 5", "4"]))
    out = [f"{pad}{var} = 0", f"{pad}while {var} < {bound}:", f"{pad}    {var} += 1"]
    out += draw(blocks(indent + 1, depth + 1, True, loop_vars + (var,)))
    if draw(st.integers(0, 3)) == 0:
        out += [f"{pad}else:", f"{pad}    b = b + {var}"]
    return out


@st.composite
def programs(draw):
    body = ["    a = x", "    b = 1", "    c = 0", "    box = [0]"]
    body += draw(blocks(1, 0, False))
    body.append("    return a, b, c + box[0]")
    return "def generated(x, n):\n" + "\n".join(body) + "\n"


def load(source):
    filename = f"<differential-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["generated"]


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(), st.integers(-6, 12), st.integers(0, 5))
def test_converted_and_traced_equals_python(source, x, n):
    fn = load(source)
    expected = fn(x, n)
    converted = api.to_graph(fn)(x, n)
    assert converted == expected, source
    traced = ag.function(fn)(np.int64(x), np.int64(n))
    got = tuple(int(np.asarray(v)) for v in traced)
    assert got == expected, source


@st.composite
def float_programs(draw):
    steps = draw(st.lists(st.sampled_from([
        "    if y > {k}:\n        y = y * 0.5 + {k}\n    else:\n        y = y - 0.25",
        "    while y > {k}:\n        y = y / 2.0 - 0.125",
        "    for i in range(n):\n        y = y * 0.75 + (i * 0.5 if y < {k} else -0.5)",
        "    z = y + {k} if y * y < {k} * 4 else y\n    y = z * 0.5",
    ]), min_size=1, max_size=4))
    ks = [draw(st.integers(0, 6)) for _ in steps]
    body = "\n".join(s.format(k=k) for s, k in zip(steps, ks))
    return f"def generated(x, n):\n    y = x\n{body}\n    return y\n"


@settings(max_examples=max(EXAMPLES * 4 // 5, 1), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(float_programs(), st.floats(-20, 50, allow_nan=False), st.integers(0, 4))
def test_float_programs_converted_and_traced_equal_numpy(source, x, n):
    fn = load(source)
    expected = fn(x, n)
    traced = ag.function(fn)(np.float64(x), np.int64(n))
    np.testing.assert_allclose(np.asarray(traced), expected, rtol=1e-12, atol=1e-12, err_msg=source)


@st.composite
def array_programs(draw):
    steps = draw(st.lists(st.sampled_from([
        "    if np.sum(y) > {k}:\n        y = y * 0.5\n    elif y[0] < -{k}:\n        y = -y\n    else:\n        y = y + 1.0",
        "    for v in x:\n        if v > {k}:\n            continue\n        y = y + v * 0.25",
        "    while np.max(y) > {k} + 1.0:\n        y = y - np.abs(y) * 0.5 - 0.125",
        "    for i in range(n):\n        y = np.where(y > {k}, y - i, y + 0.5)\n        if np.min(y) < -{k} * 4:\n            break",
        "    t = 0.0\n    for v in y:\n        t = t + v if v > 0 else t - v\n    y = y + t * 0.125",
    ]), min_size=1, max_size=4))
    ks = [draw(st.integers(0, 6)) for _ in steps]
    body = "\n".join(s.format(k=k) for s, k in zip(steps, ks))
    return f"def generated(x, n):\n    y = x\n{body}\n    return y\n"


def load_with_numpy(source):
    fn = load(source)
    fn.__globals__["np"] = np
    return fn


@settings(max_examples=max(EXAMPLES * 4 // 5, 1), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(array_programs(), st.lists(st.floats(-20, 20, allow_nan=False), min_size=3, max_size=3),
       st.integers(0, 4))
def test_array_programs_converted_and_traced_equal_numpy(source, values, n):
    fn = load_with_numpy(source)
    x = np.array(values)
    expected = fn(x, n)
    converted = api.to_graph(fn)(x, n)
    np.testing.assert_allclose(converted, expected, rtol=1e-12, atol=1e-12, err_msg=source)
    traced = ag.function(fn)(x, np.int64(n))
    np.testing.assert_allclose(np.asarray(traced), expected, rtol=1e-12, atol=1e-12, err_msg=source)
