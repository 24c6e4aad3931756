"""autograph.api: to_graph, to_code, do_not_convert, converted_call."""

import functools

import numpy as np
import pytest

import autograph as ag
from autograph import api

SCALE = 2


def uses_global(x):
    if x > 0:
        x = x * SCALE
    return x


def test_to_graph_is_cached_and_keeps_metadata():
    a, b = api.to_graph(uses_global), api.to_graph(uses_global)
    assert a is b
    assert a.__name__ == "uses_global" and a.__doc__ == uses_global.__doc__


def test_globals_are_live():
    global SCALE
    converted = api.to_graph(uses_global)
    assert converted(3) == 6
    SCALE = 10
    try:
        assert converted(3) == 30 == uses_global(3)
    finally:
        SCALE = 2


def test_closures_are_live_and_code_is_shared_between_closures():
    def make(k):
        def f(x):
            return x + k if x > 0 else x - k
        return f

    f1, f2 = make(1), make(100)
    c1, c2 = api.to_graph(f1), api.to_graph(f2)
    assert c1(5) == 6 and c2(5) == 105 and c2(-5) == -105
    # one conversion (same code object), two closures
    assert c1.__wrapped__.__code__ is c2.__wrapped__.__code__

    counter = 0

    def bump(x):
        nonlocal counter
        if x > 0:
            counter += x
        return counter

    converted = api.to_graph(bump)
    converted(3)
    converted(4)
    assert counter == 7
    counter = 100
    assert converted(1) == 101


def test_to_code_accepts_function_and_ag_function():
    f = ag.function(uses_global)
    code = api.to_code(f)
    assert code == api.to_code(uses_global)
    assert code.startswith("def uses_global(x):")
    assert "ag__.if_stmt(x > 0, if_true, if_false, (x,), ('x',))" in code
    assert ag.to_code is api.to_code


def test_inspect_getsource_shows_generated_code():
    import inspect
    assert "ag__.if_stmt" in inspect.getsource(api.to_graph(uses_global))


def test_methods_and_lambdas():
    class Model:
        def __init__(self, w):
            self.w = w

        def apply(self, x):
            while x < 100:
                x = x * self.w
            return x

        def __call__(self, x):
            return self.apply(x) if x > 0 else 0

    m = Model(3)
    assert api.to_graph(m.apply)(2) == m.apply(2) == 162
    assert api.to_graph(m)(2) == 162 and api.to_graph(m)(-1) == 0
    sq = lambda v: v * v if v > 0 else 0  # noqa: E731
    assert api.to_graph(sq)(3) == 9 and api.to_graph(sq)(-3) == 0
    assert "ag__.if_exp" in api.to_code(sq)
    part = functools.partial(uses_global, 4)
    assert api.to_graph(part)() == 8


def test_converted_call_converts_user_code_only():
    def user(x):
        if x > 0:
            return 1
        return 2

    seen = []

    @api.do_not_convert
    def opaque(x):
        seen.append(type(x).__name__)
        return x

    assert api.converted_call(user, 3) == 1
    assert api._target(user) is api.to_graph(user)
    assert api._target(opaque) is None  # marked
    assert api._target(np.tanh) is None and api._target(len) is None  # library
    assert api._target(functools.reduce) is None
    assert api.converted_call(np.maximum, 1, 2) == 2
    assert api.converted_call(opaque, 5) == 5 and seen == ["int"]


def test_do_not_convert_inside_traced_function():
    @api.do_not_convert
    def python_only(x):
        # would fail if converted and traced: a Python `if` on a tensor
        return x if isinstance(x, ag.Tensor) else x + 1

    def f(x):
        return python_only(x) * 2

    assert ag.function(f)(np.int64(3)) == 6
    assert "ag__.converted_call(python_only, x)" in api.to_code(f)


def test_library_detection():
    assert api.is_library(np) and api.is_library(np.tanh) and api.is_library(functools.partial)
    assert api.is_library(ag.print)
    assert not api.is_library(uses_global)


def test_recursion_on_python_values():
    def fib(n):
        if n < 2:
            return n
        return fib(n - 1) + fib(n - 2)

    assert api.to_graph(fib)(10) == 55
    assert ag.function(lambda n: fib(n))(12) == 144


def test_conversion_is_logged(caplog):
    import logging

    from autograph import log

    def fresh(x):
        while x > 1:
            x = x // 2
        return x

    old = log.get_verbosity()
    log.set_verbosity(1)
    try:
        with caplog.at_level(logging.INFO, logger="autograph"):
            api.to_graph(fresh)
    finally:
        log.set_verbosity(old)
    assert any("converted" in r.getMessage() and "fresh" in r.getMessage() for r in caplog.records)


def test_large_function_converts_in_linear_work():
    import types

    from tests import work

    def build(n):
        lines = ["def big(x):", "    s = 0"]
        for i in range(n // 4):
            lines += [f"    if x > {i}:", f"        s = s + {i}", "    else:", f"        s = s - x"]
        lines.append("    return s")
        namespace = {}
        src = "\n".join(lines)
        import linecache
        filename = f"<big-{n}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        exec(compile(src, filename, "exec"), namespace)
        return namespace["big"]

    # the work is counted (Python function calls), not timed: the count does not depend on
    # how busy the machine is; benchmarks/ (case 7a) times the same growth
    calls = {}
    for n in (100, 400):
        fn = build(n)
        converted, calls[n] = work.calls(lambda: api.to_graph(fn))
        assert isinstance(converted, types.FunctionType)
        assert converted(3) == fn(3) and converted(-1) == fn(-1)
    # 4x the lines: about 4x the calls (quadratic work would be 16x)
    assert calls[400] < 5 * calls[100], calls


def test_functions_without_source_run_unconverted_and_are_remembered():
    import linecache
    namespace = {"__name__": "user_code_from_exec"}
    exec(compile("def no_source(v):\n    return v * 3\n", "<no-source-file>", "exec"), namespace)
    no_source = namespace["no_source"]
    linecache.cache.pop("<no-source-file>", None)

    def caller(x):
        return no_source(x) + 1

    from autograph import errors
    with pytest.raises(errors.ConversionError):
        api.to_graph(no_source)
    assert api.to_graph(caller)(2) == 7
    assert no_source in api._unconvertible
    assert api.to_graph(caller)(3) == 10
