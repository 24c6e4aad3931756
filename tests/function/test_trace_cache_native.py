"""The trace cache for `jit_compile=True` functions and for gradients of the user's
functions (`ag.value_and_grad`, `ag.grad`): a later process (here: the same file loaded
again as a new module, or a second real process) loads the trace instead of converting,
tracing, differentiating and lowering it again, and Numba loads the machine code from its
own cache. The loaded trace computes what the traced one does, bit for bit, and what
Python and finite differences say."""

import marshal
import os
import subprocess
import sys

import numpy as np
import pytest

import autograph as ag
from autograph.function import trace_cache
from autograph.runtime.ir import nest
from autograph.source import disk_cache
from tests.conftest import load_module
from tests.function.test_trace_cache import _same

function_module = sys.modules["autograph.function"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = '''
import numpy as np
import autograph as ag

SCALE = 2.0

def mandelbrot(c):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int64)
    for i in range(40):
        z = np.where(np.abs(z) <= 2.0, z * z + c, z)
        count = count + (np.abs(z) <= 2.0)
    return count

def prefix(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out

def shapes(x, n):
    total = np.sum(x) * SCALE
    if total > 0:
        total = total + n
    return {"total": total, "x": x, "ones": np.ones(3), "n": n}, total.astype(np.float32)

def loss(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h * h) * SCALE

def loss_aux(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h * h), h

def helper(v):
    return v * 2

def calls_helper(W, xs, h0):
    return np.sum(helper(W)) + np.sum(xs) + np.sum(h0)
'''


def _refuse(*args, **kwargs):
    raise AssertionError("traced or lowered again instead of loading the trace")


def _module(tmp_path):
    return load_module(tmp_path, MODULE, "native_traced_mod")


def _make(module, name, transform, jit):
    f = getattr(module, name)
    if transform is not None:
        f = transform(f)
    return ag.function(f, jit_compile=jit)


def _traced_then_loaded(tmp_path, monkeypatch, name, args, transform=None, jit=True):
    """(result traced in a first 'process', the function of a second one, its result,
    which it must load: neither tracing nor lowering runs)."""
    traced = _make(_module(tmp_path), name, transform, jit)(*args)
    disk_cache.flush()
    second = _make(_module(tmp_path), name, transform, jit)
    with monkeypatch.context() as m:
        m.setattr(function_module.Function, "_trace_graph", _refuse)
        if jit:
            from autograph.runtime.exec.native import lower
            m.setattr(lower.Lowering, "build", _refuse)
        loaded = second(*args)
    assert second.experimental_get_tracing_count() == 1
    return traced, second, loaded


def _rnn_args(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((4, 4)) / 2, rng.standard_normal((6, 3, 4)),
            rng.standard_normal((3, 4)))


needs_numba = pytest.mark.skipif(
    not __import__("autograph.runtime.exec.native", fromlist=["_"]).available(),
    reason="jit_compile=True needs Numba")


# -- jit_compile=True ----------------------------------------------------------------------------

@needs_numba
@pytest.mark.parametrize("name,args", [
    ("mandelbrot", (np.linspace(-2, 1, 7)[None, :] + 1j * np.linspace(-1.5, 1.5, 5)[:, None],)),
    ("prefix", (np.arange(1.0, 50.0),)),
    ("shapes", (np.arange(3.0), 4)),
    ("shapes", (-np.arange(3.0), 1)),
])
def test_a_loaded_native_trace_computes_what_python_and_the_traced_one_do(
        tmp_path, cache_dir, monkeypatch, name, args):
    traced, fn, loaded = _traced_then_loaded(tmp_path, monkeypatch, name, args)
    _same(traced, loaded)
    _same(loaded, fn(*args))            # the later calls: the dispatcher itself
    expected = getattr(_module(tmp_path), name)(*args)
    flat_loaded, flat_expected = nest.flatten(loaded), nest.flatten(expected)
    for a, b in zip(flat_loaded, flat_expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    (concrete,) = fn._traces.values()
    assert concrete._graph is None and hasattr(concrete._program[0], "__native__")


@needs_numba
def test_a_loaded_native_trace_returns_fresh_constants_and_its_argument(tmp_path, cache_dir,
                                                                       monkeypatch):
    x = np.arange(3.0)
    _, fn, loaded = _traced_then_loaded(tmp_path, monkeypatch, "shapes", (x, 2))
    assert loaded[0]["x"] is x              # an argument returned as it is, as traced
    again = fn(x, 2)
    assert again[0] is not loaded[0] and again[0]["ones"] is not loaded[0]["ones"]
    again[0]["ones"][0] = 7.0               # a constant output is a new writable array
    assert fn(x, 2)[0]["ones"][0] == 1.0
    assert type(loaded[1]) is np.float32 and type(loaded[0]["total"]) is np.float64


@needs_numba
def test_a_loaded_native_trace_has_its_graph_and_source_when_asked(tmp_path, cache_dir,
                                                                  monkeypatch):
    args = (np.arange(1.0, 9.0),)
    _, fn, _ = _traced_then_loaded(tmp_path, monkeypatch, "prefix", args)
    concrete = fn.get_concrete_function(*args)
    assert "setitem" in {n.op for n in concrete.graph.walk()}   # traced now, when asked
    program = concrete._program[0]
    assert "@njit" in program.__source__ and "def native_prefix" in program.__source__


@needs_numba
def test_the_key_names_jit_compile_and_numba(tmp_path, cache_dir, monkeypatch):
    import numba
    mod = _module(tmp_path)
    names, key = ["x"], (ag.TensorSpec([5], np.float64),)
    jit = trace_cache.cache_key(ag.function(mod.prefix, jit_compile=True), names, key)
    plain = trace_cache.cache_key(ag.function(mod.prefix), names, key)
    assert jit != plain
    monkeypatch.setattr(numba, "__version__", numba.__version__ + ".other")
    assert trace_cache.cache_key(ag.function(mod.prefix, jit_compile=True), names, key) != jit


@needs_numba
def test_a_changed_native_entry_is_never_run(tmp_path, cache_dir, monkeypatch):
    """The recipe's source is executed: an entry changed on disk (its signature no longer
    matching) is ignored, and the function is traced and lowered again."""
    args = (np.arange(1.0, 9.0),)
    _make(_module(tmp_path), "prefix", None, True)(*args)
    disk_cache.flush()
    (path,) = cache_dir.rglob("*.agt")
    entry = marshal.loads(disk_cache.read(str(path)))
    assert "native" in entry and "def native_prefix" in entry["native"]["source"]
    entry["native"]["source"] = entry["native"]["source"].replace("import math",
                                                                  "import math; BAD = 1")
    path.write_bytes(b"unsigned" + marshal.dumps(entry))
    fn = _make(_module(tmp_path), "prefix", None, True)
    from autograph.runtime.exec.native import jit
    lowered = jit.stats()["lowered"]
    np.testing.assert_array_equal(fn(*args), np.cumsum(args[0]))
    assert jit.stats()["lowered"] == lowered + 1
    assert not any("BAD = 1" in p.read_text() for p in cache_dir.rglob("ag_*.py"))


def test_a_native_trace_with_variables_is_not_kept(tmp_path, cache_dir):
    pytest.importorskip("numba")
    v = ag.Variable(np.ones(3))

    @ag.function(jit_compile=True)
    def reads(x):
        return x + v

    np.testing.assert_array_equal(reads(np.ones(3)), np.full(3, 2.0))
    disk_cache.flush()
    assert not list(cache_dir.rglob("*.agt"))


# -- gradients of the user's functions -----------------------------------------------------------

def _finite_difference(f, args, i, h=1e-6):
    """Central differences of scalar f with respect to args[i]."""
    x = np.array(args[i], dtype=float)
    out = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        a = list(args)
        a[i] = up
        hi = f(*a)
        a[i] = down
        out[j] = (hi - f(*a)) / (2 * h)
    return out


def _value(module, name):
    f = getattr(module, name)
    return (lambda *a: f(*a)[0]) if name == "loss_aux" else f


# (transform, function, what the result holds: [(value or gradient, argument number)])
GRADIENTS = [
    (lambda f: ag.value_and_grad(f), "loss", lambda r: [(r[0], None), (r[1], 0)]),
    (lambda f: ag.grad(f, argnums=(0, 2)), "loss", lambda r: [(r[0], 0), (r[1], 2)]),
    (lambda f: ag.value_and_grad(f, argnums=1, has_aux=True), "loss_aux",
     lambda r: [(r[0][0], None), (r[1], 1)]),
    (lambda f: ag.grad(f, checkpoints=2), "loss", lambda r: [(r, 0)]),
]
# (a checkpointed loop's gradient has no native form yet: jit_compile=True refuses it)
CASES = [g + (jit,) for g in GRADIENTS for jit in (False, True) if not (jit and g is GRADIENTS[3])]


@pytest.mark.parametrize("transform,name,parts,jit", CASES)
def test_a_loaded_gradient_computes_what_the_traced_one_and_finite_differences_do(
        tmp_path, cache_dir, monkeypatch, transform, name, parts, jit):
    if jit:
        pytest.importorskip("numba")
    args = _rnn_args()
    traced, _, loaded = _traced_then_loaded(tmp_path, monkeypatch, name, args, transform, jit)
    _same(traced, loaded)
    value = _value(_module(tmp_path), name)
    for got, i in parts(loaded):
        expected = value(*args) if i is None else _finite_difference(value, args, i)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_a_second_order_gradient_is_kept_and_loaded(tmp_path, cache_dir, monkeypatch):
    text = "import numpy as np\n\ndef quartic(x):\n    return x * x * x * x\n"
    monkeypatch.setattr(sys.modules[__name__], "_module",
                        lambda tmp_path: load_module(tmp_path, text, "second_order_mod"))
    x = np.float64(0.7)
    traced, _, loaded = _traced_then_loaded(tmp_path, monkeypatch, "quartic", (x,),
                                            lambda f: ag.grad(ag.grad(f)), jit=False)
    _same(traced, loaded)
    np.testing.assert_allclose(loaded, 12 * x * x, rtol=1e-12)


def test_the_key_names_the_transform_its_options_and_the_function(tmp_path, cache_dir):
    mod = _module(tmp_path)
    names = ["W", "xs", "h0"]
    key = tuple(ag.TensorSpec(a.shape, a.dtype) for a in _rnn_args())

    def k(f, jit=None):
        return trace_cache.cache_key(ag.function(f, jit_compile=jit), names, key)[0]
    keys = [k(mod.loss), k(ag.value_and_grad(mod.loss)), k(ag.grad(mod.loss)),
            k(ag.grad(mod.loss, argnums=1)), k(ag.grad(mod.loss, has_aux=True)),
            k(ag.grad(mod.loss, checkpoints=3)), k(ag.grad(mod.loss_aux)),
            k(ag.grad(ag.grad(mod.loss)))]
    assert len(set(keys)) == len(keys)
    assert k(ag.grad(_module(tmp_path).loss)) == keys[2]   # the same, in another 'process'
    mod.SCALE = 3.0                       # a global of the differentiated function changed
    assert k(ag.grad(mod.loss)) != keys[2]


def test_a_gradient_of_what_the_key_cannot_name_is_not_kept(tmp_path, cache_dir):
    mod = _module(tmp_path)
    names, key = ["x"], (ag.TensorSpec([3], np.float64),)
    for f in (ag.grad(ag.function(mod.loss)),          # an ag.Function: its options
              ag.grad(lambda x: np.sum(x * x))):       # no source file
        with pytest.raises(trace_cache._NotKept):
            trace_cache.cache_key(ag.function(f), names, key)
    fake = lambda x: x   # noqa: E731   a function claiming to be a gradient is not trusted
    fake.__ag_transform__ = ("grad", mod.loss, False)
    with pytest.raises(trace_cache._NotKept):
        trace_cache.cache_key(ag.function(fake), names, key)


def test_a_gradient_calling_another_function_of_the_users_is_traced_each_process(
        tmp_path, cache_dir, monkeypatch):
    """The differentiated function may call what the key names (itself, the gradient's own
    code); a call of another function of the user's keeps the trace out, as for plain
    traces: its code is not in the key."""
    args = _rnn_args()
    fn = ag.function(ag.grad(_module(tmp_path).calls_helper))
    np.testing.assert_allclose(fn(*args), np.full((4, 4), 2.0))
    disk_cache.flush()
    assert not list(cache_dir.rglob("*.agt"))
    traced = ag.function(ag.grad(_module(tmp_path).loss))(*args)
    disk_cache.flush()
    assert len(list(cache_dir.rglob("*.agt"))) == 1
    np.testing.assert_allclose(traced, _finite_difference(_module(tmp_path).loss, args, 0),
                               rtol=1e-5, atol=1e-7)


# -- real processes ------------------------------------------------------------------------------

@needs_numba
def test_a_second_process_loads_a_native_gradient_without_tracing_or_compiling(tmp_path):
    """Two real processes: the second neither converts, traces, differentiates nor lowers
    (those modules are never imported) and Numba compiles nothing: it loads the machine
    code from its cache."""
    source = tmp_path / "rnn_script.py"
    source.write_text(MODULE + '''
import sys
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(1)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
rng = np.random.default_rng(0)
args = (rng.standard_normal((4, 4)) / 2, rng.standard_normal((6, 3, 4)),
        rng.standard_normal((3, 4)))
value, grad = ag.function(ag.value_and_grad(loss), jit_compile=True)(*args)
print(repr(float(value)), repr(float(grad.sum())))
heavy = [m for m in ("autograph.api", "autograph.autodiff.transform",
                     "autograph.runtime.exec.native.lower", "autograph.runtime.exec.optimize",
                     "autograph.operators.control_flow") if m in sys.modules]
print("imported:", heavy, "compiled:", len(compiled))
''')
    env = dict(os.environ, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"),
               AUTOGRAPH_CACHE_KEY=str(tmp_path / "key" / "cache-key"), AUTOGRAPH_VERBOSITY="2",
               NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = [subprocess.run([sys.executable, str(source)], env=env, capture_output=True,
                           text=True, check=True) for _ in range(2)]
    runs = [d.stdout.splitlines() for d in done]
    assert runs[0][0] == runs[1][0]                   # the same value and gradient
    assert runs[0][1] != "imported: [] compiled: 0"   # the first process traced and compiled
    assert runs[1][1] == "imported: [] compiled: 0", (runs[1], done[1].stderr[-3000:])


# -- every gradient sample, kept and loaded ------------------------------------------------------

def _samples(tmp_path):
    from tests.autodiff import samples
    with open(samples.__file__) as f:
        return load_module(tmp_path, f.read(), "samples_again")


def _sample_args(name):
    from tests.autodiff import samples
    rng = np.random.default_rng(3)
    if name in [f.__name__ for f in samples.MATRIX]:   # (their x holds one value per step)
        return rng.uniform(0.2, 0.9, 3), rng.standard_normal((3, 3)) / 3
    return (rng.uniform(0.2, 0.9, 4),)


def _sample_names():
    from tests.autodiff import samples
    return [f.__name__ for f in samples.VECTOR + samples.MATRIX]


# under jit_compile=True a sample of them (each is a Numba compile, 1-10 s: all 13 passed
# when this was written, 26 s of CPU more)
JIT_SAMPLES = ("serial_for", "break_in_loop", "continue_in_loop", "data_dependent_while")


@pytest.mark.parametrize("name,jit", [(n, False) for n in _sample_names()] +
                         [(n, True) for n in JIT_SAMPLES])
def test_every_gradient_sample_loads_bit_for_bit(tmp_path, cache_dir, monkeypatch, name, jit):
    """The class, not the RNN alone: each gradient sample (Python loops, conditionals,
    break/continue/return, TensorArrays) traced in one 'process' is loaded in the next,
    without tracing or lowering, and gives the very bits the traced one gave."""
    if jit:
        pytest.importorskip("numba")
    monkeypatch.setattr(sys.modules[__name__], "_module", _samples)
    args = _sample_args(name)
    traced, fn, loaded = _traced_then_loaded(tmp_path, monkeypatch, name, args,
                                             ag.value_and_grad, jit)
    _same(traced, loaded)
    _same(loaded, fn(*args))
