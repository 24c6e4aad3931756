"""Errors a user can act on: tracebacks that start at the user's call and show only the
user's code, errors raised while a graph runs that name the user's file, line and source
text (codegen and interpreter, inside branches and loops), and leaked-tensor errors that
say where the tensor was made."""

import os
import traceback

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import interpreter

HERE = os.path.abspath(__file__)
PACKAGE = os.path.dirname(os.path.abspath(ag.__file__))


def line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


def frames(exc):
    return traceback.extract_tb(exc.__traceback__)


def assert_user_traceback(exc, fn, text):
    """The traceback is the user's: the first frame is this test's call, the next the user's
    line `text` in `fn`, and no frame is autograph's own or generated code."""
    tb = frames(exc)
    assert tb[0].filename == HERE and tb[0].name.startswith("test_"), tb
    files = [f.filename for f in tb]
    assert not any(f.startswith(PACKAGE + os.sep) for f in files), files
    assert not any(f.startswith("<autograph") for f in files), files
    user = [f for f in tb if f.name == fn.__name__]
    assert user and user[-1].filename == HERE and user[-1].lineno == line_of(fn, text)
    assert user[-1].line.strip() == text
    return tb


def assert_names_user_line(exc, fn, text):
    message = str(exc) + "\n".join(getattr(exc, "__notes__", []))
    assert f"{HERE}:{line_of(fn, text)}" in message, message
    assert text in message, message


# -- errors raised while the graph runs -----------------------------------------------------------

def matmul(A, b):
    y = A @ b
    return y + 1


def test_shape_mismatch_at_run_time_names_the_user_line_and_keeps_its_type():
    f = ag.function(matmul, input_signature=[ag.TensorSpec([None, None]), ag.TensorSpec([None])])
    A, b = np.ones((2, 3), np.float32), np.ones(4, np.float32)
    for _ in range(2):   # the first call and the fast path of later calls alike
        with pytest.raises(ValueError) as info:
            f(A, b)
        assert_names_user_line(info.value, matmul, "y = A @ b")
        assert_user_traceback(info.value, matmul, "y = A @ b")
        assert "mismatch" in str(info.value)          # NumPy's own message is still there
    np.testing.assert_allclose(f(A, np.ones(3, np.float32)), [4.0, 4.0])


def test_concrete_function_and_interpreter_name_the_user_line_too():
    f = ag.function(matmul)
    conc = f.get_concrete_function(ag.TensorSpec([None, None]), ag.TensorSpec([None]))
    A, b = np.ones((2, 3), np.float32), np.ones(4, np.float32)
    with pytest.raises(ValueError) as info:
        conc(A, b)
    assert_names_user_line(info.value, matmul, "y = A @ b")
    assert_user_traceback(info.value, matmul, "y = A @ b")
    with pytest.raises(ValueError) as info:
        interpreter.run(conc.graph, [A, b])
    assert_names_user_line(info.value, matmul, "y = A @ b")


def index_in_branch(x, i):
    s = x[0]
    if s > 0:
        s = s + x[i]
    return s


def index_in_loop(x, n):
    s = x[0]
    i = 0
    while i < n:
        s = s + x[i] * 2
        i += 1
    return s


def index_in_for(x, n):
    s = x[0]
    for i in range(n):
        s += x[i]
    return s


@pytest.mark.parametrize("fn, text, args", [
    (index_in_branch, "s = s + x[i]", (np.ones(3), np.int64(7))),
    (index_in_loop, "s = s + x[i] * 2", (np.ones(3), np.int64(5))),
    (index_in_for, "s += x[i]", (np.ones(3), np.int64(50))),
], ids=["cond", "while", "for"])
def test_index_out_of_bounds_inside_branches_and_loops(fn, text, args):
    f = ag.function(fn)
    with pytest.raises(IndexError) as info:
        f(*args)
    assert_names_user_line(info.value, fn, text)
    assert_user_traceback(info.value, fn, text)
    conc = f.get_concrete_function(*args)
    with pytest.raises(IndexError) as info:
        interpreter.run(conc.graph, list(args))
    assert_names_user_line(info.value, fn, text)


def reshape_rows(x):
    rows = np.reshape(x, (-1, 3))
    return rows.sum(axis=1)


def test_reshape_failing_at_run_time():
    f = ag.function(reshape_rows, input_signature=[ag.TensorSpec([None])])
    np.testing.assert_allclose(f(np.arange(6.0, dtype=np.float32)), [3.0, 12.0])
    with pytest.raises(ValueError) as info:
        f(np.arange(4.0, dtype=np.float32))
    assert_names_user_line(info.value, reshape_rows, "rows = np.reshape(x, (-1, 3))")
    assert_user_traceback(info.value, reshape_rows, "rows = np.reshape(x, (-1, 3))")


def divide(a, b):
    q = a // b
    return q + 1


def test_integer_division_by_zero_raising_under_errstate():
    f = ag.function(divide)
    assert f(np.int64(7), np.int64(2)) == 4
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        f(np.int64(7), np.int64(0))
    assert_names_user_line(info.value, divide, "q = a // b")
    assert_user_traceback(info.value, divide, "q = a // b")


def test_error_of_a_hand_built_graph_names_its_node():
    from autograph.runtime.exec import codegen
    from autograph.runtime.ir import primitives
    from autograph.runtime.ir.graph import Graph

    def boom_kernel(xp, x):
        raise ZeroDivisionError("boom")
    primitives.register("test_user_errors_boom", lambda x: [(x.dtype, x.shape, False)],
                        boom_kernel)
    g = Graph("hand_built")
    with g.as_default():
        x = g.placeholder("x", np.float64, ())
        g.set_outputs([primitives.bind1("test_user_errors_boom", [x])])
    for run in (codegen.compile_graph(g), lambda a: interpreter.run(g, [a])):
        with pytest.raises(ZeroDivisionError, match="boom") as info:
            run(np.float64(1.0))
        assert "hand_built" in str(info.value) and "test_user_errors_boom" in str(info.value)
        # the node was made here, in this test: that is the user's line
        assert f"{HERE}:" in str(info.value)


# -- errors raised while tracing ------------------------------------------------------------------

def helper_fails(v):
    if v[0] > 100:
        v = v - 1
    return np.reshape(v, (7, 3))


def calls_helper(x):
    y = x + 1
    z = helper_fails(y)
    return z


def test_trace_error_traceback_starts_at_the_call_and_shows_user_lines_only():
    f = ag.function(calls_helper)
    with pytest.raises(ValueError, match="reshape") as info:
        f(np.ones(4))
    tb = assert_user_traceback(info.value, helper_fails, "return np.reshape(v, (7, 3))")
    names = [fr.name for fr in tb]
    assert names[1:3] == ["calls_helper", "helper_fails"], names
    assert tb[1].line.strip() == "z = helper_fails(y)"
    text = "".join(traceback.format_exception(info.value))
    assert "autograph: raised in converted code" not in text   # the frames say it already


def raises_value_error(x):
    if x[0] > 0:
        raise ValueError("negative input")
    return x


def test_user_exception_keeps_its_type_and_message():
    f = ag.function(raises_value_error)
    with pytest.raises(ValueError, match="negative input") as info:
        f(np.ones(2))   # a Python condition (the shape is known): raised while tracing
    assert info.value.args == ("negative input",)
    assert_user_traceback(info.value, raises_value_error, 'raise ValueError("negative input")')


def test_signature_errors_start_at_the_user_call():
    f = ag.function(matmul, input_signature=[ag.TensorSpec([None, None]), ag.TensorSpec([None])])
    with pytest.raises(TypeError, match="input_signature") as info:
        f(np.ones(3, np.float32), np.ones(3, np.float32))
    tb = frames(info.value)
    assert tb[0].filename == HERE and len(tb) == 1   # nothing of autograph's


def test_show_internal_frames_switch():
    f = ag.function(matmul, input_signature=[ag.TensorSpec([None, None]), ag.TensorSpec([None])])
    A, b = np.ones((2, 3), np.float32), np.ones(4, np.float32)
    ag.config.show_internal_frames(True)
    try:
        assert ag.config.internal_frames_shown()
        with pytest.raises(ValueError) as info:
            f(A, b)
    finally:
        ag.config.show_internal_frames(False)
    files = [fr.filename for fr in frames(info.value)]
    assert any(fname.startswith(PACKAGE + os.sep) for fname in files)
    assert any(fname.startswith("<autograph codegen") for fname in files)
    assert_names_user_line(info.value, matmul, "y = A @ b")   # the message says it anyway


def test_environment_variable_turns_on_full_tracebacks():
    import subprocess
    import sys
    code = ("import autograph as ag; print(ag.config.internal_frames_shown())")
    env = dict(os.environ, AUTOGRAPH_TRACEBACK="full")
    root = os.path.dirname(PACKAGE)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "True"


# -- leaked tensors -------------------------------------------------------------------------------

KEPT = []  # a module global: changing it stays a trace-time side effect


def keeps_loop_values(x):
    i = 0
    while i < x:
        y = x * 2
        KEPT.append(y)
        i += 1
    return i + KEPT[0]


def test_tensor_kept_from_a_loop_body_names_its_line_and_variable():
    with pytest.raises(ValueError) as info:
        ag.function(keeps_loop_values)(np.int64(3))
    msg = str(info.value)
    assert f"{HERE}:{line_of(keeps_loop_values, 'y = x * 2')}" in msg and "`y`" in msg
    assert f"{HERE}:{line_of(keeps_loop_values, 'while i < x')}" in msg
    assert "ag.TensorArray" in msg
    assert_user_traceback(info.value, keeps_loop_values, "return i + KEPT[0]")


class Holder:
    pass


def test_tensor_stored_on_an_object_and_used_later_names_where_it_was_made():
    holder = Holder()

    def stores(x):
        holder.t = x + 1
        return x

    def reads(x):
        return x + holder.t

    ag.function(stores)(np.int64(1))
    with pytest.raises(ValueError) as info:
        ag.function(reads)(np.int64(2))      # in another trace
    where = f"{HERE}:{line_of(stores, 'holder.t = x + 1')}"
    assert where in str(info.value) and "`holder.t`" in str(info.value)
    assert "`stores`" in str(info.value) and "`reads`" in str(info.value)
    with pytest.raises(ValueError, match="outside the function trace") as info:
        holder.t + 1                          # eagerly, after the trace
    assert where in str(info.value)
    with pytest.raises(TypeError) as info:
        np.asarray(holder.t)
    assert where in str(info.value)


branch_values = []


def keeps_branch_value(x):
    if x > 0:
        z = x + 1
        branch_values.append(z)
    return x


def test_tensor_kept_from_a_branch_names_the_branch():
    ag.function(keeps_branch_value)(np.int64(3))
    out = branch_values
    with pytest.raises(ValueError) as info:
        np.sum(out[0])
    msg = str(info.value)
    assert f"{HERE}:{line_of(keeps_branch_value, 'z = x + 1')}" in msg and "`z`" in msg
    assert f"{HERE}:{line_of(keeps_branch_value, 'if x > 0')}" in msg
