"""Values that stand for variables with no value yet.

Converted code passes a variable into a branch or loop function even where the original
program had not assigned it yet (it may be assigned inside). `Undefined('x')` is what such
a variable holds until then. On Python values it behaves like the original program: reading
it through `ld` raises the same UnboundLocalError Python would. Under a tensor condition the
operators refuse to let an Undefined escape a branch or loop, and say which variable it is.

`UndefinedReturnValue` is the return value of a function that has not returned yet (the
compiler's `retval_` variable). It may stay undefined on paths that do not return; the
operators fill it with a placeholder of the right type there, since it is never read.
"""


from autograph.operators import unbound
from autograph.runtime.ir.tensor import is_tensor


class Undefined:
    """The value of variable `symbol_name` before the program assigns it."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        self.symbol_name = symbol_name

    def __repr__(self):
        return f"Undefined({self.symbol_name!r})"

    def __bool__(self):
        raise _unbound(self.symbol_name)


def _read_by_augmented_assignment(self, other):
    # `x += 1` reads x where it stands as a target (not wrapped in `ld`): Python raises
    # UnboundLocalError there, not the TypeError an Undefined operand would give
    raise _unbound_here(self.symbol_name)


for _op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift",
            "rshift", "and", "xor", "or"):
    setattr(Undefined, f"__i{_op}__", _read_by_augmented_assignment)


class UndefinedReturnValue(Undefined):
    """The return value of a function that has not executed a `return` yet."""

    __slots__ = ()

    def __init__(self, symbol_name="retval_"):
        super().__init__(symbol_name)

    def __repr__(self):
        return "UndefinedReturnValue()"


def _unbound(name):
    return UnboundLocalError(
        f"cannot access local variable '{name}' where it is not associated with a value")


def _unbound_here(name):
    """Python's UnboundLocalError; inside a branch or loop body that is being traced for a
    tensor condition, a refusal that says why (the path may never run)."""
    from autograph.runtime.ir.graph import get_default_graph
    graph = get_default_graph()
    if graph is None or graph.parent is None:
        return _unbound(name)
    from autograph import errors
    from autograph.operators.location import where
    return errors.UnboundInGraph(
        f"'{name}' has no value where it is read{where()}: Python raises UnboundLocalError "
        f"if this path runs. It sits in a branch or loop whose condition is a tensor, which "
        f"the graph holds whether or not it runs, so it needs a value there: assign '{name}' "
        f"before the `if` or loop.")


def is_undefined(value):
    return isinstance(value, Undefined)


def ld(value):
    """Read a variable that may be undefined here: raise as Python would if it is."""
    if isinstance(value, Undefined):
        raise _unbound_here(value.symbol_name)
    if is_tensor(value):  # perhaps a staged loop's first value: checked by the graph
        return unbound.check(value)
    return value


def ldu(read, name):
    """The value of a variable bound on some paths only: `read()`, or Undefined(name)
    where it has no value (generated code passes `lambda: x`)."""
    try:
        return read()
    except NameError:  # UnboundLocalError too, and a closure cell not yet filled
        return Undefined(name)


def retval(value):
    """The value a function returns: None when no `return` ran (Python's implicit return)."""
    return None if isinstance(value, UndefinedReturnValue) else value


def user_locals(readers):
    """What `locals()` gives in the original function: `readers` holds (name, read) for
    each variable Python would show; those not assigned yet (unbound, or Undefined in
    converted code) are left out."""
    out = {}
    for name, read in readers:
        try:
            value = read()
        except NameError:   # UnboundLocalError, or a free variable not assigned yet
            continue
        if not isinstance(value, Undefined):
            out[name] = value
    return out
