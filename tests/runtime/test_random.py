"""Random numbers in traced functions: draws happen when the graph runs, from the same
generator object, so a traced function gives exactly eager NumPy's numbers (same seed,
same call order) and new numbers on every call; in every executor."""

import numpy as np
import pytest

import autograph as ag
from autograph.errors import StagingError
from autograph.runtime.exec import optimize
from tests.runtime.tracing import MODES, run, trace

SEED = 1234


def assert_equal_draws(got, want):
    """Same values, dtype and shape (a Python scalar counts as its NumPy dtype)."""
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    np.testing.assert_array_equal(g, w)


# -- Monte Carlo pi --------------------------------------------------------------------------

def make_pi(rng, m=64):
    def estimate_pi(n):
        hits = 0
        for i in range(n):
            pts = rng.random((m, 2))
            hits += np.sum(pts[:, 0] ** 2 + pts[:, 1] ** 2 <= 1.0)
        return 4.0 * hits / (n * m)
    return estimate_pi


def test_monte_carlo_pi_in_a_tensor_loop_matches_eager_call_after_call():
    eager = make_pi(np.random.default_rng(SEED))
    traced = ag.function(make_pi(np.random.default_rng(SEED)))
    want = [eager(n) for n in (20, 200, 20, 7, 200)]
    got = [traced(np.int64(n)) for n in (20, 200, 20, 7, 200)]
    assert traced.experimental_get_tracing_count() == 1
    for g, w in zip(got, want):
        assert float(g) == w
    assert len(set(got)) == len(got)          # a new estimate on every call


@pytest.mark.parametrize("mode", MODES)
def test_monte_carlo_pi_every_executor(mode):
    eager = make_pi(np.random.default_rng(SEED), m=16)
    graph, _ = trace(ag.to_graph(make_pi(np.random.default_rng(SEED), m=16)), np.int64(3))
    for n in (3, 40, 5):
        (got,) = run(graph, [np.int64(n)], mode)
        assert float(got) == eager(n)


# -- every method vs eager NumPy -------------------------------------------------------------

GENERATOR_CALLS = [
    ("random", (), {}), ("random", ((2, 3),), {}), ("random", (4,), {"dtype": np.float32}),
    ("uniform", (), {}), ("uniform", (-1.0, 2.0, (3,)), {}),
    ("normal", (), {}), ("normal", (1.0, 2.0), {"size": (2, 2)}),
    ("normal", (np.zeros(3), np.ones((2, 1))), {}),
    ("standard_normal", (5,), {}), ("standard_normal", (), {"dtype": np.float32, "size": 3}),
    ("integers", (10,), {}), ("integers", (0, 10, (4,)), {}),
    ("integers", (-5, 5), {"size": 3, "dtype": np.int32, "endpoint": True}),
    ("choice", (5,), {}), ("choice", (10, 3), {"replace": False}),
    ("choice", (np.arange(12.0).reshape(4, 3),), {"size": 2}),
    ("choice", (np.arange(12).reshape(4, 3), (2, 2)), {"axis": 1}),
    ("choice", (np.array([1, 2, 3], np.int32),), {"size": 5, "p": [0.2, 0.3, 0.5]}),
    ("permutation", (6,), {}), ("permutation", (np.arange(12.0).reshape(4, 3),), {}),
    ("exponential", (), {}), ("exponential", (2.0, (3,)), {}),
    ("poisson", (), {}), ("poisson", (3.0, 4), {}), ("poisson", (np.array([1.0, 10.0]),), {}),
    ("binomial", (10, 0.5), {}), ("binomial", (10, 0.3, (2, 2)), {}),
    ("beta", (2.0, 3.0), {}), ("beta", (2.0, 3.0, 3), {}),
    ("gamma", (2.0,), {}), ("gamma", (2.0, 1.5, (2,)), {}),
    ("lognormal", (0.0, 1.0, 2), {}), ("geometric", (0.3, 3), {}),
    ("standard_exponential", (3,), {}), ("standard_gamma", (2.0, 3), {}),
    ("laplace", (), {}), ("chisquare", (3.0, 2), {}),
]

LEGACY_CALLS = [
    ("random", (), {}), ("random", ((2, 2),), {}), ("random_sample", (3,), {}),
    ("rand", (), {}), ("rand", (2, 3), {}), ("randn", (4,), {}),
    ("uniform", (0.0, 5.0, 3), {}), ("normal", (), {}), ("standard_normal", (2,), {}),
    ("randint", (10,), {}), ("randint", (0, 10, 4), {}),
    ("randint", (3, 9), {"dtype": np.int32}),
    ("choice", (5,), {}), ("choice", (5, 3), {}), ("choice", (np.arange(4.0), 2), {}),
    ("permutation", (5,), {}), ("permutation", (np.arange(5.0),), {}),
    ("exponential", (), {}), ("poisson", (2.0, 3), {}), ("binomial", (5, 0.5), {}),
    ("beta", (1.0, 2.0, 2), {}), ("gamma", (3.0,), {}),
]


def _calls(make_source, method, args, kwargs):
    """An eager draw and a traced function drawing the same way from a twin generator."""
    eager_src, traced_src = make_source(), make_source()

    def draw():
        return getattr(traced_src, method)(*args, **kwargs)
    return (lambda: getattr(eager_src, method)(*args, **kwargs)), draw


@pytest.mark.parametrize("method,args,kwargs", GENERATOR_CALLS,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(GENERATOR_CALLS)])
def test_generator_method_matches_eager(method, args, kwargs):
    eager, draw = _calls(lambda: np.random.default_rng(SEED), method, args, kwargs)
    graph, out = trace(ag.to_graph(draw))
    want = [eager() for _ in range(4)]
    assert out.dtype == np.asarray(want[0]).dtype          # the inferred dtype and shape
    assert out.shape == np.shape(want[0])
    modes = ["codegen", "interpreter", "optimized_codegen", "optimized_interpreter"]
    for w, mode in zip(want, modes):   # one generator, drawn from by each executor in turn
        assert_equal_draws(run(graph, [], mode)[0], w)


@pytest.mark.parametrize("method,args,kwargs", LEGACY_CALLS,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(LEGACY_CALLS)])
def test_legacy_module_function_matches_eager(method, args, kwargs):
    fn = getattr(np.random, method)

    def draw():
        return fn(*args, **kwargs)
    graph, out = trace(ag.to_graph(draw))
    np.random.seed(SEED)
    want = [fn(*args, **kwargs) for _ in range(4)]
    assert out.dtype == np.asarray(want[0]).dtype
    assert out.shape == np.shape(want[0])
    np.random.seed(SEED)
    for w, mode in zip(want, MODES):
        assert_equal_draws(run(graph, [], mode)[0], w)


def legacy_seeded(x):
    np.random.seed(7)
    return x + np.random.random(3)


def test_legacy_seed_inside_the_function_reseeds_every_call():
    f = ag.function(legacy_seeded)
    x = np.zeros(3)
    want = legacy_seeded(x)
    np.random.random(5)                    # the global state moved on: the seed resets it
    np.testing.assert_array_equal(f(x), want)
    np.testing.assert_array_equal(f(x), want)


def legacy_mean(n):
    total = 0.0
    for i in range(n):
        total += np.random.random()
    return total / n


def test_legacy_seed_then_traced_draws_match_eager():
    f = ag.function(legacy_mean)
    np.random.seed(3)
    want = [legacy_mean(10), legacy_mean(10), legacy_mean(4)]
    np.random.seed(3)
    got = [f(np.int64(10)), f(np.int64(10)), f(np.int64(4))]
    assert [float(g) for g in got] == want
    assert got[0] != got[1]


# -- tensor arguments, unknown shapes ----------------------------------------------------------

def noisy(x, scale):
    return x + RNG_T.normal(loc=x, scale=scale)


def sized(n):
    return RNG_T.random(n), RNG_T.integers(0, n, size=(2, n))


def test_tensor_arguments_and_sizes():
    global RNG_T
    RNG_E = np.random.default_rng(5)
    RNG_T = np.random.default_rng(5)
    x = np.arange(4.0)
    f = ag.function(noisy)
    for scale in (1.0, 0.5):
        np.testing.assert_array_equal(f(x, np.float64(scale)),
                                      x + RNG_E.normal(loc=x, scale=scale))
    g = ag.function(sized)
    conc = g.get_concrete_function(ag.TensorSpec([], np.int64))
    a, b = conc.structured_outputs
    assert a.shape == (None,) and b.shape == (2, None)
    assert a.dtype == np.float64 and b.dtype == np.int64
    for n in (3, 6):
        got = g(np.int64(n))
        want = (RNG_E.random(n), RNG_E.integers(0, n, size=(2, n)))
        for gv, wv in zip(got, want):
            assert_equal_draws(gv, wv)


def draws_in_a_branch(flag):
    if flag > 0:
        y = RNG_T.standard_normal(2)
    else:
        y = np.zeros(2)
    unused = RNG_T.random()        # noqa: F841 (unused, but it still draws, as eagerly)
    return y + RNG_T.random()


def test_draws_in_branches_and_unused_draws_match_eager():
    global RNG_T
    RNG_T = np.random.default_rng(9)
    eager_rng = np.random.default_rng(9)

    def eager(flag):
        y = eager_rng.standard_normal(2) if flag > 0 else np.zeros(2)
        eager_rng.random()
        return y + eager_rng.random()
    f = ag.function(draws_in_a_branch)
    for flag in (1, 0, 1, 1, 0):
        np.testing.assert_array_equal(f(np.int64(flag)), eager(flag))


def scalar_promotion(x):
    return x * RNG_T.random()         # a Python float: x keeps its dtype (NEP 50)


def test_scalar_draws_are_weak_like_python_floats():
    global RNG_T
    RNG_T = np.random.default_rng(1)
    out = ag.function(scalar_promotion)(np.ones(2, np.float32))
    assert out.dtype == np.float32


# -- generators made inside the function ------------------------------------------------------

def fresh_generator(n):
    rng = np.random.default_rng(42)
    total = 0.0
    for i in range(n):
        total += rng.normal()
    return total, rng.integers(0, 100, size=3)


@pytest.mark.parametrize("mode", MODES)
def test_default_rng_inside_the_function_is_made_on_every_run(mode):
    graph, _ = trace(ag.to_graph(fresh_generator), np.int64(3))
    for n in (3, 5, 3):
        got = run(graph, [np.int64(n)], mode)
        want = fresh_generator(n)
        assert float(got[0]) == want[0]
        assert_equal_draws(got[1], want[1])


# -- every call draws anew; effects are kept ----------------------------------------------------

def two_draws():
    return RNG_T.random(3), RNG_T.random(3)


@pytest.mark.parametrize("mode", MODES)
def test_draws_are_never_merged_or_repeated(mode):
    global RNG_T
    RNG_T = np.random.default_rng(0)
    graph, _ = trace(ag.to_graph(two_draws))
    a, b = run(graph, [], mode)
    c, d = run(graph, [], mode)
    assert len({tuple(v) for v in (a, b, c, d)}) == 4
    assert sum(n.op == "random" for n in optimize.optimize(graph).nodes) == 2


# -- refused, with a reason -------------------------------------------------------------------

def shuffles(x):
    RNG_T.shuffle(x)
    return x


def unsupported():
    return RNG_T.multinomial(10, [0.5, 0.5])


def test_shuffle_and_unstaged_methods_are_refused_while_tracing():
    global RNG_T
    RNG_T = np.random.default_rng(0)
    with pytest.raises(StagingError, match=r"rng.permutation\(x\)"):
        ag.function(shuffles)(np.arange(3.0))
    with pytest.raises(StagingError, match="multinomial.*same values on every call"):
        ag.function(unsupported)()
    x = np.arange(5.0)
    shuffles(x)                            # eagerly: NumPy's in-place shuffle
    assert sorted(x) == [0, 1, 2, 3, 4]


def test_permutation_is_the_functional_shuffle():
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    x = np.arange(8.0)
    y = x.copy()
    a.shuffle(y)

    def perm(v):
        return b.permutation(v)
    np.testing.assert_array_equal(ag.function(perm)(x), y)


# -- other devices -------------------------------------------------------------------------

def make_sum(rng):
    def total(n):
        s = np.zeros(4)
        for i in range(n):
            s = s + rng.normal(size=4)
        return s.sum()
    return total


@pytest.mark.parametrize("mode", ["interpreter", "codegen"])
def test_draws_on_the_strict_array_api_device(mode):
    pytest.importorskip("array_api_strict")
    from autograph.runtime.devices import get_device
    strict = get_device("strict")
    eager = make_sum(np.random.default_rng(SEED))
    graph, _ = trace(ag.to_graph(make_sum(np.random.default_rng(SEED))), np.int64(3))
    for n in (3, 9):
        (got,) = run(graph, [np.int64(n)], mode, device="strict")
        assert float(strict.to_host(got)) == eager(n)
    draw_e, draw_t = np.random.default_rng(1), np.random.default_rng(1)
    graph, _ = trace(ag.to_graph(lambda: draw_t.integers(0, 9, size=4, dtype=np.int32)))
    (got,) = run(graph, [], mode, device="strict")
    assert_equal_draws(strict.to_host(got), draw_e.integers(0, 9, size=4, dtype=np.int32))


def seeded_draws(seed, scale):
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, scale, size=3) + rng.integers(0, 5, size=3)


@pytest.mark.parametrize("mode", ["interpreter", "codegen"])
def test_tensor_seed_and_scalar_parameters_on_the_strict_device(mode):
    # a 0-d tensor reaches NumPy's random API as the scalar the CPU gives, not a 0-d
    # array (np.random.default_rng refuses one)
    pytest.importorskip("array_api_strict")
    from autograph.runtime.devices import get_device
    strict = get_device("strict")
    graph, _ = trace(ag.to_graph(seeded_draws), np.int64(4), np.float64(2.0))
    for seed, scale in ((4, 2.0), (11, 0.5)):
        (got,) = run(graph, [np.int64(seed), np.float64(scale)], mode, device="strict")
        np.testing.assert_array_equal(strict.to_host(got), seeded_draws(seed, scale))
