"""Optimizer updates fused in native code (issue 30, goal 3, `jit_compile=True`): a run of
elementwise ops may span a Variable's reads and assigns (native_fuse.plan defers the
assigns past the kernel), so Adam's update of one parameter is one loop; a Variable update
of its own dtype is not cast (copied) twice; a matmul of a transpose hands BLAS the
transposed view instead of a contiguous copy. Counted in the generated source, and every
result compared with generated NumPy code (`ag.function` without jit)."""

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec import native  # noqa: E402
from autograph.runtime.exec.native.lower import Lowering  # noqa: E402

RNG = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


def _adam_step(jit, w0):
    w = ag.Variable(w0.copy(), name="w")
    opt = ag.optimizers.Adam(0.01)
    opt.build([w])

    @ag.function(jit_compile=jit)
    def step(g):
        opt.apply_gradients([(g * 1.0, w)])
        return w.read_value()
    return step, w, opt


def test_adam_update_is_one_kernel_and_matches_codegen():
    w0 = RNG.standard_normal((6, 5)).astype(np.float32)
    jit, w_jit, opt_jit = _adam_step(True, w0)
    ref, w_ref, opt_ref = _adam_step(False, w0)
    for _ in range(3):
        g = RNG.standard_normal((6, 5)).astype(np.float32)
        np.testing.assert_allclose(jit(g), ref(g), rtol=1e-5, atol=1e-6)
    for slot in ("m", "v"):
        np.testing.assert_allclose(opt_jit.get_slot(w_jit, slot).numpy(),
                                   opt_ref.get_slot(w_ref, slot).numpy(), rtol=1e-5, atol=1e-6)
    body = native.source_of(jit.get_concrete_function(g)._graph_to_run())
    body = body.split("def native_step")[1]
    # m, v and w's new value: one kernel (the slots and w passed in: written in place,
    # native/inplace.py), whose outputs the Variables are given after it
    kernel_lines = [ln for ln in body.splitlines() if "= fused" in ln and "var_w_m" in ln]
    assert len(kernel_lines) == 1 and kernel_lines[0].split("=")[0].count(",") == 2, body
    update = next(ln for ln in body.splitlines() if ln.strip().startswith("var_w ="))
    assert "astype" not in update and "np.subtract" not in update, update


def test_a_transpose_goes_to_blas_as_a_view():
    """Lowered, not compiled (Numba's np.dot on an F-ordered array compiles for ~30 s on a
    busy machine; benchmarks case 14 runs it and checks its results against NumPy)."""
    def f(x, y):
        return x.T @ y, (y.T @ x) @ x.T
    x, y = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 4))
    graph = ag.function(f).get_concrete_function(x, y)._graph_to_run()
    body = Lowering(graph, "native_f").build()
    # (np.dot behind the shared library's `matmul`, np.ascontiguousarray behind its
    # `np_ascontiguousarray_1`: native/library.py)
    contiguous = "np_ascontiguousarray_1"
    assert f"matmul({contiguous}(x).T, {contiguous}(y))" in body, body
    assert f"matmul({contiguous}(y).T, {contiguous}(x))" in body, body
    assert f"{contiguous}(x).T)" in body.split(f"{contiguous}(x))")[1], body


def test_a_read_after_an_assign_inside_a_run_sees_the_new_value():
    v = ag.Variable(np.zeros(8), name="v")

    def f(x):
        a = x * 2.0
        v.assign(a)                 # deferred past the kernel...
        b = v.read_value() + 1.0    # ...so this read ends the run: it must see a
        v.assign(b * 3.0)
        c = b - v.read_value()
        return c * 0.5, a + 1.0

    x = RNG.standard_normal(8)
    got = ag.function(f, jit_compile=True)(x)
    v_jit = v.numpy().copy()
    want = ag.function(f)(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-14)
    np.testing.assert_allclose(v_jit, v.numpy(), rtol=1e-14)
    np.testing.assert_allclose(v_jit, (x * 2.0 + 1.0) * 3.0, rtol=1e-14)


def test_an_update_of_another_dtype_keeps_its_casts():
    v = ag.Variable(np.zeros(4, np.float32), name="v32")

    @ag.function(jit_compile=True)
    def f(x):
        v.assign_add(x * 2.0)       # float64 delta into a float32 Variable
        return v.read_value()

    x = RNG.standard_normal(4)
    got = f(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, (x * 2.0).astype(np.float32), rtol=1e-6)
