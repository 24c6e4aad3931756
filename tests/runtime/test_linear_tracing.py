"""Tracing a function whose `return`s sit under nested tensor `if`s (or in tensor loops)
does work linear in the nesting depth: every branch function is traced once. (A trial trace
of each branch to learn the return value's type made it 2**depth.) Work is counted, never
timed: the calls of the generated branch and loop functions while tracing."""

import linecache
import sys

import numpy as np
import pytest

import autograph as ag


def _compile(lines, name):
    src = "\n".join(lines) + "\n"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"np": np}
    exec(compile(src, name, "exec"), ns)
    return ns["f"]


def nested_ifs(depth):
    """`depth` nested tensor ifs, each of which may return; statements after each `if`
    keep the returns in flag form (retval_ undefined on the paths that do not return)."""
    lines = ["def f(x):", "    y = x"]

    def level(d, ind):
        if d == depth:
            lines.append(f"{ind}y = y + 1")
            return
        lines.extend([f"{ind}if x > {d}:", f"{ind}    if y > {d + 100}:", f"{ind}        return y * {d}"])
        level(d + 1, ind + "    ")
        lines.extend(f"{ind}y = y + {k}" for k in range(4))

    level(0, "    ")
    lines.append("    return y - 1")
    return _compile(lines, f"<nested_ifs_{depth}>")


def nested_loops(depth, kind):
    """`depth` nested tensor loops; each may return after its inner loop."""
    lines = ["def f(x, n):", "    y = x"]

    def level(d, ind):
        if d == depth:
            lines.append(f"{ind}y = y + 1")
            return
        if kind == "while":
            lines.extend([f"{ind}i{d} = 0", f"{ind}while i{d} < n:", f"{ind}    i{d} = i{d} + 1"])
        else:
            lines.append(f"{ind}for i{d} in range(n):")
        level(d + 1, ind + "    ")
        lines.extend([f"{ind}    if y > {d + 50}:", f"{ind}        return y * {d}"])

    level(0, "    ")
    lines.append("    return y - 1")
    return _compile(lines, f"<nested_{kind}_{depth}>")


def generated_calls(f, specs):
    """(concrete function, calls of converted code's functions while tracing f)."""
    fn = ag.function(f)
    count = 0

    def profiler(frame, event, arg):
        nonlocal count
        if event == "call" and frame.f_code.co_filename.startswith("<autograph"):
            count += 1

    sys.setprofile(profiler)
    try:
        conc = fn.get_concrete_function(*specs)
    finally:
        sys.setprofile(None)
    return conc, count


F64 = ag.TensorSpec([], np.float64)
I64 = ag.TensorSpec([], np.int64)


@pytest.mark.parametrize("depth", [1, 3, 6])
def test_nested_ifs_with_returns_match_python(depth):
    f = nested_ifs(depth)
    conc, _ = generated_calls(f, [F64])
    for v in (-1.0, 0.5, 1.5, 3.5, 100.5, 102.0, 150.0):
        assert np.allclose(conc(np.float64(v)), f(v)), v


def test_nested_ifs_with_returns_trace_each_branch_once():
    counts = {d: generated_calls(nested_ifs(d), [F64])[1] for d in (4, 8, 16, 24)}
    per_level = (counts[8] - counts[4]) / 4
    # every level adds the same work: its branch functions, each traced once
    assert counts[16] - counts[8] == pytest.approx(8 * per_level)
    assert counts[24] - counts[16] == pytest.approx(8 * per_level)
    assert per_level <= 8, counts   # a level has 6 branch functions + its `not do_return` ifs


@pytest.mark.parametrize("kind", ["while", "for"])
def test_nested_loops_with_returns_match_python(kind):
    f = nested_loops(3, kind)
    conc, _ = generated_calls(f, [F64, I64])
    for v, n in ((-1.0, 2), (0.5, 3), (48.0, 2), (49.5, 1), (3.0, 0)):
        assert np.allclose(conc(np.float64(v), np.int64(n)), f(v, n)), (v, n)


def test_loop_with_return_is_traced_once_after_learning_its_type():
    # one trial trace learns the return value's type; the loop itself is then traced once
    # (a weak scalar placeholder used to make it trace again to relax the dtype)
    f = nested_loops(1, "while")
    body = "loop_body"
    calls = {"n": 0}

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code.co_name == body:
            calls["n"] += 1

    sys.setprofile(profiler)
    try:
        ag.function(f).get_concrete_function(F64, I64)
    finally:
        sys.setprofile(None)
    assert calls["n"] == 2


def test_return_value_filled_in_a_branch_keeps_its_type():
    # the branch that does not return gets a placeholder of the other branch's type
    @ag.function
    def f(x, flag):
        out = x
        if flag > 0:
            if x[0] > 1:
                return x.astype(np.float32) * 2
            out = out + 1
        out = out - 1
        return out.astype(np.float32)

    x = np.array([2.0, 3.0])
    for flag in (0, 1):
        got = f(x, np.int64(flag))
        want = f.python_function(x, flag)
        assert got.dtype == np.float32 and np.allclose(got, want)
    x = np.array([0.5, 3.0])
    assert np.allclose(f(x, np.int64(1)), f.python_function(x, 1))


def test_one_branch_binding_under_return_placeholders_checked_where_read():
    # 'z' is bound in one branch of a tensor `if` only: the graph raises Python's
    # UnboundLocalError, naming 'z' and the `if`, on the path where Python raises, and
    # gives Python's answer on the others
    def f(x):
        if x > 0:
            if x > 5:
                return x
            if x > 1:
                z = 1
            else:
                w = 2  # noqa: F841
            x = x + z
            x = x + z
            x = x + z
            x = x + z
        x = x * 2
        x = x * 2
        x = x * 2
        x = x * 2
        return x

    g = ag.function(f)
    for x in (-1.0, 3.0, 7.0):
        assert g(np.float64(x)) == f(x)
    with pytest.raises(UnboundLocalError, match="'z' is assigned in only one branch"):
        g(np.float64(1.0))
    with pytest.raises(UnboundLocalError):
        f(1.0)
