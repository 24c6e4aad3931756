"""Fused chains with broadcast operands and a trailing sum over the leading axes (issue 30,
goal 3; autograph/runtime/exec/fused_blocks.py, fused_chains.py, fused_kernel's
two-deep loop).

Counted, never timed: the chains (`k_chain` calls) and the NumPy calls left in the generated
source, and the calls the fused loops ran. Every program is compared bit for bit (signs of
zeros included) with the interpreter, in float32 and float64, for every broadcast pattern
the loop indexes: an inner block (a bias: shape[k:], with or without leading ones), an outer
one (a column: shape[:k] then ones), both in one chain, at splits k = 1 and 2; gradients
whose bias sums are fused are compared with the unfused program and with central
differences."""

import re

import numpy as np
import pytest

pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec import codegen, fused_chains, fused_kernel  # noqa: E402
from tests.runtime.test_fused_chains import (  # noqa: E402,F401 (an autouse fixture)
    _check, _hot_at_once, _same_bits)
from tests.runtime.tracing import run, trace  # noqa: E402

RNG = np.random.default_rng(11)
DTYPES = (np.float32, np.float64)


PATTERNS = [   # (chain shape, broadcast operand shapes): every split and kind the loop takes
    ((6, 7), [(7,)]),                  # a bias (inner, k = 1)
    ((6, 7), [(1, 7)]),                # the same with its leading one kept
    ((4, 5, 3), [(5, 3)]),             # inner, k = 1
    ((4, 5, 3), [(3,)]),               # inner, k = 2
    ((4, 1, 3), [(1, 3)]),             # ones inside the shape
    ((6, 7), [(6, 1)]),                # a column (outer, k = 1)
    ((4, 5, 3), [(4, 1, 1)]),          # outer, k = 1
    ((6, 7), [(7,), (6, 1)]),          # both in one chain
    ((4, 5, 3), [(3,), (4, 5, 1)]),    # inner and outer, k = 2
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_broadcast_pattern_equals_the_interpreter(dtype):
    """float64: every pattern; float32: an inner and an outer operand in one chain at both
    splits. (The kernel's text depends on which operands broadcast how, never on shapes or
    the split: three kernels for float64, one for float32; each compile costs ~0.5 s.)"""
    c = dtype(0.5)

    def f(x, *bs):
        h = x * c
        for b in bs:
            h = h + b
        return np.maximum(h * b - x, 0.0 * x)      # 0.0 * x: -0.0 where x < 0

    for shape, operands in PATTERNS if dtype is np.float64 else PATTERNS[-2:]:
        x = RNG.standard_normal(shape).astype(dtype)
        ops = [RNG.standard_normal(s).astype(dtype) for s in operands]
        _check(f, x, *ops, chains=1)


def _planned(fn, *args):
    g, _ = trace(fn, *args)
    return list(fused_chains.plan(g)[0].values())


def test_broadcasts_the_loop_does_not_index_stay_unfused():
    """(5, 1) against (4, 5, 6) is neither block; two operands needing different splits
    end the chain at the second."""
    x = RNG.standard_normal((4, 5, 6))

    def f(x, c):
        return (x * 2.0 + c) * c - c

    assert _planned(f, x, RNG.standard_normal((5, 1))) == []
    assert [c.split for c in _planned(f, x, RNG.standard_normal((5, 6)))] == [1]

    def g(x, a, b):
        h = x * 2.0 + a                        # a: inner at k = 1
        return (h * 3.0 + b) * b - 1.0         # b: outer at k = 2 only -> a second chain

    chains = _planned(g, x, RNG.standard_normal((5, 6)), RNG.standard_normal((4, 5, 1)))
    assert [(c.split, c.kinds, len(c.members)) for c in chains] == [(1, "fi", 3),
                                                                    (2, "fo", 3)]


def _mlp(dtype, seed, shapes=((5, 8), (8,), (8, 3), (3,))):
    rng = np.random.default_rng(seed)
    return [ag.Variable((rng.standard_normal(s) * 0.5).astype(dtype), name=f"p{i}")
            for i, s in enumerate(shapes)]


def _grads_fn(vars_):
    @ag.function
    def grads(x, y):
        with ag.GradientTape() as tape:
            h = np.maximum(x @ vars_[0] + vars_[1], 0.0)
            z = h @ vars_[2] + vars_[3]
            loss = np.sum((z - y) ** 2) * 0.5
        return [loss] + tape.gradient(loss, vars_)
    return grads


def test_a_bias_gradient_summed_in_the_loop_equals_unfused_and_finite_differences(
        monkeypatch, dtype=np.float64):
    """The ReLU's gradient and the bias gradient's sum over the batch are one loop; the
    gradients equal the unfused program's bit for bit (a hidden unit dead on every row
    makes its bias gradient a sum of signed zeros: +0.0, as NumPy's sum from +0.0 gives)
    and central differences. (float32: test_fused_chains.py's Adam step, whose bias
    gradients are summed in the loop, equals the unfused program bit for bit.)"""
    x = RNG.standard_normal((6, 5)).astype(dtype)
    y = RNG.standard_normal((6, 3)).astype(dtype)
    fused_vars = _mlp(dtype, 1)
    fused_vars[1].assign(np.where(np.arange(8) == 2, -50.0, 0.1).astype(dtype))  # unit 2 dead
    grads = _grads_fn(fused_vars)
    monkeypatch.setenv("AUTOGRAPH_FUSE", "0")
    ref_vars = _mlp(dtype, 1)
    ref_vars[1].assign(fused_vars[1].numpy())
    want = [np.asarray(v) for v in _grads_fn(ref_vars)(x, y)]
    monkeypatch.delenv("AUTOGRAPH_FUSE")
    got = [np.asarray(v) for v in grads(x, y)]
    src = codegen.source_of(grads.get_concrete_function(x, y)._graph_to_run())
    assert src.count("= k_chain") == 3 and "k_sum_to_shape" not in src, src  # both sums
    # the ReLU gradient, a chain's output but not its last member's, is dropped after its
    # last read (codegen releases every output a chain's call binds)
    relu_grad = re.search(r"(\w+), \w+ = k_chain_2\(", src).group(1)
    assert re.search(rf"\n\s*del [^\n]*\b{relu_grad}\b", src), src
    for g, w in zip(got, want):
        _same_bits(g, w)
    assert got[2][2] == 0 and not np.signbit(got[2][2])
    if True:
        def loss(params):
            h = np.maximum(x @ params[0] + params[1], 0.0)
            return np.sum((h @ params[2] + params[3] - y) ** 2) * 0.5
        params = [v.numpy().copy() for v in fused_vars]
        for i in (1, 3):                        # the two biases: their sums are fused
            num = np.zeros_like(params[i])
            for j in range(params[i].size):
                up = [p.copy() for p in params]
                dn = [p.copy() for p in params]
                up[i].flat[j] += 1e-6
                dn[i].flat[j] -= 1e-6
                num.flat[j] = (loss(up) - loss(dn)) / 2e-6
            np.testing.assert_allclose(got[i + 1], num, rtol=1e-6, atol=1e-8)


def test_sums_the_loop_does_not_take_stay_numpy(monkeypatch):
    """A sum to a column (over the last axis: NumPy sums a row pairwise) and a sum keeping
    one element per row stay NumPy calls, with the same results. (The chains before them
    run their NumPy form here: what is checked is the plan, and no compile is needed.)"""
    monkeypatch.setattr(fused_kernel, "HOT_AFTER", 2)
    x = RNG.standard_normal((6, 7))
    col = ag.Variable(RNG.standard_normal((6, 1)), name="col")
    one = ag.Variable(RNG.standard_normal(1), name="one")

    @ag.function
    def grads(x):
        with ag.GradientTape() as tape:
            a = np.sum((x * 2.0 + col) * x)                 # d/dcol: x summed along rows
            b = np.sum((x[:, :1] * 2.0 + one) * x[:, :1])   # d/done: x[:, 0] summed
            loss = a + b
        return tape.gradient(loss, [col, one])

    got = grads(x)
    src = codegen.source_of(grads.get_concrete_function(x)._graph_to_run())
    assert src.count("k_sum_to_shape") == 2, src
    np.testing.assert_allclose(got[0], np.sum(x, axis=1, keepdims=True), rtol=1e-13)
    np.testing.assert_allclose(got[1], np.sum(x[:, :1], axis=0), rtol=1e-13)


def test_an_overflowing_sum_warns_and_raises_as_numpy_does():
    """A bias gradient that overflows float32: the loop reports it and NumPy computes the
    sum again, so np.errstate's warnings and errors are NumPy's."""
    w = ag.Variable(np.ones(4, np.float32), name="w")

    @ag.function
    def grad(x):
        with ag.GradientTape() as tape:
            loss = np.sum(np.maximum(x + w, 0.0) * x)
        return tape.gradient(loss, w)

    ones = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(grad(ones), np.full(4, 3.0))
    src = codegen.source_of(grad.get_concrete_function(ones)._graph_to_run())
    assert "k_sum_to_shape" not in src, src          # the sum is the loop's
    x = np.full((3, 4), 3e38, np.float32)            # 3 x 3e38 overflows float32
    before = fused_kernel.stats()["numpy_calls"]
    with np.errstate(over="ignore"):
        got = grad(x)
    assert np.all(np.isinf(got)) and fused_kernel.stats()["numpy_calls"] > before
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        grad(x)
    with np.errstate(over="warn"), pytest.warns(RuntimeWarning, match="overflow"):
        grad(x)
    np.testing.assert_array_equal(grad(ones), np.full(4, 3.0))


def test_one_kernel_for_one_structure_on_every_shape():
    """The kernel text depends on the chain's structure and which operands broadcast how,
    never on the shapes: a bias chain on (6, 7) and on (3, 2, 9) shares one kernel."""
    def f(x, b):
        return (x * 0.5 + b) * b - x

    texts = set()
    for shape in ((6, 7), (3, 2, 9)):
        x, b = RNG.standard_normal(shape), RNG.standard_normal(shape[-1])
        g, _ = trace(f, x, b)
        last, _ = fused_chains.plan(g)
        (chain,) = last.values()
        loop, _, results = chain.source()
        texts.add(fused_kernel.kernel_source("k", len(chain.arrays), len(chain.scalars),
                                             loop, results, (), (chain.kinds,
                                                                 tuple(chain.reductions))))
    assert len(texts) == 1


def test_a_chain_rebuilt_from_its_recipe_computes_the_same():
    """function/trace_cache keeps a Chain as its plain-data recipe (layout and output
    shapes included): the rebuilt one runs the same loop."""
    x, b = RNG.standard_normal((6, 7)), RNG.standard_normal(7)
    c = np.float64(0.5)

    def f(x, b):                                   # the patterns' structure: its kernel
        return np.maximum((x * c + b) * b - x, 0.0 * x)

    g, _ = trace(f, x, b)
    fn = codegen.compile_graph(g)
    call = next(line for line in fn.__source__.splitlines() if "= k_chain(" in line)
    names = call.split("(", 1)[1].rstrip(")").split(", ")
    args = [{"arg0": x, "arg1": b}.get(n, fn.__globals__.get(n)) for n in names]
    chain = fn.__globals__["k_chain"]
    again = fused_kernel.Chain(*chain.__fused_chain__)
    assert again.layout == chain.layout == ("fi", ()) and again.out_shapes == ((6, 7),)
    before = fused_kernel.stats()["fused_calls"]
    for a, w in zip(again(*args), chain(*args)):
        _same_bits(a, w)
    assert fused_kernel.stats()["fused_calls"] - before == 2


def test_a_two_op_chain_fuses_only_on_large_arrays(monkeypatch):
    """A bias add and its ReLU (two ops) are one loop from fused_chains.PAIR elements on
    (one pass instead of two); below that NumPy's two calls are cheaper."""
    monkeypatch.setattr(fused_chains, "LARGE", 1 << 15)
    monkeypatch.setattr(fused_chains, "PAIR", 64)

    def f(x, b):
        return np.maximum(x + b, 0.0)

    _check(f, RNG.standard_normal((8, 8)), RNG.standard_normal(8), chains=1)
    _check(f, RNG.standard_normal((7, 9)), RNG.standard_normal(9), chains=0,
           left=("k_maximum",))


def test_underflow_reports_follow_np_errstate_in_and_out():
    """The loop cannot report an underflow: under np.errstate(under="raise") the chain
    runs as NumPy and raises as unfused code does, and once the state is back to
    "ignore" the loop runs again (fused_kernel asks NumPy's state once per state)."""
    c = np.float64(0.5)

    def f(x, b):                                   # the patterns' structure: its kernel
        return np.maximum((x * c + b) * b - x, 0.0 * x)

    x, b = np.full((4, 5), 1e-200), np.full(5, 1e-200)    # (x c + b) b: 1.5e-400
    g, _ = trace(f, x, b)
    fn = codegen.compile_graph(g)
    want = run(g, (x, b), "interpreter")
    stats = [fused_kernel.stats()["fused_calls"]]
    _same_bits(fn(x, b)[0], want[0])
    stats.append(fused_kernel.stats()["fused_calls"])
    with np.errstate(under="raise"):
        with pytest.raises(FloatingPointError):
            run(g, (x, b), "interpreter")
        with pytest.raises(FloatingPointError):
            fn(x, b)
    stats.append(fused_kernel.stats()["fused_calls"])
    _same_bits(fn(x, b)[0], want[0])
    stats.append(fused_kernel.stats()["fused_calls"])
    assert np.diff(stats).tolist() == [1, 0, 1]
