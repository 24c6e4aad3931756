"""Where conversion is impossible (no source), autograph says so at the call, and every
later error about a tensor in that code names the reason and the line: no error tells the
user to write what they already wrote ("loop over ag.range(n)", "use it in an `if` inside
an autograph function")."""

import linecache
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.function import AutographWarning
from autograph.runtime.ir.tensor import SymbolicTensorError

# bodies that use a tensor where Python needs a value, one per protocol
BODIES = {
    "for over ag.range": "    for i in ag.range(k):\n        x = x + 1\n    return x\n",
    "for over a tensor": "    for v in ag.range(k) * 2.0:\n        x = x + v\n    return x\n",
    "if": "    if x > 0:\n        x = -x\n    return x\n",
    "while": "    while x < k:\n        x = x + 1\n    return x\n",
    "range(tensor)": "    for i in range(k):\n        x = x + 1\n    return x\n",
    "float()": "    return float(x) + k\n",
}
ADVICE = ("loop over ag.range(n)", "inside an autograph function",
          "inside an autograph-converted function", "Write the `for` loop")


def _no_source(name, body):
    """A function made by exec() of text linecache does not know: no source."""
    namespace = {"ag": ag, "np": np}
    exec(compile(f"def {name}(x, k):\n{body}", f"<no source {name}>", "exec"), namespace)
    return namespace[name]


def _check_error(message, name, filename):
    assert f"{name} runs unconverted" in message
    assert "source code is not available" in message
    assert f"At {filename}:" in message
    for advice in ADVICE:
        assert advice not in message


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_ag_function_of_a_function_without_source(kind):
    name = "f_" + "".join(c for c in kind if c.isalnum())
    fn = _no_source(name, BODIES[kind])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((SymbolicTensorError, TypeError)) as info:
            ag.function(fn)(np.float64(0.5), np.int64(3))
    said = [str(w.message) for w in caught if issubclass(w.category, AutographWarning)]
    assert any("could not convert" in s and "source code is not available" in s for s in said)
    assert all(w.filename == __file__ for w in caught
               if issubclass(w.category, AutographWarning))   # at the user's call
    _check_error(str(info.value), name, f"<no source {name}>")


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_a_callee_without_source(kind):
    name = "g_" + "".join(c for c in kind if c.isalnum())
    inner = _no_source(name, BODIES[kind])

    @ag.function
    def outer(x, k):
        return inner(x, k) * 2

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises((SymbolicTensorError, TypeError)) as info:
            outer(np.float64(0.5), np.int64(3))
    said = [w for w in caught if issubclass(w.category, AutographWarning)]
    assert len(said) == 1 and f"could not convert {name}" in str(said[0].message)
    assert said[0].filename == __file__   # the user's line of the call
    _check_error(str(info.value), name, f"<no source {name}>")


def test_registered_text_converts_the_same_function():
    """The cure the message names works: the same text registered in linecache converts."""
    text = "def h(x, k):\n" + BODIES["for over ag.range"]
    filename = "<registered h>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"ag": ag, "np": np}
    exec(compile(text, filename, "exec"), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AutographWarning)
        assert ag.function(namespace["h"])(np.float64(0.5), np.int64(3)) == 3.5
    del linecache.cache[filename]


def test_ag_range_outside_converted_code_does_not_advise_ag_range():
    @ag.function(autograph=False)
    def f(k):
        total = 0
        for i in ag.range(k):
            total += i
        return total

    with pytest.raises(SymbolicTensorError) as info:
        f(np.int64(3))
    message = str(info.value)
    assert "(a range over a tensor: ag.range, or range() of a tensor)" in message
    assert "autograph=False" in message
    assert "loop over ag.range(n)" not in message
