"""check_numerics' watch mode (runtime/exec/numerics_plan.py): a graph that can be run again
tests only the results nothing later would show non-finite, and a failing call runs again
with every result tested. Each program here is run in watch mode and in full mode (every
result tested: the reference); both must raise the same error, word for word (the op, the
user's line, the iteration), or both return the same values: a value made non-finite and
then hidden (x / inf, exp(-inf), tanh(inf), where, maximum, a comparison) must still be
reported where it was made. The work is counted: tests in the generated code, exact tests
run (np.isfinite after the cheap sum of squares), calls run again."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, numerics


@pytest.fixture(autouse=True)
def quiet():
    with np.errstate(all="ignore"):
        yield
    assert not ag.config.numerics_checked()


# -- programs: each hides (or not) a NaN or an infinity another way ----------------------------

def hidden_by_divide(x):
    big = x * 1e300                 # overflows for |x| > 1.8e8
    return 1.0 / big                # x / inf = 0: the inf is gone


def hidden_by_exp(x):
    y = np.log(x) * 2.0             # -inf at 0
    return np.exp(y)                # exp(-inf) = 0


def hidden_by_tanh(x):
    return np.tanh(x * x * 1e300)   # tanh(inf) = 1


def inf_minus_inf(x):
    a = x * 1e308 * 10.0
    return np.maximum(a - a, 0.0)   # nan, then maximum keeps it... or a comparison:


def hidden_by_comparison(x):
    y = x * 1e300 * 1e300 + 1.0
    return np.sum((y > 0).astype(np.float64))


def carried_then_hidden(xs, n):
    s = np.zeros_like(xs[0])
    for i in ag.range(n):
        s = s * 1e200 + xs[i]       # overflows at some step, carried
    return np.tanh(s)               # ... and hidden after the loop


def carried_and_masked_each_step(xs, n):
    s = np.zeros_like(xs[0])
    for i in ag.range(n):
        s = np.minimum(s * 1e200 + xs[i], 1.0)   # each step hides the previous inf
    return s


def exp_of_state(xs, n):
    s = np.zeros_like(xs[0])
    for i in ag.range(n):
        s = np.exp(-s) + xs[i]      # a placeholder read by exp: not covered by the carry
    return s


def in_a_branch(x, flag):
    if flag > 0:
        y = np.log(x) + 1.0
    else:
        y = x * 2.0
    return np.where(np.isfinite(y), y, 0.0)


def nested_loops(xs, n):
    total = np.zeros_like(xs[0])
    for i in ag.range(n):
        row = xs[i]
        for j in ag.range(3):
            row = row * row         # squares overflow at some step
        total = total + np.sqrt(row)
    return total


def spin_guard(x, n):
    y = np.float64(0.0)
    for i in ag.range(n):
        x = x * 1e100               # carried: inf at the 4th step for x = 1
        k = np.int64(0)
        while y < x and k < 2000:   # an inf here would make it run to the guard
            y = y + 1.0
            k += 1
    return y


def rounds(x):
    return np.round(x, 10) * 0.0    # np.round(1e300, 10) = inf (x * 1e10 first)


def trig(z):
    return np.sin(z) * 0.5 + np.abs(z) * 0.5    # real: bounded; complex: both can overflow


def magnitude(z):
    return np.abs(z) * 0.5


def scalar_newton(a, n):
    x = a
    for _ in ag.range(n):
        x = x - (x * x - a) / (2.0 * x)
    return x


f64 = np.float64
CASES = [
    (hidden_by_divide, (np.array([1.0, 2e8, 3e8]),)),
    (hidden_by_divide, (np.array([1.0, 2.0]),)),
    (hidden_by_exp, (np.array([1.0, 0.0, 2.0]),)),
    (hidden_by_exp, (np.array([-1.0, 2.0]),)),
    (hidden_by_tanh, (np.array([0.1, 1e5]),)),
    (hidden_by_tanh, (f64(1e5),)),
    (inf_minus_inf, (np.array([0.5, 1.0]),)),
    (inf_minus_inf, (np.array([-1.0, 0.01]),)),
    (hidden_by_comparison, (np.array([1.0, -1.0]),)),
    (carried_then_hidden, (np.full((6, 3), 2.0), np.int64(6))),
    (carried_then_hidden, (np.full((6, 3), 2.0), np.int64(1))),
    (carried_and_masked_each_step, (np.full((6, 3), 2.0), np.int64(6))),
    (exp_of_state, (np.array([[1.0], [-800.0], [1.0], [1.0]]), np.int64(4))),
    (exp_of_state, (np.ones((4, 1)), np.int64(4))),
    (in_a_branch, (np.array([1.0, 0.0]), np.int64(1))),
    (in_a_branch, (np.array([1.0, 0.0]), np.int64(-1))),
    (nested_loops, (np.array([[2.0, 3.0], [1e40, 1.0], [1.0, 1.0]]), np.int64(3))),
    (nested_loops, (np.array([[2.0, 3.0], [1.0, 1.0]]), np.int64(2))),
    (spin_guard, (f64(1.0), np.int64(5))),
    (rounds, (np.array([1.0, 1e300]),)),
    (scalar_newton, (f64(2.0), np.int64(20))),
    (scalar_newton, (f64(0.0), np.int64(5))),
]
# dtypes and shapes: float16/32, complex, 0-d, empty, sums of squares that overflow
CASES += [
    (hidden_by_divide, (np.array([1.0, 3e38], np.float32),)),
    (hidden_by_exp, (np.array([[1.0, 0.0]], np.float16),)),
    (hidden_by_tanh, (np.array([1.0, 300.0], np.float16),)),
    (hidden_by_exp, (np.array([1.0 + 1j, 0.0 + 0j]),)),
    (inf_minus_inf, (np.array([1.0 + 1j, 2.0], np.complex64),)),
    (hidden_by_exp, (np.zeros(0),)),
    (hidden_by_exp, (f64(0.0),)),
    (hidden_by_divide, (np.full(4, 1e-140),)),        # 1e160 each: the sum of squares overflows
    (trig, (np.array([1e308, -1e308]),)),
    (trig, (np.array([1.0 + 800j]),)),                # sin: cosh(800) overflows
    (magnitude, (np.array([1.5e308 + 1.5e308j]),)),       # abs overflows (hypot)
    (magnitude, (np.array([1e308, -1e308]),)),
]


def test_complex_sin_and_abs_are_tested_real_ones_are_not():
    for fn, z, op in ((trig, np.array([1.0 + 800j]), "sin"),
                      (magnitude, np.array([1.5e308 + 1.5e308j]), "abs")):
        with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError) as info:
            ag.function(fn)(z)
        assert str(info.value).startswith(f"check_numerics: {op} made infinity"), info.value
    real = codegen.source_of(graph_of(trig, (np.ones(2),)), check_numerics="full")
    assert "'sin'" not in real and "'abs'" not in real, real


def run(fn, args, mode):
    """('ok', outputs) or ('raised', type, message) for `fn(*args)` compiled in `mode`."""
    graph = ag.function(fn).get_concrete_function(*args).graph
    flat = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    compiled = codegen.compile_graph(graph, None, mode)
    try:
        return ("ok", compiled(*flat))
    except Exception as error:
        return ("raised", type(error), str(error))


@pytest.mark.parametrize("fn, args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_watch_mode_raises_what_full_mode_raises(fn, args):
    full, watch = run(fn, args, "full"), run(fn, args, True)
    assert watch[0] == full[0], (watch, full)
    if full[0] == "raised":
        assert watch[1:] == full[1:]
        assert full[1] is ag.errors.NonFiniteError, full
    else:
        for a, b in zip(watch[1], full[1]):
            np.testing.assert_array_equal(a, b)


def test_the_cases_do_make_nans_and_infinities():
    """(The corpus tests something: most cases fail in full mode, at several ops.)"""
    failing = [run(fn, args, "full") for fn, args in CASES]
    messages = [r[2] for r in failing if r[0] == "raised"]
    assert len(messages) >= 15, messages
    ops = {m.split()[1] for m in messages}
    assert {"multiply", "log", "round_decimals", "divide", "exp"} <= ops, ops
    assert any("iteration 3" in m for m in messages), messages


def graph_of(fn, args):
    return ag.function(fn).get_concrete_function(*args).graph


def count_tests(source):
    return source.count("if not ag_")


def test_a_loop_carried_sum_is_tested_once_after_the_loop():
    from benchmarks.cases.dynamic_rnn import make_dynamic_rnn, rnn_step
    data, h0 = np.ones((2, 40, 3), np.float32), np.zeros((2, 3), np.float32)
    conc = ag.function(make_dynamic_rnn(ag)).get_concrete_function(rnn_step, data, h0)
    full = codegen.source_of(conc.graph, check_numerics="full")
    watch = codegen.source_of(conc.graph, check_numerics=True)
    loop = [line for line in watch.splitlines() if line.lstrip().startswith("for ")]
    assert len(loop) == 1 and count_tests(full) == 1 and count_tests(watch) == 1, watch
    # full mode tests the add inside the loop; watch mode once, after it (less indented)
    indent = len(loop[0]) - len(loop[0].lstrip())
    test = next(line for line in watch.splitlines() if "if not ag_" in line)
    assert len(test) - len(test.lstrip()) == indent, watch
    assert "ag_recheck(" in watch and "ag_recheck(" not in full


def test_watch_mode_tests_fewer_results_and_runs_no_exact_test_when_all_is_finite():
    graph = graph_of(scalar_newton, (f64(2.0), np.int64(20)))
    assert count_tests(codegen.source_of(graph, check_numerics="full")) == 5
    assert count_tests(codegen.source_of(graph, check_numerics=True)) == 2   # 2x, after the loop
    xs = np.full((6, 3), 1e-60)
    graph = graph_of(carried_then_hidden, (xs, np.int64(2)))
    compiled = codegen.compile_graph(graph, None, True)
    exact, rechecks = numerics.EXACT_TESTS[0], numerics.Recheck.calls
    compiled(xs, np.int64(2))      # (1e-60, then 1e140: squares finite too)
    assert numerics.EXACT_TESTS[0] == exact and numerics.Recheck.calls == rechecks


def test_a_finite_array_whose_sum_of_squares_overflows_costs_one_exact_test():
    x = np.full(4, 1e-140)       # big = 1e160: its square overflows, the values do not
    graph = graph_of(hidden_by_divide, (x,))
    compiled = codegen.compile_graph(graph, None, True)
    assert count_tests(codegen.source_of(graph, None, True)) == 2     # big and 1 / big
    before = numerics.EXACT_TESTS[0]
    out, = compiled(x)
    np.testing.assert_array_equal(out, 1.0 / (x * 1e300))
    assert numerics.EXACT_TESTS[0] - before == 1


def test_a_failing_call_runs_again_once_and_a_passing_one_never():
    xs = np.full((6, 3), 2.0)
    graph = graph_of(carried_then_hidden, (xs, np.int64(6)))
    compiled = codegen.compile_graph(graph, None, True)
    calls = numerics.Recheck.calls
    with pytest.raises(ag.errors.NonFiniteError) as info:
        compiled(xs, np.int64(6))
    assert numerics.Recheck.calls == calls + 1
    message = str(info.value)
    assert message.startswith("check_numerics: multiply made infinity (3 of 3 values)"), message
    assert "s = s * 1e200 + xs[i]" in message and "iteration 2" in message, message
    assert info.value.__suppress_context__     # the first run's error is not shown
    compiled(xs, np.int64(1))
    assert numerics.Recheck.calls == calls + 1


def test_a_loop_reading_a_value_is_never_left_to_spin_on_it():
    """spin_guard's inner while loop reads the outer loop's carried x: x's multiply is
    tested at every step (not after the loop), so an inf never reaches the loop's test."""
    graph = graph_of(spin_guard, (f64(1.0), np.int64(5)))
    watch = codegen.source_of(graph, check_numerics=True)
    assert "ag_nonfinite_seen('multiply'" in watch, watch
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError) as info:
        ag.function(spin_guard)(f64(1.0), np.int64(5))
    message = str(info.value)
    assert "multiply made infinity" in message, message
    assert "iteration 3, which began with y = 6000.0" in message, message


def shout(x):
    y = x * 2.0
    ag.print("y", y)
    return np.log(y)


def test_graphs_with_effects_are_compiled_in_full_mode_and_run_once(capsys):
    graph = graph_of(shout, (np.array([1.0, -1.0]),))
    source = codegen.source_of(graph, check_numerics=True)
    assert source == codegen.source_of(graph, check_numerics="full")
    assert "ag_recheck" not in source
    capsys.readouterr()
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError, match="log"):
        ag.function(shout)(np.array([1.0, -1.0]))
    assert capsys.readouterr().out.count("y [") == 1      # printed once: never run again
    v = ag.Variable(np.ones(2))

    def assigns(x):
        v.assign(v * x)
        return np.log(v)
    graph = graph_of(assigns, (np.array([1.0, 2.0]),))
    assert "ag_recheck" not in codegen.source_of(graph, check_numerics=True)


def test_gradient_graphs_are_watched_and_report_the_forward_line():
    def f(x):
        return np.sum(np.sqrt(x) * 3.0)
    g = ag.function(ag.grad(f))
    graph = g.get_concrete_function(np.ones(2)).graph
    assert "ag_recheck" in codegen.source_of(graph, check_numerics=True)
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError) as info:
        g(np.array([1.0, 0.0]))
    assert "divide made infinity (1 of 2 values)" in str(info.value)
    assert "np.sum(np.sqrt(x) * 3.0)" in str(info.value)


def test_a_complex_value_not_finite_in_both_parts_counts_once():
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError) as info:
        ag.function(inf_minus_inf)(np.array([1.0 + 1j, 2.0], np.complex64))
    assert "(2 of 2 values)" in str(info.value), str(info.value)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_the_exact_test_runs_only_when_the_sum_of_squares_is_not_finite(dtype):
    test = numerics._all_finite_numpy if np.dtype(dtype).kind == "f" \
        else numerics._all_finite_numpy_complex
    big = np.finfo(dtype).max
    for values, exact in (([1.0, 2.0], 0), ([big, big], 1), ([1.0, np.nan], 1),
                          ([np.inf, 1.0], 1), ([-np.inf], 1)):
        a = np.array(values).astype(dtype)
        before = numerics.EXACT_TESTS[0]
        assert test(a) == bool(np.isfinite(a).all())
        assert numerics.EXACT_TESTS[0] - before == exact, (values, dtype)


def test_random_programs_raise_the_same_in_both_modes():
    """A sample of benchmarks/check_numerics_fuzz.py (2,000 programs there): expression
    trees of arithmetic, exp/log/sqrt/tanh, where, maximum, conds, counted loops and loops
    until a bound, on arguments near 0 and near overflow."""
    from benchmarks import check_numerics_fuzz as fuzz
    assert fuzz.run(25, seed=1) >= 8      # (and every run agreed: fuzz.check asserts)


def sqrt_steps(x, n):
    s = np.float64(0.0)
    for i in ag.range(n):
        s = s + np.sum(np.sqrt(x * (i - 1.0) ** 2))   # sqrt(0) at i = 1
    return s


def test_a_gradients_backward_loop_is_watched_and_reports_like_full_mode():
    grad = ag.grad(sqrt_steps)
    args = (np.ones(2), np.int64(3))
    graph = ag.function(grad).get_concrete_function(*args).graph
    watch = codegen.source_of(graph, check_numerics=True)
    full = codegen.source_of(graph, check_numerics="full")
    assert count_tests(watch) < count_tests(full), watch
    # the backward loop counts down (`while j > 0`, j = j - 1): it ends, so what it
    # carries is tested once after it
    assert "_grad" in watch and "('while_loop'" in watch, watch
    compiled = {mode: codegen.compile_graph(graph, None, mode) for mode in (True, "full")}
    messages = []
    for mode, fn in compiled.items():
        with pytest.raises(ag.errors.NonFiniteError) as info:
            fn(*args)
        messages.append(str(info.value))
    assert messages[0] == messages[1], messages
    assert "divide made infinity" in messages[0] and "np.sqrt(x * (" in messages[0], messages
    ok = (np.array([2.0, 3.0]), np.int64(1))
    np.testing.assert_array_equal(compiled[True](*ok)[0], compiled["full"](*ok)[0])


def nan_index(x, xs):
    a = x * 2.0                                 # NaN from x: tested only by the last add...
    k = np.minimum(a, 2.0).astype(np.int64)     # ... but first a garbage index from it
    return xs[k] + a


def test_another_error_a_nan_caused_first_is_replaced_by_full_modes():
    args = (np.float64(np.nan), np.arange(3.0))
    graph = graph_of(nan_index, args)
    assert "ag_nonfinite_seen('multiply'" not in codegen.source_of(graph, None, True)
    with pytest.raises(IndexError):             # what watch mode's code runs into
        codegen.compile_graph(graph, None, False)(*args)
    calls = numerics.Recheck.calls
    full, watch = run(nan_index, args, "full"), run(nan_index, args, True)
    assert watch == full and full[1] is ag.errors.NonFiniteError, (watch, full)
    assert "multiply made NaN, an input held NaN or infinity already" in full[2], full
    assert numerics.Recheck.calls == calls + 1


def test_when_the_run_again_raises_nothing_the_first_error_stands(monkeypatch):
    xs = np.full((6, 3), 2.0)
    graph = graph_of(carried_then_hidden, (xs, np.int64(6)))
    compiled = codegen.compile_graph(graph, None, True)
    real = codegen.compile_graph
    monkeypatch.setattr(codegen, "compile_graph", lambda g, device=None, check_numerics=None:
                        (lambda *a: None) if check_numerics == "full" else real(g, device,
                                                                                 check_numerics))
    with pytest.raises(ag.errors.NonFiniteError) as info:
        compiled(xs, np.int64(6))
    message = str(info.value)
    assert message.startswith("check_numerics: the result of while_loop holds 3 values of 3 "
                              "that are not finite (the call run again"), message
