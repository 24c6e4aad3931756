"""Generated native code calls the shared helpers and fused kernels through their address
(runtime/exec/native/unlinked.py) instead of linking their code into every program, and a
later process loads it without Numba's compiler registries (cache_load.py): counted in
the compiled modules and in fresh processes, values compared with the interpreter."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec.native import unlinked  # noqa: E402

# (an older Numba links the callees as before: test_unlinked_calls_need_numba_0_63 below)
needs_hooks = pytest.mark.skipif(not unlinked.supported(),
                                 reason="this Numba has no reload-init hooks (< 0.63)")


def unlinked_layer(W, x, b):
    return np.sum(np.tanh(x @ W + b))


def _defined(llvm):
    return [line.split("@", 1)[1].split("(", 1)[0] for line in llvm.splitlines()
            if line.startswith("define ")]


@needs_hooks
def test_generated_module_holds_its_function_not_the_helpers():
    """The generated function's module defines the function (and Numba's runtime's inline
    refcount functions), and calls the library's matmul and sum and the fused kernel by
    their symbols (in the suite, where the native cache is private to the process, the
    function compiles here)."""
    from autograph.runtime.exec.native import jit
    rng = np.random.default_rng(1)
    W, x, b = rng.standard_normal((6, 5)), rng.standard_normal((3, 6)), rng.standard_normal(5)
    hits = jit.stats()["cache_hits"]
    f = ag.function(unlinked_layer, jit_compile=True)
    np.testing.assert_allclose(f(W, x, b), ag.function(unlinked_layer)(W, x, b), rtol=1e-13)
    graph = f.get_concrete_function(W, x, b)._graph_to_run()
    dispatcher = jit.compile_graph(graph).__native__
    if jit.stats()["cache_hits"] != hits:
        pytest.skip("loaded from a shared native cache (AUTOGRAPH_TEST_CACHE_DIR): no LLVM")
    (llvm,) = dispatcher.inspect_llvm().values()
    defined = [d for d in _defined(llvm) if not d.startswith("NRT_")]
    assert defined and all("unlinked_layer" in d for d in defined), defined
    calls = {line.split('@"', 1)[1].split('"', 1)[0] for line in llvm.splitlines()
             if line.startswith("declare") and unlinked.PREFIX in line}
    for module, name in (("native_k_", "fused"), ("native_lib_", "matmul"),
                         ("native_lib_", "np_sum_1")):
        assert any(module in c and name in c for c in calls), (name, calls)


_MODULE = '''
import numpy as np
from numba import njit
from autograph.runtime.exec.native import cache_load, unlinked


@unlinked.njit(cache=True)
def scale(a, k):
    if k < 0:
        raise ValueError("scale: k < 0")
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * k
    return out


@cache_load.njit(cache=True)
def caller(a, k):
    return scale(a, k) + scale(a, 1.0)
'''

_CHILD = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import calls_by_address as m
a = np.arange(5.0)
out = {"value": m.caller(a, 3.0).tolist(), "hits": sum(m.caller.stats.cache_hits.values()),
       "callee_hits": sum(m.scale.stats.cache_hits.values()),
       "registries": "numba.np.polynomial.polynomial_core" in sys.modules}
try:
    m.caller(a, -1.0)
except ValueError as e:
    out["error"] = str(e)
if not out["hits"]:
    out["defined"] = [l.split("@", 1)[1].split("(", 1)[0]
                      for l in next(iter(m.caller.inspect_llvm().values())).splitlines()
                      if l.startswith("define ")]
print(json.dumps(out))
'''


def _child(folder, env):
    done = subprocess.run([sys.executable, "-c", _CHILD, str(folder)], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]   # (a symbol left unmapped aborts)
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_hooks
def test_cached_caller_links_to_a_callee_compiled_again_in_another_process(tmp_path):
    """The symbol a caller calls names the callee's module, name and argument types, not
    Numba's mangled name (which counts the compiling process's compilations): a cached
    caller still links when its callee's cache is gone and the callee compiles again."""
    (tmp_path / "calls_by_address.py").write_text(_MODULE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PYTHONPATH=os.pathsep.join(sys.path))
    expected = (np.arange(5.0) * 4).tolist()
    first = _child(tmp_path, env)
    assert first["value"] == expected and first["error"] == "scale: k < 0"
    assert first["hits"] == 0
    assert [d for d in first["defined"] if "scale" in d] == []     # not linked into it
    assert any("caller" in d for d in first["defined"])
    second = _child(tmp_path, env)       # both from the disk cache, Numba's registries not
    assert second["value"] == expected and second["error"] == "scale: k < 0"   # imported
    assert second["hits"] == 1 and second["callee_hits"] == 1
    assert second["registries"] is False
    for path in (tmp_path / "numba").rglob("*scale*"):      # the callee's cache only
        path.unlink()
    third = _child(tmp_path, env)
    assert third["value"] == expected and third["error"] == "scale: k < 0"
    assert third["hits"] == 1 and third["callee_hits"] == 0


def test_symbols_name_module_function_and_types():
    from numba import types
    a = types.float64[:, ::1]
    s1 = unlinked.symbol("mod_a", "fused", (a, a))
    assert s1.startswith(unlinked.PREFIX) and "mod_a" in s1 and "fused" in s1
    assert s1 == unlinked.symbol("mod_a", "fused", (a, a))
    assert s1 != unlinked.symbol("mod_b", "fused", (a, a))
    assert s1 != unlinked.symbol("mod_a", "fused", (a, types.float64[:, :]))


def test_unlinked_calls_need_numba_0_63():
    """Numba 0.61's code libraries have no reload-init hooks, and every jit_compile call
    failed there (AttributeError) while setup.cfg allows it: below 0.63 the shared
    functions are plain (linked) dispatchers, which the rest of the native tests run."""
    assert [unlinked.supported(v) for v in ("0.59.1", "0.61.2", "0.62.1", "0.63.0",
                                            "0.68.1", "1.0.0rc1", "dev")] == \
        [False, False, False, True, True, True, False]
    kind = type(unlinked.njit(lambda x: x + 1))
    assert (kind is unlinked.UnlinkedDispatcher) == unlinked.supported()
