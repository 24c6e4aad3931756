"""The trace cache (autograph.function.trace_cache): a later process (here: the same file
loaded again as a new module, with the disk caches on in a temporary directory) loads a
trace's compiled code instead of tracing, and the loaded trace computes what the traced one
does; a trace whose tracing had effects or read what the key cannot name is never loaded."""

import os
import subprocess
import sys
import traceback

import numpy as np
import pytest

import autograph as ag
from autograph.function import trace_cache, trace_type
function_module = sys.modules["autograph.function"]   # (ag.function is the decorator)
from autograph.source import cache_auth, disk_cache
from benchmarks.cases.cliffs import SEARCH_RANGE
from benchmarks.programs import COLLATZ
from tests.conftest import load_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = '''
import os
import numpy as np
import autograph as ag
from numpy import where

DEVNULL = os.devnull
SCALE = 3
LIMITS = (1, 2.5)

''' + COLLATZ + SEARCH_RANGE + '''

def mixed(x, n):
    total = np.zeros_like(x)
    for _ in range(n):
        if np.sum(x) > LIMITS[0]:
            total = total + x * SCALE
        else:
            total = where(x > 0, total, -x)
    return total, {"sum": np.sum(total), "n": n, "name": "mixed"}, [np.zeros(2), None]

def solve(a, b):
    return np.linalg.solve(a, b), np.linalg.inv(a) @ b

def inner(x):
    def twice(v):
        return v * 2
    return twice(x) + np.float32(LIMITS[1])

def failing(x, i):
    y = x * 2
    return y[i]

def failing_loop(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + x[i]
        i += 1
    return s

def draws(n):
    rng = np.random.default_rng()
    return rng.normal(size=n)

def dynamic_save(x):
    getattr(np, "sa" + "ve")(DEVNULL, np.zeros(1))
    return x

def counter_after(n):
    total = 0
    for i in range(n):
        total += i
    return total, i

def prints(x):
    print("tracing prints")
    return x + 1

def calls_helper(x):
    return helper(x)

def helper(x):
    return x + 1

def reads_list(x):
    return x + OFFSETS[0]

OFFSETS = [1.0]

def imports(x):
    import time
    return x + time.time()

def counts(x):
    global CALLS
    CALLS = CALLS + 1
    return x

CALLS = 0

def saves(x):
    np.save(DEVNULL, np.zeros(1))
    return x

def unrolls(x):
    for _ in range(1200):
        x = x + 1
    return x

def makes_variable(x):
    v = ag.Variable(np.ones(()))
    return v.read_value() + x
'''


def _module(tmp_path, text=MODULE, name="traced_mod"):
    return load_module(tmp_path, text, name)


def _traced_then_loaded(tmp_path, monkeypatch, name, *args):
    """(result traced in a first 'process', result of a second one that must load)"""
    first = ag.function(getattr(_module(tmp_path), name))
    traced = first(*args)
    disk_cache.flush()
    second = ag.function(getattr(_module(tmp_path), name))
    with monkeypatch.context() as m:
        m.setattr(function_module.Function, "_trace_graph", _refuse)
        loaded = second(*args)
    assert second.experimental_get_tracing_count() == 1
    return traced, loaded, second


def _refuse(*args, **kwargs):
    raise AssertionError("traced again instead of loading the trace")


def _same(a, b):
    if isinstance(a, dict):
        assert type(b) is dict and list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    else:
        assert type(a) is type(b) and a == b


@pytest.mark.parametrize("name,args", [
    ("collatz", (np.int64(27),)),
    ("search", (np.arange(10), np.int64(7))),
    ("search", (np.arange(10), np.int64(70))),
    ("mixed", (np.arange(3.0), 4)),
    ("mixed", (-np.arange(3.0), 2)),
    ("solve", (np.eye(3) * 2 + 1, np.arange(3.0))),
    ("inner", (np.ones(2, np.float32),)),
    ("counter_after", (np.int64(5),)),
])
def test_a_loaded_trace_computes_what_python_and_the_traced_one_do(tmp_path, cache_dir,
                                                                      monkeypatch, name, args):
    traced, loaded, _ = _traced_then_loaded(tmp_path, monkeypatch, name, *args)
    _same(traced, loaded)
    expected = getattr(_module(tmp_path), name)(*args)
    if name == "search":   # plain Python returns its int; the graph an int64 scalar
        assert int(loaded) == expected
    else:
        np.testing.assert_allclose(np.asarray(loaded[0] if isinstance(loaded, tuple)
                                              else loaded, dtype=float),
                                   np.asarray(expected[0] if isinstance(expected, tuple)
                                              else expected, dtype=float))


def test_loaded_results_are_fresh_objects_each_call(tmp_path, cache_dir, monkeypatch):
    _, loaded, fn = _traced_then_loaded(tmp_path, monkeypatch, "mixed", np.arange(3.0), 1)
    again = fn(np.arange(3.0), 1)
    assert again[1] is not loaded[1] and again[2] is not loaded[2]
    again[2][0][0] = 5.0                  # a constant output is a new writable array
    assert fn(np.arange(3.0), 1)[2][0][0] == 0.0


def test_a_loaded_trace_draws_new_random_numbers_each_call(tmp_path, cache_dir, monkeypatch):
    _, loaded, fn = _traced_then_loaded(tmp_path, monkeypatch, "draws", 4)
    assert loaded.shape == (4,) and not np.array_equal(loaded, fn(4))


def test_errors_of_a_loaded_trace_name_the_users_line(tmp_path, cache_dir, monkeypatch):
    ag.function(_module(tmp_path).failing)(np.arange(3), np.int64(1))
    disk_cache.flush()
    fn = ag.function(_module(tmp_path).failing)
    with monkeypatch.context() as m:
        m.setattr(function_module.Function, "_trace_graph", _refuse)
        with pytest.raises(IndexError) as info:
            fn(np.arange(3), np.int64(7))
    text = str(info.value)
    assert "traced_mod.py:" in text and "return y[i]" in text, text
    shown = "".join(traceback.format_exception(info.value))
    assert "trace cache" not in shown and "codegen" not in shown, shown


def test_errors_of_a_loaded_trace_name_the_loop_and_its_iteration(tmp_path, cache_dir,
                                                                   monkeypatch):
    ag.function(_module(tmp_path).failing_loop)(np.arange(3.0), np.int64(2))
    disk_cache.flush()
    fn = ag.function(_module(tmp_path).failing_loop)
    with monkeypatch.context() as m:
        m.setattr(function_module.Function, "_trace_graph", _refuse)
        with pytest.raises(IndexError) as info:
            fn(np.arange(3.0), np.int64(7))
    text = str(info.value)
    assert "s = s + x[i]" in text, text
    assert "traced_mod.py:" in text and "(`while i < n:`), iteration 3" in text, text
    assert "which began with i = 3, s = 3.0" in text, text


def test_a_loaded_trace_has_its_graph_when_asked(tmp_path, cache_dir, monkeypatch):
    _, _, fn = _traced_then_loaded(tmp_path, monkeypatch, "mixed", np.arange(3.0), 2)
    concrete = fn.get_concrete_function(np.arange(3.0), 2)
    assert concrete.graph.outputs and len(concrete.graph.nodes) > 3   # traced now
    outputs = concrete.structured_outputs
    assert outputs[1]["n"] == 2 and outputs[1]["name"] == "mixed"
    assert fn.experimental_get_tracing_count() == 1
    with ag.device("cpu"):   # another way to run it: from the graph
        np.testing.assert_allclose(fn(np.arange(3.0), 2)[0], 6 * np.arange(3.0))


def test_a_changed_global_misses_and_traces_again(tmp_path, cache_dir, monkeypatch):
    first = _module(tmp_path)
    np.testing.assert_allclose(ag.function(first.mixed)(np.ones(2), 1)[0], 3 * np.ones(2))
    disk_cache.flush()
    second = _module(tmp_path)
    second.SCALE = 5           # what another process's `SCALE = int(sys.argv[1])` would do
    np.testing.assert_allclose(ag.function(second.mixed)(np.ones(2), 1)[0], 5 * np.ones(2))
    third = _module(tmp_path, MODULE.replace("SCALE = 3", "SCALE = 4"))
    np.testing.assert_allclose(ag.function(third.mixed)(np.ones(2), 1)[0], 4 * np.ones(2))


@pytest.mark.parametrize("name,why", [
    ("prints", "print"),                 # Python's print runs when tracing, every process
    ("calls_helper", "helper"),          # a function of the user's: its code is not keyed
    ("reads_list", "OFFSETS"),           # a list can change without changing the key
    ("imports", "imports"),
    ("counts", "global"),
    ("saves", "save"),
    ("dynamic_save", "called"),          # seen only while tracing
    ("unrolls", "warned"),
    ("makes_variable", "Variables"),
])
def test_traces_with_effects_or_unnamed_inputs_are_never_loaded(tmp_path, cache_dir, name,
                                                                 why, caplog):
    ag.set_verbosity(2)
    try:
        with caplog.at_level("INFO", logger="autograph"):
            x = np.float64(1.0)
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ag.function(getattr(_module(tmp_path), name))(x)
                disk_cache.flush()
                second = ag.function(getattr(_module(tmp_path), name))
                second(x)
    finally:
        ag.set_verbosity(0)
    said = [r.getMessage() for r in caplog.records if "trace cache" in r.getMessage()]
    assert said and all(why in s for s in said), said
    assert not list(cache_dir.rglob("*.agt"))
    assert not any("loaded the trace" in r.getMessage() for r in caplog.records)


def test_a_damaged_file_is_ignored(tmp_path, cache_dir, monkeypatch):
    ag.function(_module(tmp_path).collatz)(np.int64(27))
    disk_cache.flush()
    (path,) = cache_dir.rglob("*.agt")
    path.write_bytes(path.read_bytes()[:40])
    assert ag.function(_module(tmp_path).collatz)(np.int64(27)) == 111
    path.write_bytes(b"\x00garbage")
    assert ag.function(_module(tmp_path).collatz)(np.int64(6)) == 8


def test_the_key_names_arguments_values_and_options(tmp_path, cache_dir):
    mod = _module(tmp_path)
    fn = ag.function(mod.mixed)
    names = ["x", "n"]
    spec = ag.TensorSpec([3], np.float64)
    k = trace_cache.cache_key(fn, names, (spec, trace_type.Literal(2)))
    assert k == trace_cache.cache_key(ag.function(_module(tmp_path).mixed), names,
                                      (spec, trace_type.Literal(2)))
    for other in [(spec, trace_type.Literal(3)), (spec, trace_type.Literal(2.0)),
                  (ag.TensorSpec([4], np.float64), trace_type.Literal(2)),
                  (ag.TensorSpec([3], np.float32), trace_type.Literal(2))]:
        assert trace_cache.cache_key(fn, names, other) != k
    mod.np = np.linalg                      # a global now names another module
    assert trace_cache.cache_key(fn, names, (spec, trace_type.Literal(2))) != k


def test_a_fresh_process_loads_and_imports_no_compiler(tmp_path):
    """Two real processes: the second loads the trace and never imports the converter,
    the tracer's operators, the optimizer or codegen; the README demo's Python prints (a
    trace's side effects) still show in every process."""
    script = tmp_path / "fresh.py"
    script.write_text(MODULE + '''
import sys
print(collatz(np.int64(27)), ag.function(collatz)(np.int64(27)))
heavy = [m for m in ("autograph.api", "autograph.runtime.exec.codegen",
                     "autograph.operators.control_flow", "autograph.runtime.exec.optimize")
         if m in sys.modules]
print("imported:", heavy)
print(ag.function(prints)(np.float64(1.0)))
''')
    env = dict(os.environ, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, check=True).stdout.splitlines() for _ in range(2)]
    assert runs[0][0] == runs[1][0] == "111 111"
    assert runs[0][1] != "imported: []"          # the first process traced
    assert runs[1][1] == "imported: []", runs[1]
    assert runs[0][2:] == runs[1][2:] == ["tracing prints", "2.0"]


def test_its_own_switch_turns_off_only_the_trace_cache(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_TRACE_CACHE", "0")
    assert ag.function(_module(tmp_path).collatz)(np.int64(27)) == 111
    disk_cache.flush()
    assert list(cache_dir.rglob("*.agc")) and not list(cache_dir.rglob("*.agt"))


def test_an_edited_autograph_module_misses(tmp_path, cache_dir, monkeypatch):
    """In a checkout the file lists autograph's modules as the tracing process had them
    (size, time); a module that changed since makes the load miss, and the new trace
    replaces the file."""
    import marshal
    if not trace_cache._checkout():
        pytest.skip("autograph is an installed package here: its version is in the key")
    ag.function(_module(tmp_path).collatz)(np.int64(27))
    disk_cache.flush()
    (path,) = cache_dir.rglob("*.agt")
    entry = marshal.loads(disk_cache.read(str(path)))
    names = [f[0] for f in entry["files"]]
    assert any(n.endswith("codegen.py") for n in names) and any(
        n.endswith("control_flow.py") for n in names), names
    entry["files"][0] = (entry["files"][0][0], entry["files"][0][1] + 1, entry["files"][0][2])
    path.write_bytes(cache_auth.sign(path.name.encode(), marshal.dumps(entry)))
    fn = ag.function(_module(tmp_path).collatz)
    traced = []
    original = function_module.Function._trace_graph
    monkeypatch.setattr(function_module.Function, "_trace_graph",
                        lambda *a: traced.append(1) or original(*a))
    assert fn(np.int64(27)) == 111 and traced == [1]
    disk_cache.flush()
    assert marshal.loads(disk_cache.read(str(path)))["files"][0][1] == entry["files"][0][1] - 1



def test_a_loaded_trace_runs_its_stored_code_without_compiling(tmp_path, cache_dir,
                                                               monkeypatch):
    """The entry holds the compiled code (marshal, signed with it): loading compiles
    nothing, and each code object in it is named like a freshly compiled trace (its own
    file name, shown in linecache), so tracebacks and the error locator find it."""
    import builtins
    import linecache
    import types
    first = ag.function(_module(tmp_path).mixed)
    traced = first(np.arange(3.0), 1)
    disk_cache.flush()
    module = _module(tmp_path)
    compiled = []
    real_compile = builtins.compile
    with monkeypatch.context() as m:
        m.setattr(builtins, "compile",
                  lambda *a, **k: compiled.append(str(a[1])) or real_compile(*a, **k))
        m.setattr(function_module.Function, "_trace_graph", _refuse)
        fn = ag.function(module.mixed)
        loaded = fn(np.arange(3.0), 1)
    _same(traced, loaded)
    assert not [name for name in compiled if name.startswith("<autograph")], compiled
    (concrete,) = fn._traces.values()
    program = concrete._program[0]
    codes, todo = [], [program.__code__]
    while todo:
        codes.append(todo.pop())
        todo += [c for c in codes[-1].co_consts if type(c) is types.CodeType]
    names = {c.co_filename for c in codes}
    assert len(names) == 1 and "from the trace cache" in names.pop()
    assert program.__code__.co_filename in linecache.cache
