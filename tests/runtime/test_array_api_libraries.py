"""SciPy and scikit-learn on traced tensors (issue 36): the namespace hook, SciPy's ufuncs as
primitives, errors that name the library function, and in-place writes by library code.

The parts that need SciPy's array API path (SCIPY_ARRAY_API=1, set before SciPy is
imported) run in a subprocess (array_api_libraries_script.py); the rest run here, where
SciPy's special functions are plain ufuncs reaching Tensor.__array_ufunc__."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir.tensor import SymbolicTensorError
from autograph.runtime.numpy import array_api

sp = pytest.importorskip("scipy.special")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
X = np.array([0.1, -0.3, 2.0])


def test_eager_arrays_keep_numpys_namespace_and_tensors_get_ours():
    assert np.ones(2).__array_namespace__() is np
    seen = []

    @ag.function
    def f(x):
        seen.append(x.__array_namespace__())
        return x
    f(X)
    assert seen == [array_api.namespace]
    with pytest.raises(ValueError, match="2024.12"):
        Graph("g").placeholder("x", np.dtype(np.float64), (2,)).__array_namespace__(
            api_version="2099.01")


@pytest.mark.parametrize("name", ["expit", "erf", "gammaln", "i0e", "log_ndtr", "erfcx"])
def test_scipy_ufuncs_trace_as_primitives(name):
    uf = getattr(sp, name)
    if not isinstance(uf, np.ufunc):
        pytest.skip("SciPy's array API wrappers are active in this process")
    f = ag.function(lambda x: uf(x))
    for x in (X + 0.5, (X + 0.5).astype(np.float32), np.arange(1, 4)):
        got, want = f(x), uf(x)
        assert got.dtype == want.dtype   # the ufunc's own loop dtypes
        np.testing.assert_allclose(got, want, rtol=1e-6 if got.dtype == np.float32 else 1e-14)
    ops = [n.op for n in f.get_concrete_function(X).graph.as_graph_def().node]
    assert f"special_{name}" in ops


def test_errors_name_scipy_not_numpy():
    if not isinstance(sp.expit, np.ufunc):
        pytest.skip("SciPy's array API wrappers are active in this process")
    with pytest.raises(TypeError, match=r"scipy\.special\.expit: unsupported") as e:
        ag.function(lambda x: sp.expit(x, casting="unsafe"))(X)
    assert "numpy.expit" not in str(e.value)
    # ufunc methods of SciPy's binary ufuncs work as NumPy's do
    x = np.array([0.5, 2.0, 3.0])
    np.testing.assert_allclose(ag.function(lambda v: sp.xlogy.reduce(v))(x),
                               sp.xlogy.reduce(x), rtol=1e-15)
    np.testing.assert_allclose(ag.function(lambda v: sp.xlogy.outer(v, v))(x),
                               sp.xlogy.outer(x, x), rtol=1e-15)
    with pytest.raises(NotImplementedError, match=r"scipy\.special\.sici"):   # two outputs
        ag.function(lambda x: sp.sici(x))(X)


def test_a_gradient_without_a_rule_is_an_error_not_a_zero():
    with pytest.raises(NotImplementedError, match=r"scipy\.special\.gammainc with respect "
                                                  r"to argument 1 of 2"):
        ag.grad(lambda a, x: np.sum(sp.gammainc(a, x)))(X + 1, X + 1)
    # the other argument has its derivative: a constant `a` is fine
    g = ag.grad(lambda x, a: np.sum(sp.gammainc(a, x)), argnums=0)(X + 1, np.full(3, 2.0))
    h = 1e-6
    fd = (sp.gammainc(2.0, X + 1 + h) - sp.gammainc(2.0, X + 1 - h)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_integer_orders_have_zero_cotangents():
    # kn's order is an integer (truncated): a step function of it; jv's is real, and its
    # derivative in the order is not here: an error (scipy.special.jn is jv)
    g = ag.grad(lambda n, x: np.sum(sp.kn(n, x)))(np.array([1.0, 2.0]), np.array([0.5, 1.5]))
    assert np.all(g == 0)
    with pytest.raises(NotImplementedError, match=r"scipy\.special\.jv"):
        ag.grad(lambda n, x: np.sum(sp.jn(n, x)))(np.array([1.0, 2.0]), np.array([0.5, 1.5]))


def test_saved_model_round_trip_with_scipy_primitives():
    f = ag.function(lambda x: sp.expit(x) * sp.gammaln(x + 2.0))
    conc = f.get_concrete_function(X)
    loaded = ag.saved_model.from_bytes(ag.saved_model.to_bytes(f, [ag.TensorSpec([3],
                                                                                 np.float64)]))
    np.testing.assert_allclose(loaded(X), conc(X), rtol=1e-15)


def test_polygamma_primitive_and_its_gradient():
    from autograph.runtime.numpy import scipy_special
    f = ag.function(lambda x: scipy_special.polygamma(1, x))
    np.testing.assert_allclose(f(X + 1), sp.polygamma(1, X + 1), rtol=1e-14)
    g = ag.grad(lambda x: np.sum(scipy_special.polygamma(1, x)))(X + 1)
    np.testing.assert_allclose(g, sp.polygamma(2, X + 1), rtol=1e-14)


# -- in-place writes by library code ---------------------------------------------------------

_LIBRARY = '''
def fill_first(xp, x):
    y = xp.asarray(x, copy=True)
    y[0] = 5.0
    return y

def keeps_old_values(xp, x):
    y = x * 1.0
    z = y + 0.0          # computed before the write: keeps the old value
    y[0] = 9.0
    return z, y

def aug_subscript(xp, x):
    y = xp.asarray(x, copy=True)
    y[1:] *= 2.0         # read, multiply, write back into y
    return y

def scalar_update(xp, x):
    s = (x * 2.0)[1]     # an integer index to a 0-d result: a scalar copy in NumPy
    s *= 3.0
    return s

def write_input(xp, x):
    x[0] = 1.0
    return x

def write_view(xp, x):
    y = x * 1.0
    v = y[1:]
    v[0] = 7.0           # NumPy would change y through the view
    return y

def aug_view(xp, x):
    y = x * 1.0
    v = y[1:]
    v += 1.0
    return y

def keep_view(xp, x):
    y = x * 1.0
    v = y[0:2]
    y[0] = 9.0           # NumPy would change v too
    return v
'''


@pytest.fixture(scope="module")
def library():
    """Functions whose module is a library's (the frame check in array_api_writes)."""
    namespace = {"__name__": "scipy._autograph_test_library"}
    exec(compile(_LIBRARY, "<scipy test library>", "exec"), namespace)
    return namespace


def _traced(fn):
    return ag.function(lambda x: fn(x.__array_namespace__(), x), autograph=False)


@pytest.mark.parametrize("name", ["fill_first", "keeps_old_values", "aug_subscript",
                                  "scalar_update"])
def test_library_writes_are_followed(library, name):
    fn = library[name]
    got = _traced(fn)(X)
    want = fn(np, X.copy())
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("name,why", [
    ("write_input", "input of the traced function"),
    ("write_view", "view"), ("aug_view", "view"), ("keep_view", "view of the array")])
def test_library_writes_numpy_would_alias_are_refused(library, name, why):
    with pytest.raises(SymbolicTensorError, match=why):
        _traced(library[name])(X)


def test_user_code_still_cannot_write_into_tensors():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError, match="immutable while tracing"):
        ag.function(f, autograph=False)(X)


# -- under SCIPY_ARRAY_API=1: the issue's reproducers and scikit-learn ------------------------

@pytest.fixture(scope="module")
def report():
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "runtime",
                                                       "array_api_libraries_script.py")],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["expit", "erf", "logsumexp", "softmax", "norm"])
def test_issue_reproducers(report, name):
    assert report[name] == {"equal": True, "dtype": True}


def test_scikit_learn_array_api_functions(report):
    if report["sklearn"] is None:
        pytest.skip("scikit-learn is not installed")
    for name in ("rbf_kernel", "cosine_similarity", "euclidean_distances", "normalize"):
        assert report["sklearn"][name] == {"equal": True, "dtype": True}, name
    assert report["sklearn"]["rbf_gradient_error"] < 1e-7
    # a data-dependent check inside an estimator: an error naming the method
    assert "sklearn.preprocessing.MinMaxScaler.fit" in report["sklearn"]["MinMaxScaler"]["error"]


def test_jit_compile_names_the_scipy_function():
    pytest.importorskip("numba")
    from autograph.runtime.exec.native import NativeLoweringError
    with pytest.raises(NativeLoweringError, match=r"scipy\.special\.expit"):
        ag.function(lambda x: sp.expit(x) + 1.0, jit_compile=True)(X)


def test_augmented_assignment_on_tensors_is_unchanged_for_user_code():
    def f(x):
        y = x * 1.0
        y += 1.0
        y *= 2.0
        y -= 0.5
        y /= 4.0
        return y
    for autograph in (True, False):
        got = ag.function(f, autograph=autograph)(X)
        np.testing.assert_array_equal(got, f(X.copy()))


def test_scipy_primitives_on_the_strict_device():
    pytest.importorskip("array_api_strict")
    f = ag.function(lambda x: sp.expit(x) * sp.gammaln(x + 1.0), device="strict")
    np.testing.assert_allclose(np.asarray(f(X)), sp.expit(X) * sp.gammaln(X + 1.0),
                               rtol=1e-15)


def test_a_write_after_a_branch_read_keeps_the_branch_reading_the_old_value(library):
    # a cond built before the write captured the old value; the write must not change it
    ns = {"__name__": "scipy._autograph_test_branch", "ag": ag}
    exec(compile('''
def branch_then_write(xp, x):
    y = x * 1.0
    z = ag.cond(xp.sum(x) > 0, lambda: y * 2.0, lambda: y * 3.0)
    y[0] = 100.0
    return z, y
''', "<scipy test library>", "exec"), ns)
    z, y = _traced(ns["branch_then_write"])(X)
    np.testing.assert_array_equal(z, X * 2.0)
    np.testing.assert_array_equal(y, np.concatenate([[100.0], X[1:]]))
    g = ag.grad(lambda v: np.sum(ns["branch_then_write"](v.__array_namespace__(), v)[0]))(X)
    np.testing.assert_array_equal(g, np.full(3, 2.0))   # through the branch's old value
    # the branch graph's record of what it captured agrees with the cond node's inputs
    graph = ag.function(lambda v: ns["branch_then_write"](v.__array_namespace__(), v),
                        autograph=False).get_concrete_function(X).graph
    cond = next(n for n in graph.nodes if n.op == "cond")
    for sub in (cond.attrs["true_graph"], cond.attrs["false_graph"]):
        assert all(t.node.op != "setitem" for t in sub.captured_inputs())
        assert all(any(t is i for i in cond.inputs) for t in sub.captured_inputs())


def _direct_cases():
    import scipy.linalg as sl
    import scipy.stats as st
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3))
    m = a @ a.T + 3 * np.eye(3)
    b = rng.standard_normal(3)
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    return [
        (lambda u: sl.cholesky(u), (m,)), (lambda u: sl.cholesky(u, lower=True), (m,)),
        (lambda u, v: sl.solve(u, v, transposed=True), (a, b)),
        (lambda u, v: sl.solve(u, v, assume_a="pos"), (m, b)),
        (lambda u: sl.inv(u), (a,)), (lambda u: sl.det(u), (a,)),
        (lambda u: sl.norm(u, axis=0), (a,)), (lambda u: sl.norm(u, "fro"), (a,)),
        (lambda u: sl.eigh(u, eigvals_only=True), (m,)),
        (lambda u: sl.svd(u, compute_uv=False), (a,)),
        (lambda u: sl.expm(u), (a,)), (lambda u: sl.expm(u), (10.0 * a,)),
        (lambda u: st.norm.logpdf(u, loc=0.5, scale=2.0), (x,)),
        (lambda u: st.norm.pdf(u), (x,)), (lambda u: st.norm.cdf(u, 1.0, 3.0), (x,)),
        (lambda u: st.norm.ppf(u, loc=1.0), (np.array([0.1, 0.5, 0.9]),)),
        (lambda u: st.logistic.logpdf(u, scale=0.5), (x,)),
        (lambda u: st.gamma.logpdf(u, 2.5, scale=2.0), (x,)),   # -inf below 0
        (lambda u: st.gamma.cdf(u, 2.5), (x,)),
        (lambda u: st.expon.logpdf(u, loc=-0.5), (x,)),
        (lambda u: sp.polygamma(2, u), (np.array([0.5, 1.5, 4.0]),)),
    ]


@pytest.mark.parametrize("case", range(21))
def test_scipy_functions_covered_directly_match_scipy(case):
    fn, args = _direct_cases()[case]
    got = ag.function(fn)(*args)
    want = fn(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
