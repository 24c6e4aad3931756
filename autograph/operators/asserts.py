"""`assert` as a function: a Python assert on Python values, a run-time check on tensors.

`assert x > 0, "x must be positive"` becomes `ag__.assert_stmt(x > 0, lambda: "x must be
positive")`. With a tensor condition it stages an effectful "assert" node that raises
AssertionError with the user's message and line whenever the graph runs with a false value.
"""

from autograph.operators.location import where
from autograph.runtime.ir import primitives
from autograph.runtime.ir.tensor import is_tensor


def _assert_kernel(xp, cond, *, message):
    if not bool(xp.all(cond)):
        raise AssertionError(message)
    return ()


primitives.register("assert", lambda cond, *, message: [], kernel=_assert_kernel,
                    effectful=True, doc="Raise AssertionError(message) unless all(cond).")
primitives.nondifferentiable("assert")   # a check with no outputs


def assert_stmt(cond, message=None):
    """`assert cond, message()`; `message` is a function so it is evaluated only on failure
    (Python's own rule), or once while tracing for a tensor condition."""
    if is_tensor(cond):
        text = "" if message is None else message()
        text = text if isinstance(text, str) else str(text)
        location = where(" at ")
        full = (text or "Assertion failed") + (f" (assert{location})" if location else "")
        primitives.bind("assert", [cond], {"message": full}, node_name="assert")
        return None
    if not cond:
        if message is None:
            raise AssertionError
        raise AssertionError(message())
    return None
