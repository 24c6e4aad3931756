"""Chains of elementwise ops fused into one Numba loop in generated NumPy code (issue 30,
goal 3; autograph/runtime/exec/fused_chains.py and fused_kernel.py).

Counted, never timed: the chains (`k_chain` calls) in the generated source and the calls
the fused loops ran (`fused_kernel.stats`). Every program is compared with the interpreter
(or, for optimizer steps that change Variables, with the same program unfused and with
NumPy by hand): the loop does NumPy's float operations one element at a time, so the
results are equal, not close. Chains the plan must refuse (broadcasting, mixed dtypes)
stay unfused; a kernel Numba refuses leaves the NumPy form running."""

import numpy as np
import pytest

pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec import codegen, fused_chains, fused_kernel  # noqa: E402
from tests.runtime.tracing import run, trace  # noqa: E402

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _hot_at_once(monkeypatch):
    """Fused from the first call (a program's chains otherwise run NumPy twice first)."""
    monkeypatch.setattr(fused_kernel, "HOT_AFTER", 0)
    monkeypatch.setattr(fused_chains, "LARGE", 0)      # small arrays: fused all the same
    monkeypatch.delenv("AUTOGRAPH_FUSE", raising=False)


def _same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))   # -0.0 vs 0.0


def _check(fn, *args, chains, fused=True, left=()):
    """`fn` traced on `args`: the generated code holds `chains` fused chains and the NumPy
    calls named in `left`, and its outputs (twice: nothing leaks into the next call) equal
    the interpreter's bit for bit; the user's arrays are unchanged. (test_fused_broadcasts
    checks with it too.)"""
    kept = [np.array(a, copy=True) for a in args]
    g, _ = trace(fn, *args)
    src = codegen.source_of(g)
    assert src.count("= k_chain") == chains, src
    want = run(g, args, "interpreter")
    before = fused_kernel.stats()["fused_calls"]
    for _ in range(2):
        for w, a in zip(want, run(g, args, "codegen")):
            _same_bits(a, w)
    assert fused_kernel.stats()["fused_calls"] - before == (2 * chains if fused else 0)
    for a, k in zip(args, kept):
        np.testing.assert_array_equal(a, k)
    for call in left:
        assert call in src, src
    return src


def test_a_chain_with_values_read_after_it(dtype=np.float64):   # (float32: the Adam tests)
    x = RNG.standard_normal((40, 30)).astype(dtype)
    y = np.abs(RNG.standard_normal((40, 30))).astype(dtype)
    s = dtype(0.25)

    def f(x, y, s):
        a = x * s + y            # read after the chain: one of its outputs
        b = np.sqrt(y) / (a - 3.0)
        c = -(b * b) + a
        return a, c.sum(), c     # a reduction ends the chain

    src = _check(f, x, y, s, chains=1)
    assert "k_multiply" not in src and "k_sqrt" not in src


def test_relu_gradient_with_nan_and_signed_zero():
    """maximum/where/comparisons as the ReLU's gradient stages them, on +-0 (the loop),
    and on NaN and +-inf (NumPy computes those again: see the errstate test)."""
    x = np.array([[-0.0, 0.0, 1.5, -2.0, 3.0, -1.0, 1e-30, -1e30]] * 4, np.float32)
    g = RNG.standard_normal(x.shape).astype(np.float32)
    special = x.copy()
    special[:, 2:5] = [np.nan, np.inf, -np.inf]

    def f(x, g):
        h = np.maximum(x, 0.0) * 2.0 + np.minimum(x, 1.0)
        d = np.where(x > 0, g, np.where(x == 0, g * 0.5, 0.0 * g))
        return h, d * (x >= -1.0)

    _check(f, x, g, chains=1)     # (the bool -> float cast of the mask ends it)
    _check(f, special, g, chains=1, fused=False)


def test_transposed_and_broadcast_inputs():
    """A strided input (a transpose) is read correctly; a bias-like broadcast input joins a
    chain (tests/runtime/test_fused_broadcasts.py), other broadcasts and a mixed dtype do
    not."""
    x = RNG.standard_normal((20, 30))
    y = RNG.standard_normal((30, 20))
    b = RNG.standard_normal(30)

    def f(x, y):
        return x * 3.0 - 1.0 + y.T

    _check(f, x, y, chains=1)

    def g(x, b):
        return (x * 2.0 + b) * b - b          # b broadcasts along the rows: fused

    _check(g, x, b, chains=1)

    def g2(x, c):
        return (x * 2.0 + c) * c - c          # (5, 1) against (4, 5, 6): not fused

    _check(g2, RNG.standard_normal((4, 5, 6)), RNG.standard_normal((5, 1)), chains=0)

    def h(x):
        x32 = x.astype(np.float32)
        return x32 * np.float32(2.0) + x * 1.0 - 1.0    # float32 meets float64: not fused

    src = _check(h, x, chains=0)
    assert "k_chain" not in src


# (the tests below reuse one structure, `a * 3.0 - 1.0 + b`: one Numba compile for all)

def test_two_runs_are_two_chains():
    x, y = RNG.standard_normal(64), RNG.standard_normal(64)

    def f(x, y):
        a = x * 3.0 - 1.0 + y
        m = np.exp(a)                         # ends the run (not an exact op here)
        return m * 3.0 - 1.0 + a

    src = _check(f, x, y, chains=2)
    assert "k_exp(" in src


def _mlp_adam_step(dtype, seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(12, 16), (16,), (16, 5), (5,)]
    vars_ = [ag.Variable((rng.standard_normal(s) * 0.3).astype(dtype), name=f"p{i}")
             for i, s in enumerate(shapes)]
    opt = ag.optimizers.Adam(0.01)
    opt.build(vars_)

    @ag.function
    def step(x, y):
        with ag.GradientTape() as tape:
            h = np.maximum(x @ vars_[0] + vars_[1], 0)
            z = h @ vars_[2] + vars_[3]
            loss = np.mean((z - y) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, vars_), vars_))
        return loss

    return step, vars_, opt


def test_adam_step_fuses_each_update_and_equals_the_unfused_program(monkeypatch):
    dtype = np.float32
    x = RNG.standard_normal((8, 12)).astype(dtype)
    y = RNG.standard_normal((8, 5)).astype(dtype)
    step, vars_, opt = _mlp_adam_step(dtype)
    monkeypatch.setenv("AUTOGRAPH_FUSE", "0")
    ref_step, ref_vars, ref_opt = _mlp_adam_step(dtype)
    losses = [ref_step(x, y) for _ in range(3)]
    monkeypatch.delenv("AUTOGRAPH_FUSE")
    before = fused_kernel.stats()["fused_calls"]
    for want in losses:
        assert step(x, y) == want
    src = codegen.source_of(step.get_concrete_function(x, y)._graph_to_run())
    # one loop per parameter's Adam update, the ReLU's gradient with its bias gradient's
    # sum, the output layer's bias add with the loss's subtract and square, the loss's
    # gradient with its bias gradient's sum: fused on every step
    assert src.count("= k_chain") == 7
    assert src.count("k_sum_to_shape") == 0
    assert fused_kernel.stats()["fused_calls"] - before == 3 * 7
    for v, r in zip(vars_, ref_vars):
        np.testing.assert_array_equal(v.numpy(), r.numpy())
        for slot in ("m", "v"):
            np.testing.assert_array_equal(opt.get_slot(v, slot).numpy(),
                                          ref_opt.get_slot(r, slot).numpy())


def test_adam_update_equals_numpy_by_hand():
    w0 = RNG.standard_normal((30, 20)).astype(np.float32)
    w = ag.Variable(w0.copy(), name="w")
    opt = ag.optimizers.Adam(0.01)
    opt.build([w])

    @ag.function
    def step(g):
        opt.apply_gradients([(g * 1.0, w)])
        return w.read_value()

    grads = [RNG.standard_normal((30, 20)).astype(np.float32) for _ in range(3)]
    outs = [step(g) for g in grads]
    m, v, ref = np.zeros_like(w0), np.zeros_like(w0), w0
    f = np.float32
    for t, g in enumerate(grads, start=1):
        m = f(0.9) * m + (f(1) - f(0.9)) * g       # (1 - beta) in float32, as Adam does
        v = f(0.999) * v + (f(1) - f(0.999)) * (g * g)
        alpha = f(0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t))
        ref = ref - alpha * m / (np.sqrt(v) + f(1e-7))
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-6, atol=1e-6)
    # a returned value is never written again by a later step
    assert not np.shares_memory(outs[0], outs[1])
    np.testing.assert_allclose(opt.get_slot(w, "v").numpy(), v, rtol=1e-6, atol=1e-9)


def test_a_read_of_a_variable_assigned_in_the_run_ends_it():
    v = ag.Variable(np.zeros(50), name="v")

    @ag.function
    def f(x, y):
        v.assign(x * 3.0 - 1.0 + y)
        return v.read_value() * 3.0 - 1.0 + x

    x, y = RNG.standard_normal(50), RNG.standard_normal(50)
    np.testing.assert_array_equal(f(x, y), (x * 3.0 - 1.0 + y) * 3.0 - 1.0 + x)
    np.testing.assert_array_equal(v.numpy(), x * 3.0 - 1.0 + y)
    src = codegen.source_of(f.get_concrete_function(x, y)._graph_to_run())
    assert src.count("= k_chain") == 2


def test_first_calls_run_numpy_then_the_loop(monkeypatch):
    monkeypatch.setattr(fused_kernel, "HOT_AFTER", 2)
    x, y = RNG.standard_normal(100), RNG.standard_normal(100)
    g, _ = trace(lambda x, y: x * 3.0 - 1.0 + y, x, y)
    fn = codegen.compile_graph(g)
    want = run(g, [x, y], "interpreter")[0]
    stats = [fused_kernel.stats()]
    for _ in range(3):
        np.testing.assert_array_equal(fn(x, y)[0], want)
        stats.append(fused_kernel.stats())
    numpy = [b["numpy_calls"] - a["numpy_calls"] for a, b in zip(stats, stats[1:])]
    fused = [b["fused_calls"] - a["fused_calls"] for a, b in zip(stats, stats[1:])]
    assert numpy == [1, 1, 0] and fused == [0, 0, 1]


def test_off_switch_and_a_refused_kernel(monkeypatch):
    x = RNG.standard_normal(100)

    def f(x):
        return x * 3.0 - 1.0 + x * x

    monkeypatch.setenv("AUTOGRAPH_FUSE", "0")
    g, _ = trace(f, x)
    assert "k_chain" not in codegen.source_of(g)
    monkeypatch.delenv("AUTOGRAPH_FUSE")

    def refuses(*args):
        raise TypeError("Numba refused")

    monkeypatch.setattr(fused_kernel, "_kernel", lambda *a: refuses)
    g, _ = trace(f, x)
    fn = codegen.compile_graph(g)
    before = fused_kernel.stats()
    for _ in range(2):
        np.testing.assert_array_equal(fn(x)[0], run(g, [x], "interpreter")[0])
    after = fused_kernel.stats()
    assert after["fused_calls"] == before["fused_calls"]
    assert after["numpy_calls"] - before["numpy_calls"] == 2


def test_the_kernel_source_depends_on_structure_only():
    """Two chains of one structure on other shapes and constants: one kernel text."""
    def f(x, y):
        return x * 0.5 + y * 0.25 - x

    texts = set()
    for shape in ((7,), (3, 9)):
        x, y = RNG.standard_normal(shape), RNG.standard_normal(shape)
        g, _ = trace(f, x, y)
        last, _ = fused_chains.plan(g)
        (chain,) = last.values()
        loop, _, results = chain.source()
        texts.add(fused_kernel.kernel_source("k", len(chain.arrays), len(chain.scalars),
                                             loop, results))
    assert len(texts) == 1


def test_a_fused_update_loses_nothing_to_other_threads():
    """`v.assign_add(chain)` fused: the read, the loop and the write hold v's lock, as
    update_variable's kernel does (tests/runtime/test_variable_threads.py)."""
    import sys
    import threading
    v = ag.Variable(np.zeros(64), name="v")

    @ag.function
    def f(x, y):
        v.assign_add(x * 3.0 - 1.0 + y)

    x, y = np.full(64, 0.5), np.full(64, 0.5)     # each call adds 1.0 exactly
    f(x, y)
    src = codegen.source_of(f.get_concrete_function(x, y)._graph_to_run())
    assert src.count("= k_chain") == 0 and src.count("k_chain") == 1   # (no other output)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=lambda: [f(x, y) for _ in range(100)])
                   for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    np.testing.assert_array_equal(v.numpy(), np.full(64, 401.0))


def test_short_chains_on_small_arrays_stay_numpy(monkeypatch):
    monkeypatch.setattr(fused_chains, "LARGE", 1 << 15)
    small, large = RNG.standard_normal(2048), RNG.standard_normal(1 << 14)

    def short(x):
        return x * 3.0 - 1.0 + x               # 3 ops: fused from 2**15 / 3 elements on

    def long(x):
        return ((x * 3.0 - 1.0 + x) * 2.0 - x) * x + 1.0 - x     # 8 ops: always fused

    assert "k_chain" not in codegen.source_of(trace(short, small)[0])
    assert "k_chain" in codegen.source_of(trace(short, large)[0])
    assert "k_chain" in codegen.source_of(trace(long, small)[0])


def test_the_trace_cache_keeps_a_chain_as_its_recipe():
    """A trace whose code calls a chain stays cacheable: the chain is written as plain data
    and rebuilt when the trace loads (function/trace_cache.py)."""
    import marshal

    from autograph.function import trace_cache
    x, y = RNG.standard_normal(64), RNG.standard_normal(64)
    g, _ = trace(lambda x, y: x * 3.0 - 1.0 + y, x, y)
    fn = codegen.compile_graph(g)
    chain = next(v for v in fn.__globals__.values() if isinstance(v, fused_kernel.Chain))
    described = marshal.loads(marshal.dumps(trace_cache._describe_global(chain)))
    again = trace_cache._decode_global(described)
    assert isinstance(again, fused_kernel.Chain) and again is not chain
    args = (x, y, np.float64(3.0), np.float64(1.0))
    for _ in range(2):
        np.testing.assert_array_equal(again(*args)[0], chain(*args)[0])


def test_errstate_warnings_and_errors_come_as_from_numpy():
    """An inf or NaN in any value of the loop (even one the outputs do not show) makes
    NumPy compute the chain again: its RuntimeWarning, or np.errstate's
    FloatingPointError, comes as without fusion, with the same values."""
    x, y = RNG.standard_normal(64), RNG.standard_normal(64)
    x[3] = 0.0
    g, _ = trace(lambda x, y: 1.0 / (y / x) * 3.0 - 1.0 + y, x, y)    # y / 0 = inf, then 0
    fn = codegen.compile_graph(g)
    with np.errstate(divide="ignore"):
        want = run(g, [x, y], "interpreter")[0]
    before = fused_kernel.stats()
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        got = fn(x, y)[0]
    np.testing.assert_array_equal(got, want)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        fn(x, y)
    assert fused_kernel.stats()["numpy_calls"] - before["numpy_calls"] == 2
    x[3] = 1.0
    with np.errstate(divide="raise", invalid="raise", over="raise"):
        np.testing.assert_array_equal(fn(x, y)[0], run(g, [x, y], "interpreter")[0])
    assert fused_kernel.stats()["fused_calls"] - before["fused_calls"] == 1
