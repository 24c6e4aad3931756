"""`ag.config.flush_denormals(bool)` (issue 30, goal 4): off by default; on, a subnormal
result is flushed to zero in NumPy, in generated code and in native code, on the calling
thread only (threads it starts while on inherit it); off (or leaving its `with` block)
restores exact subnormals; the rest of the floating-point environment (exception
reporting, rounding) is untouched."""

import threading

import numpy as np
import pytest

import autograph as ag
from autograph.runtime import fpu

pytestmark = pytest.mark.skipif(not fpu.supported(), reason="no flush mode on this platform")

TINY = np.float64(1e-308)          # normal; TINY * 1e-10 is subnormal (1e-318)
SUB = np.array([1e-320])           # a subnormal input


def decay(x):
    y = x
    for _ in ag.range(3):
        y = y * 1e-5
    return y


def _subnormal(v):
    v = np.asarray(v)
    return bool(np.all((v != 0) & (np.abs(v) < np.finfo(v.dtype).tiny)))


def test_off_by_default_and_exact():
    assert not ag.config.denormals_flushed()
    assert _subnormal(TINY * 1e-10) and TINY * 1e-10 == 1e-308 * 1e-10   # Python's floats
    assert _subnormal(ag.function(decay)(np.array([1e-300])))


def test_on_flushes_numpy_and_graphs_and_off_restores():
    before = ag.function(decay)(np.array([1e-300]))
    with ag.config.flush_denormals(True):
        assert ag.config.denormals_flushed()
        assert TINY * 1e-10 == 0.0
        assert (SUB * 1.0)[0] == 0.0                                 # denormals are zero
        assert np.float32(1e-38) * np.float32(1e-3) == 0.0
        np.testing.assert_array_equal(ag.function(decay)(np.array([1e-300])), [0.0])
        np.testing.assert_array_equal(ag.function(decay)(np.array([1.0])),
                                      decay(np.array([1.0])))        # normal numbers: same
    assert not ag.config.denormals_flushed()
    np.testing.assert_array_equal(ag.function(decay)(np.array([1e-300])), before)
    assert _subnormal(TINY * 1e-10)


def test_the_switch_without_with_and_nested_blocks():
    ag.config.flush_denormals(True)
    try:
        assert TINY * 1e-10 == 0.0
        with ag.config.flush_denormals(False):
            assert _subnormal(TINY * 1e-10)
        assert TINY * 1e-10 == 0.0                # the block put back what it found
    finally:
        ag.config.flush_denormals(False)
    assert _subnormal(TINY * 1e-10)


def test_running_threads_and_the_rest_of_the_environment_are_untouched():
    seen, go = [], threading.Event()

    def other():
        go.wait()
        seen.append(TINY * 1e-10)
    t = threading.Thread(target=other)
    t.start()                          # (a thread started later inherits the mode)
    with ag.config.flush_denormals(True):
        go.set()
        t.join()
        with pytest.warns(RuntimeWarning, match="overflow"):     # exceptions still reported
            np.array([1e308]) * 10.0
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            np.array([1.0]) / 0.0
        assert np.float64(1.0) / 3.0 == 1.0 / 3.0                 # round to nearest
    assert _subnormal(seen[0])


def test_native_code_flushes_too(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path))
    fn = ag.function(decay, jit_compile=True)
    assert _subnormal(fn(np.array([1e-300])))
    with ag.config.flush_denormals(True):
        np.testing.assert_array_equal(fn(np.array([1e-300])), [0.0])
    assert _subnormal(fn(np.array([1e-300])))
