"""Memory stays flat: autograph's caches keep alive nothing their user dropped.

Converted functions, their closures (which may hold large arrays), functions passed as
arguments, objects returned from traces and the generated files' bookkeeping all die with
what they belong to. Checked with weakrefs (is this object freed?) and tracemalloc (does
memory come back to where it began?), never with timings.
"""

import functools
import gc
import importlib
import sys
import textwrap
import tracemalloc
import warnings
import weakref

import numpy as np
import pytest

import autograph as ag
from autograph import api
from autograph.source import loader, origin

MiB = 1 << 20


def _growth(run, n):
    """Bytes still allocated after `run(i)` for i in range(n) (after a warm-up)."""
    for i in range(20):
        run(i)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(n):
            run(i)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _fresh_def(i):
    def g(n):
        s = 0
        for k in range(n):
            if k % 2 == 0:
                s += k + i
        return s
    return g


def test_ten_thousand_fresh_functions_through_to_graph_leave_memory_flat():
    def run(i):
        g = _fresh_def(i) if i % 2 else (lambda n: n + i if n > 0 else n - i)
        assert ag.to_graph(g)(4) == g(4)
    assert _growth(run, 10_000) < 10 * MiB


@pytest.mark.parametrize("kind", ["lambda", "def"])
def test_fresh_ag_functions_called_once_leave_memory_flat(kind):
    x = np.float64(2.0)
    made = []

    def run(i):
        if kind == "lambda":
            f = ag.function(lambda x: x + i if x > 0 else x - i)
        else:
            def g(x):
                if x > 0:
                    x = x + i
                return x
            f = ag.function(g)
        assert f(x) == 2.0 + i
        made.append(weakref.ref(f))
        made.append(weakref.ref(f.python_function))

    # a Function leaves nothing once gone: 150 of them far below 1 MiB (10,000 of them
    # through benchmarks/memory.py: see its docstring for the figures)
    assert _growth(run, 150) < 1 * MiB
    gc.collect()
    assert not [r for r in made if r() is not None]


def test_closures_over_big_arrays_are_freed():
    x = np.float64(1.0)
    refs = []
    for _ in range(5):
        big = np.ones(1 << 20)      # 8 MB
        refs.append(weakref.ref(big))
        f = ag.function(lambda x: x + big[0])
        assert f(x) == 2.0
        converted = ag.to_graph(lambda n: n + big[1] if n > 0 else n)
        assert converted(1) == 2.0
        del big, f, converted
    gc.collect()
    assert [r() for r in refs] == [None] * 5


def test_functions_passed_as_arguments_are_freed_with_their_closures():
    apply = ag.function(lambda fn, x: fn(x))
    x = np.ones(3)
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # RetracingWarning: each fn is a new object
        for i in range(20):
            big = np.full(1 << 18, float(i))
            step = lambda v: v * 2 + big[0]   # noqa: E731
            refs.append((weakref.ref(step), weakref.ref(big)))
            np.testing.assert_allclose(apply(step, x), x * 2 + i)
            np.testing.assert_allclose(apply(step, x), x * 2 + i)   # the fast path
            del step, big
    gc.collect()
    assert all(a() is None and b() is None for a, b in refs)
    # a function that stays alive keeps its trace and its fast path
    keep = lambda v: v - 1   # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        apply(keep, x)
    count = apply.experimental_get_tracing_count()
    for _ in range(3):
        np.testing.assert_allclose(apply(keep, x), x - 1)
    assert apply.experimental_get_tracing_count() == count


def test_fast_path_entry_of_a_function_argument_goes_with_it():
    apply = ag.function(lambda fn, x: fn(x))
    x = np.ones(2)
    step = lambda v: v + 1   # noqa: E731
    apply(step, x)
    apply(step, x)
    assert len(apply._fast) == 1
    ref = weakref.ref(step)
    del step
    gc.collect()
    assert ref() is None and not apply._fast and not apply._traces


def test_objects_returned_from_traces_die_with_the_function():
    class Thing:
        pass
    refs = []
    for _ in range(5):
        thing = Thing()
        refs.append(weakref.ref(thing))
        f = ag.function(lambda x, thing=thing: (x * 2, thing, [thing]))
        out = f(np.ones(2))
        assert out[1] is thing
        del thing, f, out
    gc.collect()
    assert [r() for r in refs] == [None] * 5


def test_traces_keyed_on_an_object_die_with_it():
    class Model:
        def __init__(self):
            self.w = np.ones(1 << 18)
    run = ag.function(lambda m, x: x + m.w[0])
    refs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(10):
            m = Model()
            refs.append(weakref.ref(m))
            run(m, np.ones(2))
            del m
    gc.collect()
    assert all(r() is None for r in refs) and not run._traces


def test_methods_of_dropped_instances_are_freed():
    class Net:
        def __init__(self):
            self.big = np.ones(1 << 18)

        @ag.function
        def __call__(self, x):
            return x + self.big[0]
    refs = []
    for _ in range(5):
        net = Net()
        refs.append(weakref.ref(net))
        net(np.ones(2))
        del net
    gc.collect()
    assert all(r() is None for r in refs) and not Net.__call__._bound


def test_conversions_of_dropped_code_are_forgotten(tmp_path, monkeypatch):
    """Functions of a module that is dropped: their conversions (generated code, origin
    map, linecache text, file name) go with their code objects."""
    n = 40
    source = "\n".join(textwrap.dedent(f"""
        def f{i}(n):
            s = 0
            for k in range(n):
                if k % 2 == {i % 2}:
                    s += k * {i}
            return s
        """) for i in range(n))
    (tmp_path / "dropped_module_for_memory.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    gc.collect()
    codes_before = len(api._by_code)
    files_before = len(origin._registry)
    names_before = len(loader._used_filenames)

    module = importlib.import_module("dropped_module_for_memory")
    fns = [getattr(module, f"f{i}") for i in range(n)]
    for i, fn in enumerate(fns):
        assert ag.to_graph(fn)(5) == fn(5)
        assert ag.function(fn)(np.int64(5)) == fn(5)
    assert len(api._by_code) == codes_before + n
    filenames = [api._by_code.get(fn.__code__).filename for fn in fns]
    assert all(origin.is_generated(name) for name in filenames)
    code_refs = [weakref.ref(fn.__code__) for fn in fns]

    del fns, fn, module
    sys.modules.pop("dropped_module_for_memory")
    gc.collect()
    assert all(r() is None for r in code_refs)
    assert len(api._by_code) == codes_before
    assert len(origin._registry) == files_before
    assert len(loader._used_filenames) == names_before
    assert not any(origin.is_generated(name) for name in filenames)


def test_converted_function_is_cached_on_the_live_function():
    g = _fresh_def(3)
    assert ag.to_graph(g) is ag.to_graph(g)
    assert api._by_code.get(g.__code__) is not None

    @functools.wraps(g)
    def wrapper(n):     # copies g.__dict__ (and so the cached conversion): must not use it
        return g(n) + 100
    assert ag.to_graph(wrapper)(4) == wrapper(4) == g(4) + 100
    # two functions made from one code share its conversion, each with its own closure
    h = _fresh_def(10)
    assert ag.to_graph(h)(4) == h(4) != g(4)
    assert ag.to_graph(h).__code__ is ag.to_graph(g).__code__ or \
        ag.to_graph(h).__autograph_generated__.__code__ is ag.to_graph(g).__autograph_generated__.__code__


def test_generated_code_keeps_its_origin_while_alive():
    """A converted function that lives keeps its generated file registered (tracebacks,
    to_code and error messages need it), even after the conversion cache forgot it."""
    def own(n):
        if n > 0:
            n = n * 2
        return n
    converted = ag.to_graph(own)
    filename = converted.__autograph_generated__.__code__.co_filename
    del own
    api._by_code.clear()
    gc.collect()
    assert origin.is_generated(filename)
    assert converted(4) == 8
    del converted
    gc.collect()
    assert not origin.is_generated(filename)
