"""State in ag.function: Variables (read at run time), Python attributes and globals (read at
trace time), Variable creation (first trace only), deleted Variables, methods per instance,
and Functions calling Functions (inlined)."""

import gc

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.variables import DeletedVariableError


def test_variable_counter_is_read_and_written_at_run_time():
    a = ag.Variable(0.0)

    @ag.function
    def g():
        a.assign(a + 1.0)
        return a

    assert [float(g()) for _ in range(3)] == [1.0, 2.0, 3.0]
    assert g.experimental_get_tracing_count() == 1
    assert float(a.numpy()) == 3.0
    conc = g.get_concrete_function()
    assert "Variable" in str(conc).split("Captures:")[1]


class SimpleModel:
    def __init__(self):
        self.bias = 0.0      # plain Python attributes: read while tracing
        self.weight = 2.0


class BetterModel:
    def __init__(self):
        self.bias = ag.Variable(0.0)    # Variables: read when the graph runs
        self.weight = ag.Variable(2.0)


def test_plain_attributes_are_read_at_trace_time():
    @ag.function
    def evaluate(model, x):
        return model.weight * x + model.bias

    simple_model = SimpleModel()
    x = np.float32(10.0)
    assert evaluate(simple_model, x) == 20.0
    simple_model.bias += 5.0
    assert evaluate(simple_model, x) == 20.0     # did not change: same object, same trace
    # a new Function sees the new attribute value (it traces again)
    assert ag.function(evaluate.python_function)(simple_model, x) == 25.0
    # and so does a new object (keyed by identity)
    assert evaluate(SimpleModel(), x) == 20.0
    assert evaluate.experimental_get_tracing_count() == 2


def test_variables_in_attributes_are_read_at_run_time():
    @ag.function
    def evaluate(model, x):
        return model.weight * x + model.bias

    better_model = BetterModel()
    x = np.float32(10.0)
    assert evaluate(better_model, x) == 20.0
    better_model.bias.assign_add(5.0)
    assert evaluate(better_model, x) == 25.0
    assert evaluate.experimental_get_tracing_count() == 1


class Count:
    def __init__(self):
        self.count = None

    @ag.function
    def __call__(self):
        if self.count is None:
            self.count = ag.Variable(0)
        return self.count.assign_add(1)


def test_variable_created_in_first_trace_count_module():
    c = Count()
    assert int(c()) == 1
    assert int(c()) == 2
    assert int(c.count.numpy()) == 2
    # another instance traces its own method (and may create its own Variable)
    d = Count()
    assert int(d()) == 1
    assert int(c()) == 3


def test_creating_variables_on_a_later_trace_is_a_value_error():
    @ag.function
    def f(x):
        v = ag.Variable(1.0)
        return v + x

    assert f(1.0) == 2.0       # the first trace may create it; the Function keeps it alive
    assert f(1.0) == 2.0
    with pytest.raises(ValueError, match=r"f created ag.Variable .* while tracing again.*first "
                                         r"trace") as err:
        f(2.0)
    # refused at the creation itself: the report shows the user's line
    import traceback
    assert "v = ag.Variable(1.0)" in "".join(traceback.format_exception(err.value))


def test_calling_a_concrete_function_after_its_variable_died_is_a_clear_error():
    external_var = ag.Variable(3, name="external_var")

    @ag.function
    def f(x):
        return x * external_var

    traced_f = f.get_concrete_function(4)
    assert traced_f(4) == 12
    external_var = ag.Variable(4)    # the old Variable is garbage collected
    gc.collect()
    with pytest.raises(DeletedVariableError, match="external_var.*deleted"):
        traced_f(4)
    assert external_var.numpy() == 4


# -- methods -------------------------------------------------------------------------------

class Scaler:
    def __init__(self, factor):
        self.factor = factor
        self.traces = 0

    @ag.function
    def scale(self, x):
        self.traces += 1
        return x * self.factor


def test_methods_trace_per_instance_and_are_held_weakly():
    a, b = Scaler(2.0), Scaler(3.0)
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(a.scale(x), [2.0, 4.0])
    np.testing.assert_array_equal(b.scale(x), [3.0, 6.0])
    np.testing.assert_array_equal(a.scale(x), [2.0, 4.0])
    assert (a.traces, b.traces) == (1, 1)
    assert a.scale is a.scale                     # one bound Function per instance
    assert a.scale.experimental_get_tracing_count() == 1
    conc = a.scale.get_concrete_function(x)
    assert [p for p in str(conc).splitlines() if "Input" in p or "(POSITIONAL" in p] == [
        "  Input Parameters:",
        "    x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=float64, name=None)"]
    unbound = Scaler.__dict__["scale"]
    assert len(unbound._bound) == 2
    del a
    gc.collect()
    assert len(unbound._bound) == 1                # the instance died: its Function went too


# -- Functions calling Functions -----------------------------------------------------------

def test_a_function_calling_another_inlines_it(capsys):
    @ag.function
    def add(a, b):
        print("tracing add")
        return a + b

    @ag.function
    def dense_layer(x, w, b):
        return add(x @ w, b)

    out = dense_layer(np.ones((3, 2)), np.ones((2, 2)), np.ones(2))
    np.testing.assert_array_equal(out, np.full((3, 2), 3.0))
    assert capsys.readouterr().out == "tracing add\n"
    # add's body joined dense_layer's graph; add itself never traced
    assert add.experimental_get_tracing_count() == 0
    ops = [n.op for n in dense_layer.get_concrete_function(
        np.ones((3, 2)), np.ones((2, 2)), np.ones(2)).graph.as_graph_def().node]
    assert "add" in ops and "matmul" in ops
    # called on its own, add traces and runs as usual
    np.testing.assert_array_equal(add(np.ones(2), np.ones(2)), [2.0, 2.0])
    assert add.experimental_get_tracing_count() == 1


def test_inner_function_with_array_arguments_is_inlined_not_run_at_trace_time(capsys):
    @ag.function
    def inner(x):
        ag.print("inner runs")
        return x + 1

    inner(np.ones(2))                       # cached: a fast-path entry exists for this key
    assert capsys.readouterr().out == "inner runs\n"

    @ag.function
    def outer(x):
        return inner(np.ones(2)) + x        # same key as the cached call, but inside a trace

    np.testing.assert_array_equal(outer(np.zeros(2)), [2.0, 2.0])
    np.testing.assert_array_equal(outer(np.zeros(2)), [2.0, 2.0])
    # inner's ag.print became part of outer's graph: it prints on every run of outer
    assert capsys.readouterr().out == "inner runs\ninner runs\n"


def test_variable_arguments_are_keyed_by_identity_and_read_at_run_time():
    @ag.function
    def scaled(v, x):
        return v * x

    v, w = ag.Variable(2.0), ag.Variable(5.0)
    assert scaled(v, np.float64(3.0)) == 6.0
    v.assign(4.0)
    assert scaled(v, np.float64(3.0)) == 12.0       # same trace, new value
    assert scaled.experimental_get_tracing_count() == 1
    assert scaled(w, np.float64(3.0)) == 15.0       # another Variable: its own trace
    assert scaled.experimental_get_tracing_count() == 2
    del w
    gc.collect()
    assert len(scaled._traces) == 1                 # the dead Variable's trace was dropped


class Halver:
    @ag.function(input_signature=[ag.TensorSpec([None], np.float64)])
    def halve(self, x):
        return x / 2


def test_input_signature_on_a_method_skips_self():
    h = Halver()
    np.testing.assert_array_equal(h.halve(np.ones(2)), [0.5, 0.5])
    np.testing.assert_array_equal(h.halve(np.ones(3)), [0.5, 0.5, 0.5])
    assert h.halve.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match=r"halve\(x\): argument `x` does not fit"):
        h.halve(np.ones(2, np.int32))


def test_new_function_per_model_state_seed_workaround():
    def evaluate(model, x):
        return model.weight * x + model.bias

    x = np.float32(10.0)
    new_model = SimpleModel()
    evaluate_no_bias = ag.function(evaluate).get_concrete_function(new_model, x)
    # the model is part of the trace: pass only the array
    assert evaluate_no_bias(x) == 20.0
    new_model.bias += 5.0
    evaluate_with_bias = ag.function(evaluate).get_concrete_function(new_model, x)
    assert evaluate_with_bias(x) == 25.0
    assert evaluate_no_bias(x) == 20.0
    # the full structured call works too
    assert evaluate_with_bias(new_model, x) == 25.0
    with pytest.raises(TypeError, match="argument `model`"):
        evaluate_with_bias(SimpleModel(), x)
