"""Formatted printing: f-strings, `str.format` and `%` of tensors print the values of every
call (compared with what eager Python + NumPy prints for the same values), in both
executors, in tensor loops and branches; Python values format as Python does; Python's
`print` given a tensor warns once per line."""

import contextlib
import io
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.operators.formatting import SymbolicPrintWarning
from autograph.runtime.exec import codegen, interpreter
from autograph.runtime.ir.tensor import SymbolicTensorError


def _stdout(fn, *args):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        fn(*args)
    return buffer.getvalue()


def _check_every_executor(fn, *calls):
    """`fn` traced prints, on every call and in each executor, what the eager Python
    function prints for the same arguments (and the Python function is not changed)."""
    traced = ag.function(fn)
    for args in calls:
        want = _stdout(fn, *args)
        assert want, "the reference printed nothing"
        assert _stdout(traced, *args) == want
        graph = traced.get_concrete_function(*args).graph
        assert _stdout(interpreter.run, graph, list(args)) == want
        assert _stdout(codegen.compile_graph(graph), *args) == want
    assert traced.experimental_get_tracing_count() == 1


def fstrings(x, n):
    loss = np.sum(x * x)
    ag.print(f"loss={loss:.3f} repr={loss!r} str={loss!s} {{braces}} n={n:>4} x={x}")
    ag.print(f"{loss=}", f"{n:#x}", f"{x[0]:+.2e}|{x[-1]:<8.1f}|{np.mean(x):^10.4g}|")
    width, digits = 12, 5
    ag.print(f"[{loss:{width}.{digits}f}] [{loss!r:>30}] {[n, loss]} {(x[1],)}")


def test_fstrings_print_values_on_every_call():
    _check_every_executor(fstrings, (np.array([1.5, -2.25, 3.0]), np.int64(3)),
                          (np.array([0.1, 2.0, -7.125]), np.int64(255)))


def percent_and_format(x, i):
    ag.print("%d: %.2f" % (i, np.sum(x)))
    ag.print("{} {:>6}".format(i, np.max(x)), "{1}-{0}".format(i, x[0]))
    ag.print("%s|%r|%5.1f%%|%x" % (x[1], x[2], x[0], i))
    ag.print("%(a)s and %(b).3f" % {"a": i, "b": x[0]}, "%s" % x, "%*.*f" % (9, 3, x[0]))
    ag.print("{a:.2f} {b[1]} {0}".format(i, a=x[0], b=x))


def test_percent_and_str_format_print_values():
    _check_every_executor(percent_and_format, (np.array([1.25, 2.5, -3.75]), np.int64(7)),
                          (np.array([10.0, 0.5, 2.0]), np.int64(-42)))


TEMPLATE = "loss={:.3f} first={x0:+.1e}"


class _Formats:   # an object whose own `format` method is not str.format
    def format(self, *args):
        return "own:" + ",".join(type(a).__name__ for a in args)


def template_in_a_variable(x, i):
    tmpl = "{}: {:.2f}" if len(x) > 2 else "short {}: {:.2f}"   # chosen at trace time
    ag.print(tmpl.format(i, np.sum(x)))
    ag.print(TEMPLATE.format(np.max(x), x0=x[0]))
    ag.print(_Formats().format(1, "a"))


def test_format_of_a_template_held_in_a_variable_prints_values():
    _check_every_executor(template_in_a_variable,
                          (np.array([1.25, 2.5, -3.75]), np.int64(7)),
                          (np.array([10.0, 0.5, 2.0]), np.int64(-3)))


def loops_and_branches(x, n):
    total = np.float64(0.0)
    for i in range(n):
        total = total + x[i]
        if x[i] > 0:
            ag.print(f"step {i}: +{x[i]:.3f} total={total:.2f}")
        else:
            ag.print("step %d: %.1f (skipped)" % (i, x[i]))
    while total > 1:
        total = total / 2
        ag.print("halved: {:.4f}".format(total))
    return total


def test_prints_once_per_iteration_in_tensor_loops_and_branches():
    _check_every_executor(loops_and_branches, (np.array([0.5, -1.0, 2.0, 3.5]), np.int64(4)),
                          (np.array([4.0, 1.0, -2.0, 9.0]), np.int64(3)))


def test_python_values_format_at_trace_time_exactly_as_python():
    def fn(x):
        name, k, values = "w", 3, [1.5, 2]
        text = f"{name!r}:{k:03d} {values} {{}}" + "{:>5}|{}".format(k, name) + "%s-%05.1f" % (
            name, 2.25)
        ag.print(text, "%(k)s" % {"k": k})
        return x + len(text)

    traced = ag.function(fn)
    assert ag.to_code(fn).count("ag__.str_") == 4
    want = _stdout(fn, np.float64(1.0))
    assert want == "'w':003 [1.5, 2] {}    3|ww-002.2 3\n"
    assert _stdout(traced, np.float64(1.0)) == want   # a str: one Const, len() works
    assert traced(np.float64(1.0)) == fn(np.float64(1.0))
    converted = ag.to_graph(fn)
    assert _stdout(converted, np.float64(1.0)) == want   # converted code on Python values


def test_ag_print_mixes_staged_strings_with_other_arguments():
    def fn(x):
        ag.print("x:", f"{x[0]:.1f}", x, sep="|", end="!\n")
        ag.print("a " + f"{np.sum(x):.2f}" + " b", f"<{f'{x[1]:.1f}':>6}>")

    _check_every_executor(fn, (np.array([1.0, 2.0]),), (np.array([-3.5, 4.25]),))


def test_python_print_of_a_tensor_warns_once_with_the_users_line():
    def fn(x):
        print("tracing", x)
        print(f"{x}")
        print("no tensor")
        return x

    traced = ag.function(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _stdout(traced, np.float64(1.0))
        _stdout(traced, np.array([1.0]))    # a new trace: the same lines do not warn again
    assert 'tracing Tensor("x:0", shape=(), dtype=float64)\n' in out
    assert 'Tensor("x:0", shape=(), dtype=float64)\nno tensor\n' in out
    ours = [w for w in caught if w.category is SymbolicPrintWarning]
    assert len(ours) == 2
    first_line = fn.__code__.co_firstlineno + 1
    assert [w.lineno for w in ours] == [first_line, first_line + 1]
    assert all(w.filename == __file__ for w in ours)
    assert "ag.print" in str(ours[0].message)


def test_python_print_on_python_values_is_unchanged_and_silent():
    def fn(x):
        print("value", x, sep="=", end=";\n")
        return x

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _stdout(ag.to_graph(fn), 5) == "value=5;\n"


def test_staged_strings_refuse_uses_that_need_the_text_with_the_users_line():
    def as_key(x):
        d = {f"{x}": 1}
        return d

    def compared(x):
        return x if f"{x:.1f}" == "1.0" else -x

    def method(x):
        return f"{x}".upper()

    for fn, what in ((as_key, "dict key"), (compared, "comparison"), (method, ".upper()")):
        with pytest.raises((SymbolicTensorError, AttributeError)) as e:
            ag.function(fn)(np.float64(1.0))
        assert what in str(e.value) and "test_formatting.py" in str(e.value)
        assert "ag.print" in str(e.value)


def test_format_errors_are_pythons_at_trace_time():
    def bad_count(x):
        ag.print("%d %d" % (x,))

    def bad_spec(x):
        ag.print(f"{x:.2f}")

    def hex_of_float(x):
        ag.print("%x" % x)

    with pytest.raises(TypeError, match="not enough arguments"):
        ag.function(bad_count)(np.float64(1.0))
    with pytest.raises(TypeError, match="unsupported format string"):
        ag.function(bad_spec)(np.ones(3))     # NumPy refuses a spec for an array too
    with pytest.raises(TypeError) as eager:
        hex_of_float(np.float64(1.0))
    with pytest.raises(TypeError) as traced:
        ag.function(hex_of_float)(np.float64(1.0))
    assert "integer is required" in str(eager.value) and "integer is required" in str(traced.value)


def test_variables_in_fstrings_are_read_when_the_graph_runs():
    v = ag.Variable(np.float64(1.5))

    @ag.function
    def fn(x):
        ag.print(f"v={v:.2f}")
        v.assign(v + x)
        ag.print(f"v={v:.2f}")

    assert _stdout(fn, np.float64(1.0)) == "v=1.50\nv=2.50\n"
    assert _stdout(fn, np.float64(1.0)) == "v=2.50\nv=3.50\n"


def test_generated_code_is_readable():
    code = ag.to_code(percent_and_format)
    assert "ag__.str_mod('%d: %.2f', (i, np.sum(x)))" in code
    assert "ag__.str_format('{} {:>6}', i, np.max(x))" in code
    code = ag.to_code(fstrings)
    assert "ag__.str_format('loss={:.3f} repr={!r} str={!s} {{braces}} n={:>4} x={}'" in code


def test_a_returned_staged_string_is_refused_naming_the_function():
    def label(x):
        return f"x={x:.2f}"

    with pytest.raises(TypeError, match="label returned the string 'x=Tensor"):
        ag.function(label)(np.float64(1.0))
    assert label(np.float64(1.0)) == "x=1.00" == ag.to_graph(label)(np.float64(1.0))


def tensor_specs(x, w):
    ag.print(f"[{x[0]:{w}.{w - 2}f}] [{x[1]!a:>{w}}] [{f'{x[2]:.1f}':*^{w}}]")
    ag.print("{0:{1}}|{2}".format(x[1], w, {"k": x[2]}))


def test_specs_and_widths_that_are_tensors_are_filled_at_run_time():
    _check_every_executor(tensor_specs, (np.array([3.14159, -2.5, 7.25]), np.int64(9)),
                          (np.array([1.0, 22.0, 333.0]), np.int64(6)))
