"""A jit_compile=True Function's calls go to a function generated for its first call's
argument types (autograph.function.native_call): it answers exactly as the general path and the
interpreter do, for every call form, and hands everything it does not check to the
general path (other types, dtypes and shapes, traces, eager mode, device scopes)."""

import gc
import traceback

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.variables import DeletedVariableError  # noqa: E402
from tests.runtime.test_native import collatz, same  # noqa: E402


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


class CountingDict(dict):
    """The fast path's dict, counting lookups: the generated entry makes none."""
    gets = 0

    def get(self, key, default=None):
        self.gets += 1
        return super().get(key, default)


def counted(f):
    f._fast = CountingDict(f._fast)
    return f._fast


def scaled(x, s):
    return x * s, (x > s).sum(), {"mean": x.mean() * s}


def test_entry_answers_like_the_interpreter_on_many_inputs():
    f = ag.function(collatz, jit_compile=True)
    plain = ag.function(collatz)
    f(np.int64(27))
    assert f._entry is not f._generic and "def collatz(n):" in f._entry.__source__
    lookups = counted(f)
    for n in range(1, 300):
        got = f(np.int64(n))
        assert same(got, plain(np.int64(n))) and got == collatz(n)
    assert lookups.gets == 0   # every call went through the entry's own check


def test_other_types_dtypes_and_shapes_take_the_general_path():
    f = ag.function(scaled, jit_compile=True)
    x = np.arange(6.0)
    f(x, np.float64(2.0))
    lookups = counted(f)
    cases = [(x, np.float64(2.0)), (x, np.float32(2.0)), (x, np.int64(3)),
             (np.arange(6, dtype=np.float32), np.float64(2.0)), (np.arange(4.0), np.float64(2.0)),
             (x.reshape(2, 3), np.float64(2.0)), (x[::2], np.float64(2.0)),
             (np.arange(12.0)[::2], np.float64(2.0)),   # same shape, not contiguous
             (np.array(2.0), np.float64(2.0))]
    for args in cases:
        want = ag.function(scaled)(*args)
        for _ in range(2):
            got = f(*args)
            assert same(got[:2], want[:2]) and same(got[2]["mean"], want[2]["mean"]), args
    assert lookups.gets > 0   # the others were found (or traced) by the general path


def test_keywords_and_python_s_own_arity_errors():
    f = ag.function(scaled, jit_compile=True)
    x = np.arange(3.0)
    first = f(x, np.float64(2.0))
    lookups = counted(f)
    got = f(s=np.float64(2.0), x=x)
    assert same(got[0], first[0]) and lookups.gets == 0
    with pytest.raises(TypeError, match=r"scaled\(\) missing 1 required positional"):
        f(x)
    with pytest.raises(TypeError, match=r"scaled\(\) got an unexpected keyword argument 'y'"):
        f(x, y=np.float64(1.0))


def test_positional_only_parameters_stay_positional_only():
    def pos(a, /, b):
        return a - b

    f = ag.function(pos, jit_compile=True)
    f(np.float64(5.0), np.float64(2.0))
    assert "def pos(a, /, b):" in f._entry.__source__
    assert f(np.float64(5.0), b=np.float64(1.0)) == 4.0
    with pytest.raises(TypeError, match="positional-only"):
        f(a=np.float64(5.0), b=np.float64(1.0))


def test_parameters_named_like_the_body_s_names_still_answer_right():
    def clash(native, r, t0, a0):
        return native * 1000 + r * 100 + t0 * 10 + a0

    f = ag.function(clash, jit_compile=True)
    args = [np.int64(v) for v in (1, 2, 3, 4)]
    for _ in range(3):
        assert f(*args) == 1234
    assert f(*args[::-1]) == 4321

    def builtin_names(type, Exception):
        return type - Exception

    f = ag.function(builtin_names, jit_compile=True)
    for _ in range(3):
        assert f(np.int64(5), np.int64(3)) == 2


def test_a_new_trace_starts_over_and_the_latest_types_get_the_entry():
    f = ag.function(collatz, jit_compile=True)
    f(np.int64(27))
    f(np.int32(27))          # a second trace: the entry is forgotten, then remade
    assert f.experimental_get_tracing_count() == 2
    assert "_ag_t0" in f._entry.__source__ and f._entry.__globals__["_ag_t0"] is np.int32
    for n in (np.int64(9), np.int32(9), np.int64(9)):   # both types, no churn
        assert f(n) == 19 and type(f(n)) is np.int64
    assert f._entry.__globals__["_ag_t0"] is np.int32


def test_traces_eager_mode_and_device_scopes_bypass_the_entry():
    calls = []

    def noted(x):
        calls.append(1)
        return x * 2

    f = ag.function(noted, jit_compile=True)
    f(np.float64(1.5))
    f(np.float64(1.5))
    assert len(calls) == 1
    ag.config.run_functions_eagerly(True)
    try:
        assert f(np.float64(1.5)) == 3.0
    finally:
        ag.config.run_functions_eagerly(False)
    assert len(calls) == 2   # eager mode ran the Python function

    @ag.function
    def outer(x):
        return f(x) + 1   # traced: f's Python runs inside outer's graph

    assert outer(np.float64(1.5)) == 4.0 and len(calls) == 3
    with ag.device("cpu"):
        assert f(np.float64(1.5)) == 3.0
    assert f(np.float64(1.5)) == 3.0


def test_variables_are_read_when_called_scalar_and_array():
    v = ag.Variable(np.float64(1.5))
    w = ag.Variable(np.ones(3))

    def g(x):
        v.assign_add(x)
        return v.read_value() * w.read_value()

    f = ag.function(g, jit_compile=True)
    plain = ag.function(g)
    runs = {}
    for fn in (f, plain):
        v.assign(np.float64(1.5))
        w.assign(np.ones(3))
        out = [fn(np.float64(0.5))]
        w.assign(np.full(3, 2.0))
        out += [fn(np.float64(0.5)), fn(np.float64(0.5)), v.numpy()]
        runs[fn] = out
    assert f._entry is not f._generic
    assert all(same(a, b) for a, b in zip(runs[f], runs[plain]))


def test_errors_of_the_entry_start_at_the_user_s_call():
    v = ag.Variable(np.float64(2.0))

    def h(x):
        return x * v.read_value()

    f = ag.function(h, jit_compile=True)
    f(np.float64(1.0))
    assert f._entry is not f._generic
    del v
    gc.collect()
    with pytest.raises(DeletedVariableError) as info:
        f(np.float64(1.0))
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [fr.filename for fr in frames] == [__file__]


def test_methods_get_an_entry_per_instance():
    class Model:
        def __init__(self, k):
            self.k = k

        @ag.function(jit_compile=True)
        def step(self, x):
            return x * self.k

    a, b = Model(np.float64(2.0)), Model(np.float64(3.0))
    for _ in range(3):
        assert a.step(np.float64(5.0)) == 10.0 and b.step(np.float64(5.0)) == 15.0
    assert a.step._entry is not a.step._generic and a.step._entry is not b.step._entry
