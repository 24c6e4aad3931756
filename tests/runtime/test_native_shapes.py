"""jit_compile=True on loops whose arrays change shape and on the counted selections:
Numba gives Python's answer where it has the operation (x[mask] with a 1-D mask, nonzero,
unique, cumsum/searchsorted/take of a counted repeat, x[mask] = v); elsewhere a
NativeLoweringError names the operation and the user's line, before anything compiles.
(benchmarks/shape_targets.py runs the whole corpus: compiling costs seconds per program.)"""

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec.native import NativeLoweringError  # noqa: E402
from tests.converters import shape_corpus as corpus  # noqa: E402


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


def _check(program, *ns):
    """The native function gives `program`'s answer (one compile: few programs, seconds
    each; the corpus runs in benchmarks/)."""
    native = ag.function(program, jit_compile=True)
    for n in ns:
        expected = program(corpus.X.copy(), n)
        got = native(corpus.X.copy(), np.int64(n))
        expected = expected if isinstance(expected, tuple) else (expected,)
        got = got if isinstance(got, tuple) else (got,)
        for g, e in zip(got, expected):
            g, e = np.asarray(g), np.asarray(e)
            assert (g.dtype, g.shape) == (e.dtype, e.shape), (n, g, e)
            np.testing.assert_allclose(g, e, rtol=1e-12)


def masks_in_a_loop(x, n):
    y = x * 1.0
    s = 0.0
    for i in range(n):
        s = s + np.sum(y[y > i]) + np.sum(np.nonzero(y > i)[0])
        y[y > 2.0] = 0.5
    return s, y


def test_masks_nonzero_and_mask_assignment_in_one_native_loop():
    _check(masks_in_a_loop, 0, 3)


@pytest.mark.parametrize("program, op", [(corpus.grow_rank, "while_loop"),
                                         (corpus.double_tile, "tile")],
                         ids=["rank changes", "tile"])
def test_what_numba_lacks_is_refused_by_name_and_line(program, op):
    with pytest.raises(NativeLoweringError, match=rf"`{op}`.*shape_corpus.py:\d+"):
        ag.function(program, jit_compile=True)(corpus.X, np.int64(2))


def test_a_gradient_through_a_growing_loop_is_refused_natively():
    """The backward pass keeps each iteration's values on a stack; native stacks hold
    values of one shape, so a growing loop's gradient stays on codegen (ag.grad without
    jit_compile) and jit_compile=True says why."""
    grad = ag.function(lambda x, n: ag.grad(corpus.g_grow_rows)(x, n), jit_compile=True)
    with pytest.raises(NativeLoweringError, match="shape is not known when compiling"):
        grad(corpus.X, np.int64(2))


# the corpus programs Numba cannot run: a rank that changes, tile, kron's reshape to
# lengths multiplied at run time, unique with counts, a pad whose fill is a tensor
# (broadcast_to lengths known at run time)
NATIVE_REFUSED = {corpus.created_dynamic_rank, corpus.grow_rank, corpus.grow_rank_expand,
                  corpus.double_tile, corpus.double_kron, corpus.unique_counts_loop,
                  corpus.grow_pad_counter}


@pytest.mark.parametrize("program", corpus.PROGRAMS, ids=lambda f: f.__name__)
def test_corpus_lowers_to_numba_source(program):
    """Every other corpus program lowers (benchmarks/shape_targets.py compiles and runs
    them all against Python); the refused ones fail in lowering, naming an operation."""
    from autograph.runtime.exec.native.lower import Lowering
    graph = corpus.traced(program).get_concrete_function(corpus.X, np.int64(1))._graph_to_run()
    if program in NATIVE_REFUSED:
        with pytest.raises(NativeLoweringError, match=r"operation `\w+`"):
            Lowering(graph, "native_check").build()
    else:
        assert "def native_check(" in Lowering(graph, "native_check").build()
