"""Every sample program in every mode: eager, interpreter, codegen, optimised; all agree with
the sample's independent NumPy reference, in values, dtypes and printed text."""

import linecache
import traceback

import numpy as np
import pytest

from autograph.runtime.exec import codegen, interpreter

from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph
from tests.runtime.samples import SAMPLES
from tests.runtime.tracing import MODES, assert_same, capture_stdout, run, trace


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_eager_matches_reference(sample):
    got, printed = capture_stdout(sample.fn, *sample.args)
    want, want_printed = sample.reference(*sample.args)
    assert_same(got, want)
    assert printed == want_printed


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_graph_matches_reference(sample, mode):
    (graph, _), traced_text = capture_stdout(trace, sample.fn, *sample.args)
    assert traced_text == ""            # ag.print stages a node; nothing prints while tracing
    want, want_printed = sample.reference(*sample.args)
    for _ in range(2):                  # a graph runs the same way every time (prints too)
        got, printed = capture_stdout(run, graph, sample.args, mode)
        assert_same(got, want)
        assert printed == want_printed


@pytest.mark.parametrize("convert", [True, False], ids=["converted", "unconverted"])
@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_samples_through_ag_function(sample, convert):
    """The whole stack: ag.function traces (through the compiler or not), optimises and
    runs the codegen'd graph; ag.print prints on every call, the trace happens once."""
    import autograph as ag
    f = ag.function(sample.fn, autograph=convert)
    want, want_printed = sample.reference(*sample.args)
    for _ in range(2):
        got, printed = capture_stdout(f, *sample.args)
        assert_same(got, want)
        assert printed == want_printed
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_codegen_equals_interpreter_exactly(sample):
    graph, _ = trace(sample.fn, *sample.args)
    a, _ = capture_stdout(interpreter.run, graph, sample.args)
    b, _ = capture_stdout(codegen.compile_graph(graph), *sample.args)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
        assert np.asarray(x).dtype == np.asarray(y).dtype


def test_codegen_source_is_straight_line_python_and_cached():
    from tests.runtime.samples import collatz
    graph, _ = trace(collatz, np.int64(27))
    fn = codegen.compile_graph(graph)
    assert codegen.compile_graph(graph) is fn          # compiled once per graph and device
    src = fn.__source__
    assert src.startswith("def collatz(arg0):")
    assert "while loop_var_0 != " in src and "if " in src and "else:" in src
    assert "k_" not in src        # every primitive of collatz is a Python operator
    # the generated module is registered so that tracebacks can show its lines
    filename = fn.__code__.co_filename
    assert linecache.getline(filename, 1).startswith("def collatz")


def test_codegen_traceback_points_into_generated_source():
    def boom_kernel(xp, x):
        raise ZeroDivisionError("boom")
    primitives.register("test_boom", lambda x: [(x.dtype, x.shape, False)], boom_kernel)
    g = Graph("exploding")
    with g.as_default():
        x = g.placeholder("x", np.float64, ())
        g.set_outputs([primitives.bind1("test_boom", [x])])
    fn = codegen.compile_graph(g)
    with pytest.raises(ZeroDivisionError) as info:
        fn(np.float64(1.0))
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename == fn.__code__.co_filename]
    assert frames and "k_test_boom(xp, x)" in frames[0].line


@pytest.mark.parametrize("mode", ["interpreter", "codegen", "optimized_codegen"])
@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_samples_run_on_the_array_api_strict_device(sample, mode):
    """Kernels, dtypes and constants come only from the device: the strict array API
    namespace gives the same answers (and prints the same text) as NumPy."""
    pytest.importorskip("array_api_strict")
    from autograph.runtime.devices import get_device
    dev = get_device("strict")
    graph, _ = trace(sample.fn, *sample.args)
    want, want_printed = sample.reference(*sample.args)
    args = [dev.to_device(a) for a in sample.args]
    got, printed = capture_stdout(run, graph, args, mode, dev)
    assert all(type(g).__module__.startswith("array_api_strict") for g in got)
    assert_same([dev.to_host(g) for g in got], want)
    assert printed == want_printed


def test_loop_is_one_node_whatever_the_trip_count():
    from tests.runtime.samples import collatz, nested_loops
    small, _ = trace(collatz, np.int64(6))
    large, _ = trace(collatz, np.int64(837799))
    assert len(small.nodes) == len(large.nodes)
    assert sum(n.op == "while_loop" for n in small.nodes) == 1
    fn = codegen.compile_graph(large)
    assert fn(np.int64(6))[0] == 8 and fn(np.int64(837799))[0] == 524
    g, _ = trace(nested_loops, np.int64(5), np.int64(7))
    loops = [n for n in g.walk() if n.op == "while_loop"]
    assert len(loops) == 2                          # the outer loop and its inner loop
    fn = codegen.compile_graph(g)
    assert fn(np.int64(5), np.int64(7))[0] == fn(np.int64(5), np.int64(7))[0]
    assert int(fn(np.int64(40), np.int64(40))[0]) == int(
        __import__("tests.runtime.samples", fromlist=["x"]).nested_loops_ref(40, 40)[0])


def test_codegen_edge_cases_inputs_as_outputs_constants_and_odd_names():
    from autograph.runtime.ir import primitives as prims
    g = Graph("odd name!")
    with g.as_default():
        a = g.placeholder("xp", np.float64, ())          # clashes with a generated global
        b = g.placeholder("while", np.float64, ())       # a Python keyword
        c = prims.constant(np.arange(3))
        g.set_outputs([a, b, c, a, a + b])
    args = [np.float64(1.0), np.float64(2.0)]
    want = interpreter.run(g, args)
    got = codegen.compile_graph(g)(*args)
    assert len(got) == 5
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(got[2], np.arange(3))
    empty = Graph("no_inputs")
    with empty.as_default():
        empty.set_outputs([prims.constant(7)])
    assert codegen.compile_graph(empty)()[0] == 7 and interpreter.run(empty, [])[0] == 7


def test_compiled_source_is_forgotten_with_its_graph():
    import gc
    graph, out = trace(lambda x: x + 1.0, np.float64(1.0))
    filename = codegen.compile_graph(graph).__code__.co_filename
    assert filename in linecache.cache
    del graph, out
    gc.collect()
    gc.collect()
    assert filename not in linecache.cache


def test_interpreter_check_catches_a_shape_rule_that_disagrees_with_its_kernel():
    primitives.register("test_liar", lambda x: [(np.dtype(np.float32), x.shape, False)],
                        lambda xp, x: x * 2.0)                     # really float64
    g = Graph("liar")
    with g.as_default():
        x = g.placeholder("x", np.float64, (2,))
        g.set_outputs([primitives.bind1("test_liar", [x])])
    np.testing.assert_array_equal(interpreter.run(g, [np.ones(2)])[0], [2.0, 2.0])
    with pytest.raises(AssertionError, match="'test_liar'.*float64.*float32"):
        interpreter.run(g, [np.ones(2)], check=True)


def test_one_compiled_graph_runs_in_many_threads_at_once():
    """Every run has its own locals and its own TensorArray storage."""
    from concurrent.futures import ThreadPoolExecutor
    from tests.runtime.samples import fizzbuzz_codes, fizzbuzz_codes_ref
    graph, _ = trace(fizzbuzz_codes, np.int64(16))
    fn = codegen.compile_graph(graph)

    def work(n):
        return [fn(np.int64(n)) for _ in range(20)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, [5, 16, 30, 45]))
    for n, runs in zip([5, 16, 30, 45], results):
        want, _ = fizzbuzz_codes_ref(n)
        for got in runs:
            assert_same(list(got), list(want))
