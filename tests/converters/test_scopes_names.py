"""Names and scopes as Python has them, once converted: qualified names of nested
definitions, `global`/`nonlocal` declared inside blocks, mutable default arguments,
`locals()`, and source files that changed after import."""

import importlib
import linecache
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.errors import ConversionError

# -- qualified names ----------------------------------------------------------------------


class Outer:
    def make(self, flag=True):
        class Inner:
            def method(self):
                return 1

        def helper():
            def deeper():
                pass
            return deeper

        lam = lambda: 0  # noqa: E731
        if flag:
            def in_branch():
                pass
        else:
            def in_branch():
                pass
        found = []
        for i in range(2):
            def in_loop():
                pass
            found.append(in_loop.__qualname__)
        return (Inner.__qualname__, Inner.method.__qualname__, helper.__qualname__,
                helper().__qualname__, lam.__qualname__, in_branch.__qualname__, found,
                Inner().method())


def top_level(x):
    def g():
        return x
    return g.__qualname__, (lambda: 1).__qualname__, type("T", (), {}).__qualname__


@pytest.mark.parametrize("flag", [True, False])
def test_qualnames_in_a_method(flag):
    want = Outer().make(flag)
    assert want[0] == "Outer.make.<locals>.Inner"
    assert ag.to_graph(Outer.make)(Outer(), flag) == want
    assert ag.function(Outer().make)(flag) == want


def test_qualnames_in_a_function():
    assert ag.to_graph(top_level)(1) == top_level(1)


def test_converted_function_keeps_its_own_qualname():
    assert ag.to_graph(Outer.make).__qualname__ == "Outer.make"


# -- global / nonlocal declared in nested blocks ------------------------------------------

COUNTER = 0


def global_in_if(x):
    if x > 0:
        global COUNTER
        COUNTER = COUNTER + x
    for _ in range(2):
        COUNTER += 1
    return COUNTER


def global_in_loop_and_try(x):
    for i in range(x):
        try:
            global COUNTER
            COUNTER += i
        finally:
            pass
    return COUNTER


def make_nonlocal_in_while():
    n = 0

    def step(x):
        while x > 0:
            nonlocal n
            n += x
            x -= 1
        if n > 3:
            n = n * 10
        return n
    return step, (lambda: n)


@pytest.mark.parametrize("fn", [global_in_if, global_in_loop_and_try])
@pytest.mark.parametrize("x", [0, 3])
def test_global_in_nested_block(fn, x):
    global COUNTER
    COUNTER = 5
    want = fn(x)
    want_after = COUNTER
    COUNTER = 5
    assert ag.to_graph(fn)(x) == want
    assert COUNTER == want_after


def test_nonlocal_in_nested_block():
    step, get = make_nonlocal_in_while()
    step2, get2 = make_nonlocal_in_while()
    converted = ag.to_graph(step2)
    for x in (2, 1, 0):
        assert converted(x) == step(x)
        assert get2() == get()


def test_global_in_block_with_tensor_condition():
    global COUNTER
    COUNTER = 0

    def f(x):
        if x > 0:
            global COUNTER
            COUNTER = 1   # trace-time Python side effect, as in tf.function
        return x * 2
    assert ag.function(f)(np.float64(3.0)) == 6.0


# -- mutable default arguments ------------------------------------------------------------

def appends(x, acc=[]):  # noqa: B006 - the point of the test
    acc.append(x)
    return len(acc)


def counts(key, seen={}):  # noqa: B006
    seen[key] = seen.get(key, 0) + 1
    return seen[key]


def test_mutable_default_shared_with_original_when_converted():
    del appends.__defaults__[0][:]
    converted = ag.to_graph(appends)
    assert [converted(1), appends(2), converted(3)] == [1, 2, 3]
    assert appends.__defaults__[0] == [1, 2, 3]


def test_mutable_default_through_function():
    del appends.__defaults__[0][:]
    f = ag.function(appends)
    assert [f(1), f(2), f(2), appends(5)] == [1, 2, 3, 4]
    assert appends.__defaults__[0] == [1, 2, 2, 5]
    counts.__defaults__[0].clear()
    g = ag.function(counts)
    assert [g("a"), g("a"), counts("a"), g("b")] == [1, 2, 3, 1]


def test_list_argument_is_the_callers_object():
    def f(items):
        items.append(len(items))
        return len(items)
    mine = [7]
    assert ag.function(f)(mine) == 2
    assert mine == [7, 1]


# -- locals() -----------------------------------------------------------------------------

def uses_locals(x):
    y = 1
    if x > 0:
        z = 2
    for i in range(2):
        w = i
    while x > 5:
        x -= 1
    return locals()


def locals_in_branch(x):
    a = 1
    if x > 0:
        b = a + 1
        return sorted(locals())
    return sorted(vars())


def locals_with_return_flags(x):
    for i in range(3):
        if i == x:
            return locals()
    try:
        return helper_raises()
    except ValueError as e:
        del e
    return locals()


def helper_raises():
    raise ValueError


@pytest.mark.parametrize("fn", [uses_locals, locals_with_return_flags])
@pytest.mark.parametrize("x", [-1, 1, 7])
def test_locals_shows_what_python_shows(fn, x):
    want = fn(x)
    got = ag.to_graph(fn)(x)
    assert got == want
    assert list(got) == list(want)   # the same order too


def test_locals_in_branch():
    for x in (-1, 1):
        got = ag.to_graph(locals_in_branch)(x)
        assert not {"ag__", "if_true", "if_false", "retval_", "do_return"} & set(got)
        assert got == locals_in_branch(x)


def test_user_defined_locals_is_not_rewritten():
    namespace = {"locals": lambda: "mine", "ag": ag}
    source = "def f(x):\n    if x:\n        pass\n    return locals()\n"
    filename = "<user locals>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    assert ag.to_graph(namespace["f"])(1) == "mine"


# -- source changed after import ----------------------------------------------------------

MODULE = textwrap.dedent("""
    def f(x):
        if x > 0:
            return x + 1
        return -x
""")


@pytest.fixture
def changing_module(tmp_path, monkeypatch):
    path = tmp_path / "ag_changing_mod.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("ag_changing_mod", None)
    mod = importlib.import_module("ag_changing_mod")
    yield mod, path
    sys.modules.pop("ag_changing_mod", None)
    linecache.checkcache(str(path))


def test_unchanged_file_converts(changing_module):
    mod, _ = changing_module
    assert ag.to_graph(mod.f)(2) == 3


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("x + 1", "x + 2"),               # same lines, other constant
    lambda t: t.replace("x + 1", "x - 1"),               # same lines, other operator
    lambda t: "\n\n" + t.replace("-x", "x * 100"),         # moved and changed
])
def test_changed_file_is_refused(changing_module, edit):
    mod, path = changing_module
    path.write_text(edit(MODULE))
    linecache.checkcache(str(path))
    with pytest.raises(ConversionError, match="changed") as info:
        ag.to_graph(mod.f)
    assert str(path) in str(info.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ag.function(mod.f)(2) == mod.f(2) == 3   # the code that runs
    assert any("changed" in str(w.message) for w in caught)


def test_reformatted_file_still_converts(changing_module):
    mod, path = changing_module
    path.write_text(MODULE.replace("return -x", "return -x   # a comment"))
    linecache.checkcache(str(path))
    assert ag.to_graph(mod.f)(-2) == 2


def _functions_in(module):
    import inspect
    seen = []
    for value in vars(module).values():
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            seen.append(value)
        elif inspect.isclass(value) and value.__module__ == module.__name__:
            seen += [v for v in vars(value).values() if inspect.isfunction(v)]
    return seen


def test_unchanged_check_accepts_every_sample_function():
    """No false alarm: every function of the sample modules (nested lambdas, closures,
    classes, TensorArray loops) passes the changed-source check as it is on disk."""
    import tests.converters.samples as conv_samples
    import tests.runtime.samples as runtime_samples
    from autograph.source import parser
    fns = _functions_in(conv_samples) + _functions_in(runtime_samples)
    assert len(fns) > 30
    for fn in fns:
        if fn.__code__.co_filename.endswith(".py"):   # (not dataclass-made methods)
            parser.parse_entity(fn)   # raises ConversionError on a false alarm


CALL_FORMS = textwrap.dedent("""
    import functools
    import numpy as np

    def make(k):
        return lambda x: x * k

    lam_calls_result = lambda x: make(2)(x)[0]
    class Maker:
        def scaled(self, k):
            return make(k)

    maker = Maker()
    lam_calls_method_result = lambda x: maker.scaled(2)(x)[0]
    lam_calls_module_result = lambda x: functools.partial(np.multiply, 2)(x)[0]
    lam_method_then_call = lambda x: np.add.reduce(x) + make(3)(x).sum()

    def calls_result(x):
        return (make(4)(x)[1] + np.multiply(x, 2)[0] + (lambda y: y)(x)[2]
                + maker.scaled(5)(x)[3])

    def chained(x):
        return np.asarray(x).reshape(-1).sum() + make(1)(x).max()
""")


def test_unchanged_check_accepts_every_call_form(tmp_path, monkeypatch):
    """No false alarm where the module has no current bytecode (a script run as __main__):
    the check recompiles, and the NULL a call of a call result needs may be encoded
    either way (its own PUSH_NULL op or LOAD_GLOBAL's bit)."""
    from autograph.source import parser
    path = tmp_path / "ag_call_forms_mod.py"
    path.write_text(CALL_FORMS)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("ag_call_forms_mod", None)
    mod = importlib.import_module("ag_call_forms_mod")
    mod.__cached__ = None   # as __main__: no .pyc vouches for the text
    try:
        x = np.arange(4.0)
        for name in ("lam_calls_result", "lam_calls_method_result", "lam_calls_module_result",
                     "lam_method_then_call",
                     "calls_result", "chained"):
            fn = getattr(mod, name)
            parser.parse_entity(fn)   # raises ConversionError on a false alarm
            with warnings.catch_warnings():
                warnings.simplefilter("error")   # no "could not convert" warning either
                np.testing.assert_allclose(ag.function(fn)(x), fn(x))
    finally:
        sys.modules.pop("ag_call_forms_mod", None)
