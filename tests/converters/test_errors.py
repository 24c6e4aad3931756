"""Bad programs get clear errors: the user's variable, file and line, and what to do."""

import os

import numpy as np
import pytest

import autograph as ag
from autograph import api, errors

HERE = os.path.basename(__file__)


def _line_of(fn, text):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(text)


def _trace(fn, *args):
    return ag.function(fn)(*args)


def one_branch(x):
    if x > 0:
        y = x + 1
    return y  # noqa: F821


def test_variable_defined_in_one_branch_of_tensor_if():
    # staged like Python runs it: a value where the branch ran, and Python's
    # UnboundLocalError, raised by the graph, where it did not
    f = ag.function(one_branch)
    assert f(np.int64(3)) == one_branch(3) == 4
    with pytest.raises(UnboundLocalError) as info:
        f(np.int64(-3))
    msg = str(info.value)
    assert "'y'" in msg and "only one branch" in msg
    assert f"{HERE}:{_line_of(one_branch, 'if x > 0')}" in msg
    assert "before the `if`" in msg  # what to do


def test_same_function_on_python_values_runs_like_python():
    assert api.to_graph(one_branch)(3) == 4
    with pytest.raises(UnboundLocalError):
        api.to_graph(one_branch)(-3)


def defined_in_loop(n):
    i = 0
    while i < n:
        last = i * 2
        i += 1
    return last  # noqa: F821


def test_variable_first_defined_in_tensor_loop_and_used_after():
    # allowed, as in TensorFlow: the graph checks that the loop ran
    f = ag.function(defined_in_loop)
    assert f(np.int64(3)) == defined_in_loop(3) == 4
    with pytest.raises(UnboundLocalError) as info:
        f(np.int64(0))
    msg = str(info.value)
    assert "'last'" in msg and "ran zero times" in msg and "before the loop" in msg
    assert f"{HERE}:{_line_of(defined_in_loop, 'while i < n')}" in msg
    assert api.to_graph(defined_in_loop)(3) == defined_in_loop(3) == 4


def dtype_mismatch(x):
    if x > 0:
        y = x.astype(np.float32)
    else:
        y = x
    return y


def test_branch_dtypes_differ_names_variable_and_both_types():
    with pytest.raises(errors.StagingError) as info:
        _trace(dtype_mismatch, np.int64(3))
    msg = str(info.value)
    assert "'y'" in msg and "float32" in msg and "int64" in msg
    assert f"{HERE}:{_line_of(dtype_mismatch, 'if x > 0')}" in msg


def loop_dtype_change(x):
    s = np.int64(0)
    i = 0
    while i < x:
        s = s + 0.5
        i += 1
    return s


def test_loop_variable_dtype_change_names_variable():
    with pytest.raises(errors.StagingError) as info:
        _trace(loop_dtype_change, np.int64(3))
    msg = str(info.value)
    assert "'s'" in msg and "int64" in msg and "float64" in msg


def different_structures(x):
    if x > 0:
        return x, x
    return x


def missing_return(x):
    if x > 0:
        return x


def test_returns_of_different_structures():
    with pytest.raises(errors.StagingError) as info:
        _trace(different_structures, np.int64(3))
    assert "return value" in str(info.value)
    assert f"{HERE}:{_line_of(different_structures, 'if x > 0')}" in str(info.value)
    with pytest.raises(errors.StagingError) as info:
        _trace(missing_return, np.int64(3))
    assert "None" in str(info.value) and "return" in str(info.value)
    # on Python values both behave exactly like Python
    assert api.to_graph(different_structures)(2) == (2, 2)
    assert api.to_graph(missing_return)(-2) is None


def try_around_loop(n):
    try:
        while n > 0:
            n -= 1
    except ValueError:
        n = -1
    return n


def test_try_around_tensor_loop():
    assert api.to_graph(try_around_loop)(3) == 0
    with pytest.raises(errors.StagingError) as info:
        _trace(try_around_loop, np.int64(3))
    msg = str(info.value)
    assert "try" in msg and f"{HERE}:{_line_of(try_around_loop, 'while n > 0')}" in msg


def python_condition_constructs(flag, x):
    # under a Python condition, anything goes: it runs as Python while tracing
    if flag:
        try:
            x = x + 1
        except ValueError:
            x = x - 1
    return x


def test_constructs_under_python_conditions_run_as_python():
    assert _trace(python_condition_constructs, True, np.int64(3)) == 4
    assert _trace(python_condition_constructs, False, np.int64(3)) == 3


def raises_inside(x):
    y = x + 1
    z = np.reshape(y, (7, 3))
    return z


def test_exception_in_converted_code_names_user_frames():
    with pytest.raises(ValueError) as info:
        _trace(raises_inside, np.int64(3))
    # (the user's frames are the traceback itself now, no longer a note beside it)
    import traceback
    text = "".join(traceback.format_exception(info.value))
    line = _line_of(raises_inside, "np.reshape")
    assert f'line {line}, in raises_inside\n    z = np.reshape(y, (7, 3))' in text
    assert "<autograph" not in text  # never only a line of generated code


def helper_that_fails(v):
    if v > 100:
        v = v - 1
    return v[0, 0]


def calls_failing_helper(x):
    return helper_that_fails(x) + 1


def test_exception_in_nested_converted_call_lists_both_user_frames():
    with pytest.raises(Exception) as info:
        api.to_graph(calls_failing_helper)(5)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "calls_failing_helper" in notes and "helper_that_fails" in notes
    assert "return v[0, 0]" in notes


def generator_fn(x):
    if x > 0:
        yield x


def uses_generator(x):
    return sum(generator_fn(x))


def test_generator_runs_as_python_and_tensor_condition_is_clear():
    with pytest.raises(errors.StagingError) as info:
        _trace(uses_generator, np.int64(3))  # first: the generator is reached through the call
    assert list(api.to_graph(generator_fn)(3)) == [3] and list(api.to_graph(generator_fn)(-3)) == []
    assert api.to_graph(uses_generator)(3) == 3
    msg = str(info.value)
    assert "generator" in msg and "yield" in msg
    assert f"{HERE}:{_line_of(generator_fn, 'if x > 0')}" in msg


def test_to_graph_of_a_builtin_is_a_clear_error():
    with pytest.raises(errors.ConversionError) as info:
        api.to_graph(len)
    assert "len" in str(info.value) or "builtin" in str(info.value)


def iterate_scalar(x):
    s = 0
    for v in x:
        s += v
    return s


def test_iterating_a_scalar_tensor():
    with pytest.raises(errors.StagingError) as info:
        _trace(iterate_scalar, np.int64(3))
    assert "0-d tensor" in str(info.value)
    assert f"{HERE}:{_line_of(iterate_scalar, 'for v in x')}" in str(info.value)


def growing_list(x):
    out = []
    i = 0
    while i < x:
        out = out + [i]
        i += 1
    return out


def test_loop_variable_changing_structure_names_it():
    with pytest.raises(errors.StagingError) as info:
        _trace(growing_list, np.int64(3))
    msg = str(info.value)
    assert "'out'" in msg and "TensorArray" in msg
    assert f"{HERE}:{_line_of(growing_list, 'while i < x')}" in msg
    assert api.to_graph(growing_list)(3) == [0, 1, 2]
