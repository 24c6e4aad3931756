"""How much Numba compiles for a `jit_compile=True` first call, counted (not timed) in
fresh processes (issue 30 goal 6): the RNN gradient's first call used to compile 124
functions, among them Numba's slice-assignment error formatting (`str` of ints, `join`,
f-strings) and `np.transpose`'s axes check, 14-20 s of CPU time; a second process loads
the machine code from the disk cache and compiles nothing."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

_CHILD = textwrap.dedent("""
    import json
    import numpy as np
    import autograph as ag
    from numba.core import event
    from autograph.runtime.exec.native import jit

    compiled = []

    class Count(event.Listener):
        def on_start(self, ev):
            d = ev.data.get("dispatcher")
            compiled.append(d.py_func.__qualname__ if d is not None else ev.kind)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Count())

    def loss(W, xs, h0):   # (renamed by the test: a new program, the same kernels)
        h = h0
        for t in ag.range(xs.shape[0]):
            h = np.tanh(h @ W + xs[t])
        return np.sum(h)

    rng = np.random.default_rng(0)
    W = rng.standard_normal((8, 8)) / 3
    xs, h0 = rng.standard_normal((12, 4, 8)), np.zeros((4, 8))
    v, g = ag.function(ag.value_and_grad(loss), jit_compile=True)(W, xs, h0)
    rv, rg = ag.value_and_grad(loss)(W, xs, h0)
    close = bool(np.allclose(v, rv, rtol=1e-12) and np.allclose(g, rg, rtol=1e-12, atol=1e-14))
    print(json.dumps({"compiled": compiled, "stats": jit.stats(), "close": close}))
""")


def _run(env, name="loss"):
    child = _CHILD.replace("loss", name)
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_rnn_gradient_compiles_few_functions_then_loads_them(tmp_path):
    env = dict(os.environ, AUTOGRAPH_CACHE_DIR=str(tmp_path), OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(sys.path))
    first = _run(env)
    assert first["close"]
    names = first["compiled"]
    slow = [n for n in names if any(k in n for k in (
        "raise_with_shape_context", "transpose", "str", "repr", "join", "broadcast"))]
    assert slow == []                 # the error formatting and axes checks of old
    assert len(names) <= 40           # was 124 (31 now: helpers, kernels, np.dot, allocs)
    assert first["stats"]["compiled"] == 1
    second = _run(env)                # a new process: the machine code from the cache
    assert second["close"]
    assert second["compiled"] == []   # Numba typed and compiled nothing
    assert second["stats"]["cache_hits"] == 1 and second["stats"]["compiled"] == 0
    # a new program (another function name) with the same fused loops and helpers: the
    # kernels' modules (kernel_modules.py) and the library load, only the function compiles
    third = _run(env, "other_loss")
    assert third["close"] and third["stats"]["compiled"] == 1
    assert "native_other_loss" in third["compiled"]
    assert not [n for n in third["compiled"] if n.startswith(("fused", "put_", "grow", "np_"))]


def test_numpy_calls_go_through_the_library_without_literals():
    """`np.empty((0, 32), t)` in the generated function calls the library's wrapper (compiled
    once per machine, not once per process) with `int(...)` items: a literal shape would
    make Numba compile the wrapper once per value. Calls with keywords, other functions
    and constants inside indexing (a tuple's item needs a literal) stay as written."""
    from autograph.runtime.exec.native import library
    line, used = library.wrap("    b = np.empty((0, 32) + (n,), np.float64)")
    assert line == "    b = np_empty_2((int(0), int(32)) + (n,), np.float64)" and \
        used == {"np_empty_2"}
    line, used = library.wrap("s = np.sum(np.ascontiguousarray(h[0]), axis=1) + np.sum(t[1])")
    assert line == "s = np.sum(np_ascontiguousarray_1(h[0]), axis=1) + np_sum_1(t[1])"
    assert used == {"np_ascontiguousarray_1", "np_sum_1"}
    assert library.wrap("q = np.full((2,), True, np.bool_)")[0] == \
        "q = np_full_3((int(2),), bool(True), np.bool_)"
    assert library.wrap("if np.all(x):") == ("if np.all(x):", ())   # not a whole statement
    assert library.wrap("y = np.tanh(x)") == ("y = np.tanh(x)", set())
    assert used <= library.names()


def test_every_library_function_is_imported_from_the_part_that_defines_it():
    """The library is written as parts (a process loads only those its programs import):
    each function's import names a module whose source defines it, and the functions it
    calls (grad_code.DEPENDS) are defined beside it."""
    import ast
    from autograph.runtime.exec.native import library
    from autograph.runtime.exec.native.grad_code import DEPENDS
    parts = library._part_of_module()
    assert len(parts) > 3 and len(set(parts.values())) == len(parts)
    for name in sorted(library.names()):
        (line,) = library.import_lines({name})
        module = line.split()[1]
        defined = {n.name for n in ast.parse(library.source(parts[module])).body
                   if isinstance(n, ast.FunctionDef)}
        assert line == f"from {module} import {name}" and name in defined
        assert set(DEPENDS.get(name, ())) <= defined
    lines = library.import_lines({"grow", "put_set_2_2", "np_sum_1", "matmul"})
    assert len(lines) == 3 and "import matmul, np_sum_1" in " ".join(lines)
