"""optimize: same values as the unoptimised graph, fewer nodes where expected, effects kept."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, optimize
from tests.runtime.samples import SAMPLES
from tests.runtime.tracing import assert_same, capture_stdout, run, trace


def ops(graph):
    return [n.op for n in graph.nodes]


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_optimized_graph_computes_the_same_and_is_not_larger(sample):
    graph, _ = trace(sample.fn, *sample.args)
    opt = optimize.optimize(graph)
    assert len(list(opt.walk())) <= len(list(graph.walk()))
    assert [t.dtype for t in opt.outputs] == [t.dtype for t in graph.outputs]
    assert len(opt.inputs) == len(graph.inputs)
    want, want_printed = capture_stdout(interpreter.run, graph, sample.args)
    got, printed = capture_stdout(codegen.compile_graph(opt), *sample.args)
    assert_same(list(got), want)
    assert printed == want_printed


def test_constant_folding():
    def f(x):
        k = np.float64(2.0) * 3.0 + np.arange(3.0)      # NumPy values: folded
        c = ag.constant(4.0)
        return x + (c * c - 1.0) + k
    graph, _ = trace(f, np.ones(3))
    opt = optimize.optimize(graph)
    assert "multiply" in ops(graph)
    assert "multiply" not in ops(opt) and "subtract" not in ops(opt)
    assert ops(opt).count("add") == 2                  # only the additions with x remain
    x = np.array([1.0, 2.0, 3.0])
    assert_same(run(opt, [x], "codegen"), run(graph, [x], "interpreter"))


def test_folding_respects_size_limit_and_keeps_dtypes():
    def f(x):
        big = ag.constant(np.zeros(optimize.FOLD_LIMIT + 1)) + 1.0   # too large to fold
        small = ag.constant(np.ones(4, np.float32)) * 2                # weak 2: stays float32
        return x + np.sum(big), small
    graph, _ = trace(f, np.float64(1.0))
    opt = optimize.optimize(graph)
    adds = [n for n in opt.nodes if n.op == "add"]
    assert any(n.outputs[0].shape == (optimize.FOLD_LIMIT + 1,) for n in adds)
    assert "multiply" not in ops(opt)
    [small_const] = [n for n in opt.nodes if n.op == "Const" and n.outputs[0].shape == (4,)]
    assert small_const.attrs["value"].dtype == np.float32
    total, small = run(opt, [np.float64(1.0)], "codegen")
    assert total == optimize.FOLD_LIMIT + 2 and small.dtype == np.float32


def test_common_subexpressions_are_merged():
    def f(x, y):
        a = np.tanh(x * y) + 1.0
        b = np.tanh(x * y) + 1.0
        return a * b, np.tanh(x * y)
    graph, _ = trace(f, np.float64(0.5), np.float64(2.0))
    opt = optimize.optimize(graph)
    assert ops(graph).count("tanh") == 3 and ops(opt).count("tanh") == 1
    assert ops(opt).count("multiply") == 2
    args = [np.float64(0.5), np.float64(2.0)]
    assert_same(run(opt, args, "codegen"), run(graph, args, "interpreter"))


def test_dead_nodes_are_dropped_but_effects_are_kept_in_order():
    v = ag.Variable(0.0, name="v")

    def f(x):
        unused = np.exp(x) * 5.0             # dead
        ag.print("first", x)
        v.assign(x * 2.0)                    # effect: kept although nothing uses it
        ag.print("second", v)
        ag.print("third")
        del unused
        return x + 1.0
    graph, _ = trace(f, np.float64(1.0))
    opt = optimize.optimize(graph)
    assert "exp" in ops(graph) and "exp" not in ops(opt)
    effects = [n.op for n in opt.nodes if n.op in ("print", "assign_variable")]
    assert effects == ["print", "assign_variable", "print", "print"]
    out, printed = capture_stdout(codegen.compile_graph(opt), np.float64(1.5))
    assert printed == "first 1.5\nsecond 3.0\nthird\n" and float(out[0]) == 2.5
    assert float(v.numpy()) == 3.0


def test_dead_code_inside_loop_bodies_is_dropped_and_effectful_loops_kept():
    def f(n):
        def body(i):
            np.sqrt(i * 2.0)                  # dead inside the body
            return i + 1
        ag.while_loop(lambda i: i < n, body, (0,))          # result unused, no effects: dead
        ag.while_loop(lambda i: i < n, lambda i: (ag.print(i), i + 1)[1], (0,))  # effectful
        return n * 2
    graph, _ = trace(f, np.int64(3))
    opt = optimize.optimize(graph)
    loops = [n for n in opt.nodes if n.op == "while_loop"]
    assert len(loops) == 1
    assert "print" in ops(loops[0].attrs["body_graph"])
    _, printed = capture_stdout(codegen.compile_graph(opt), np.int64(3))
    assert printed == "0\n1\n2\n"


def test_cond_with_constant_predicate_is_inlined():
    def f(x):
        return ag.cond(ag.constant(3) > 2, lambda: x + 1, lambda: x - 1)
    graph, _ = trace(f, np.float64(1.0))
    opt = optimize.optimize(graph)
    assert "cond" in ops(graph) and "cond" not in ops(opt)
    assert float(run(opt, [np.float64(1.0)], "codegen")[0]) == 2.0


def test_unused_cond_outputs_and_their_branch_work_are_dropped():
    def f(x):
        a, b = ag.cond(x > 0, lambda: (x + 1.0, np.exp(x)), lambda: (x - 1.0, np.log(-x)))
        return a * 2.0
    graph, _ = trace(f, np.float64(1.0))
    opt = optimize.optimize(graph)
    [node] = [n for n in opt.nodes if n.op == "cond"]
    assert len(node.outputs) == 1
    branch_ops = ops(node.attrs["true_graph"]) + ops(node.attrs["false_graph"])
    assert "exp" not in branch_ops and "log" not in branch_ops
    for x in (1.0, -1.0):
        assert_same(run(opt, [np.float64(x)], "codegen"), run(graph, [np.float64(x)], "interpreter"))


def test_captures_no_branch_uses_any_more_are_dropped_with_their_outer_work():
    def f(x, y):
        heavy = np.exp(y) * 3.0                      # only feeds a dead branch computation
        def yes():
            np.log(heavy)                            # dead inside the branch
            return x + 1.0
        return ag.cond(x > 0, yes, lambda: x - 1.0)
    args = [np.float64(1.0), np.float64(2.0)]
    graph, _ = trace(f, *args)
    opt = optimize.optimize(graph)
    [node] = [nd for nd in opt.nodes if nd.op == "cond"]
    assert len(node.inputs) == 2                     # pred and x: `heavy` is gone
    assert "exp" not in ops(opt)
    assert all(len(node.attrs[k].inputs) == 1 for k in ("true_graph", "false_graph"))
    for x in (1.0, -1.0):
        assert_same(run(opt, [np.float64(x), args[1]], "codegen"),
                    run(graph, [np.float64(x), args[1]], "interpreter"))


def test_loop_variables_nothing_needs_are_dropped():
    def f(n, x):
        def body(i, total, waste, shown):
            ag.print(shown)
            return i + 1, total + x, np.exp(waste) + total, shown * 2
        i, total, waste, shown = ag.while_loop(lambda i, *_: i < n, body, (0, x, x, 1))
        return total
    args = [np.int64(3), np.float64(0.5)]
    graph, _ = trace(f, *args)
    opt = optimize.optimize(graph)
    [loop] = [nd for nd in opt.nodes if nd.op == "while_loop"]
    assert len(loop.outputs) == 3                    # i (condition), total (result), shown (print)
    assert "exp" not in ops(loop.attrs["body_graph"])
    assert len(loop.attrs["body_graph"].inputs) == len(loop.attrs["cond_graph"].inputs)
    want = capture_stdout(interpreter.run, graph, args)
    for fn in (codegen.compile_graph(opt), lambda *a: interpreter.run(opt, a)):
        got = capture_stdout(fn, *args)
        assert_same(list(got[0]), want[0])
        assert got[1] == want[1] == "1\n2\n4\n"


def test_variable_reads_are_merged_only_when_nothing_writes_in_between():
    v = ag.Variable(1.0, name="v")

    def f(x):
        a = v.read_value() + v * 2.0             # two reads: merged
        ag.print(v)                              # printing writes nothing: still merged
        v.assign(x)
        b = v.read_value()                       # after an assignment: a new read
        ag.cond(x > 10, lambda: [v.assign(x * 2.0), None][1], lambda: None)
        c = v.read_value()                       # after a cond that may assign: a new read
        return a, b, c
    graph, _ = trace(f, np.float64(5.0))
    opt = optimize.optimize(graph)
    assert ops(graph).count("read_variable") == 5 and ops(opt).count("read_variable") == 3
    for x, want in [(5.0, (3.0, 5.0, 5.0)), (20.0, (3.0, 20.0, 40.0))]:
        v.assign(1.0)
        out, printed = capture_stdout(codegen.compile_graph(opt), np.float64(x))
        assert tuple(float(t) for t in out) == want and printed == "1.0\n"
