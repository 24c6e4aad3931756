"""What variables and places hold before and between staged statements (one module: the
three parts are always loaded together, and a first call pays per module).

Undefined values. Converted code passes a variable into a branch or loop function even
where the original program had not assigned it yet (it may be assigned inside).
`Undefined('x')` is what such a variable holds until then. On Python values it behaves like
the original program: reading it through `ld` raises the same UnboundLocalError Python
would. Under a tensor condition an Undefined that escapes a branch or loop becomes a tensor
that may have no value (below), or, where it cannot, a refusal naming the variable. `UndefinedReturnValue` is the return value of a function
that has not returned yet (the compiler's `retval_` variable). It may stay undefined on
paths that do not return; the operators fill it with a placeholder of the right type there,
since it is never read.

Tensors that may have no value (`mark`, `check`, `Tracker`): Python's UnboundLocalError,
checked by the graph.

A variable that a staged loop gives its first value (`while i < n: last = i`) has no value
after the loop when the graph runs it zero times. Python would raise UnboundLocalError only
where the program then *reads* it, so the loop does not raise: it marks its output as
"bound only if `flag`" (a boolean tensor: the loop ran). Converted code reads variables
that may be unassigned through `ag__.ld(x)`, and `ld` of a marked tensor stages the check
(a `check_bound` node that raises at run time, with the message naming the variable and
the loop). A staged `if` or loop that passes a marked tensor through carries the flag as
an extra output: a branch or iteration that assigns the variable sets it to True. A
variable that one branch of a tensor `if` gives its first value is marked the same way
(the other branch sets its flag to False): `for ...: if c: r = d; break` / `else: r = n`
binds `r` on every path Python takes, and the graph checks just that.

Places (`attr`, `item`, `variable`): attributes and items that a branch or loop writes
(`self.total`, `d['k']`).

A tensor `if` runs both branches while tracing, and a tensor loop runs its body once, on
the same Python objects: a write like `x['b'] = 1` in one branch would still be there when
the other branch runs, and a tensor made inside a loop body would be left on the object
after the loop. So the statement's operator treats each place it writes as state, like a
variable: it reads the place before the statement, restores it before each branch or
iteration is traced, reads it after, and writes the staged result back.

Generated code names the places only (`places=(ag__.item(x, 'b'),)`); on Python values the
operators never touch them, so converted code does exactly what the original does. A place
that does not exist yet (a key not in the dict, an attribute not set) reads as
`Undefined(name)`, and putting an Undefined back removes it again, so restoring never
invents keys or attributes the program did not make.
"""

from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import is_tensor


# -- tensors that may have no value --------------------------------------------------------

def _check_kernel(xp, bound, *, message):
    if not bool(bound):
        raise UnboundLocalError(message)
    return ()


primitives.register("check_bound", lambda bound, *, message: [], kernel=_check_kernel,
                    effectful=True,
                    doc="Raise UnboundLocalError(message) unless `bound`: a variable that a loop "
                        "was to give its first value is read after the loop")
primitives.nondifferentiable("check_bound")   # a check with no outputs


def _table(graph):
    table = getattr(graph, "_ag_unbound", None)
    if table is None:
        table = graph._ag_unbound = {}
    return table


def _tensors_of(value):
    """The tensors of a value: itself, or the leaves of a structure (a dict or tuple that a
    loop gives its first value carries the flag on each of its tensors)."""
    if is_tensor(value):
        return (value,)
    if isinstance(value, (tuple, list, dict)):
        return tuple(v for v in nest.flatten(value) if is_tensor(v))
    return ()


def mark(value, flag, message):
    """`value` (a tensor or a structure of them) has a value only where `flag` is true at
    run time."""
    for tensor in _tensors_of(value):
        _table(tensor.node.graph)[id(tensor)] = (tensor, flag, message)


def lookup(value):
    """(flag, message) when `value` is a marked tensor (or holds one), else None."""
    for tensor in _tensors_of(value):
        entry = getattr(tensor.node.graph, "_ag_unbound", {}).get(id(tensor))
        if entry is not None and entry[0] is tensor:
            return entry[1:]
    return None


def check(value):
    """Stage the check that a marked tensor has a value (where the program reads it)."""
    entry = lookup(value)
    if entry is not None:
        flag, message = entry
        if flag is not True:
            primitives.bind("check_bound", [flag], {"message": message}, node_name="check_bound")
    return value


def flag_of(value):
    """True, or the flag of a value that itself may have none (an inner loop's first value)."""
    entry = lookup(value)
    return True if entry is None else entry[0]


class Tracker:
    """Carries the flags of marked state variables through a staged if or loop: each flag
    becomes an extra state variable that a branch or iteration assigning the variable sets
    to True (one passing it through keeps it)."""

    def __init__(self, state, names):
        self.n = len(names)
        # (an `if` whose branches return the function's value passes no names: nothing
        # flows out of it as state, and reads inside its branches check for themselves)
        found = [(i, lookup(v)) for i, v in enumerate(state)] if len(names) == len(state) else []
        self.index = [i for i, e in found if e is not None]
        self.messages = [e[1] for _, e in found if e is not None]
        self.state = tuple(state) + tuple(e[0] for _, e in found if e is not None)
        self.names = tuple(names) + tuple(f"<'{names[i]}' has a value>" for i in self.index)

    def __bool__(self):
        return bool(self.index)

    def wrap(self, fn, lead=0):
        """fn(*lead_args, *state) as a function of the state and the flags."""
        n, index, messages = self.n, self.index, self.messages

        def wrapped(*args):
            state, flags = args[lead:lead + n], args[lead + n:]
            for i, flag, message in zip(index, flags, messages):
                mark(state[i], flag, message)  # reads inside the branch or body check it
            out = fn(*args[:lead + n])
            outs = (out,) if n == 1 else tuple(out) if n else ()
            new = tuple(flag if outs[i] is state[i] else flag_of(outs[i])
                        for i, flag in zip(index, flags))
            return outs + new
        return wrapped

    def wrap_test(self, test):
        n, index, messages = self.n, self.index, self.messages

        def wrapped(*state):
            for i, flag, message in zip(index, state[n:], messages):
                mark(state[i], flag, message)
            return test(*state[:n])
        return wrapped

    def finish(self, out):
        """Mark the outputs again with the flags that came out; the state tuple."""
        out = tuple(out)
        for k, (i, message) in enumerate(zip(self.index, self.messages)):
            mark(out[i], out[self.n + k], message)
        return out[:self.n]


# -- undefined values -------------------------------------------------------------------

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


def _read_as_free_variable(self, *args):
    # `u + 1` on an Undefined itself: a read converted code did not wrap in `ld`, which is
    # a nested function's or lambda's read of the enclosing function's variable (its body
    # runs later, so no analysis can say whether `u` has a value by then). Python raises
    # NameError there, not the TypeError an Undefined operand would give
    raise _unbound_here(self.symbol_name, free=True)


for _op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
            "lshift", "rshift", "and", "xor", "or"):
    setattr(Undefined, f"__{_op}__", _read_as_free_variable)
    setattr(Undefined, f"__r{_op}__", _read_as_free_variable)
for _op in ("lt", "le", "gt", "ge", "neg", "pos", "abs", "invert", "call", "getitem",
            "index", "int", "float", "complex"):   # (not ==, hash, len or iter: the
    setattr(Undefined, f"__{_op}__", _read_as_free_variable)   # operators compare and
#                                                                 flatten state holding it)


class UndefinedReturnValue(Undefined):
    """The return value of a function that has not executed a `return` yet."""

    __slots__ = ()

    def __init__(self, symbol_name="retval_"):
        super().__init__(symbol_name)

    def __repr__(self):
        return "UndefinedReturnValue()"


def _unbound(name, free=False):
    if free:   # (Python's own words for a closure's variable read before it has a value)
        return NameError(f"cannot access free variable '{name}' where it is not associated "
                         f"with a value in enclosing scope")
    return UnboundLocalError(
        f"cannot access local variable '{name}' where it is not associated with a value")


def _unbound_here(name, free=False):
    """Python's UnboundLocalError (NameError for a `free` variable, read by a nested
    function); inside a branch or loop body that is being traced for a tensor condition, a
    refusal that says why (the path may never run)."""
    from autograph.runtime.ir.graph import get_default_graph
    graph = get_default_graph()
    if graph is None or graph.parent is None:
        return _unbound(name, free)
    from autograph import errors
    from autograph.operators.location import where
    return errors.UnboundInGraph(
        f"'{name}' has no value where it is read{where()}: Python raises "
        f"{'NameError' if free else 'UnboundLocalError'} if this path runs. It sits in a branch or loop whose condition is a tensor, which "
        f"the graph holds whether or not it runs, so it needs a value there: assign '{name}' "
        f"before the `if` or loop.")


def is_undefined(value):
    return isinstance(value, Undefined)


def ld(value):
    """Read a variable that may be undefined here: raise as Python would if it is."""
    if isinstance(value, Undefined):
        raise _unbound_here(value.symbol_name)
    if is_tensor(value):  # perhaps a staged loop's first value: checked by the graph
        return check(value)
    if isinstance(value, (tuple, list, dict)) and get_default_graph() is not None:
        return check(value)   # a structure a staged loop made first (only while tracing)
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


# -- places ------------------------------------------------------------------------------

class Place:
    """One attribute or item of an object, named as the user wrote it."""

    __slots__ = ("obj", "key", "name")

    def __init__(self, obj, key, name):
        self.obj, self.key, self.name = obj, key, name

    def __repr__(self):
        return f"<place {self.name}>"


class _Attr(Place):
    __slots__ = ()

    def get(self):
        try:
            return getattr(self.obj, self.key)
        except AttributeError:
            return Undefined(self.name)

    def put(self, value):
        if not isinstance(value, Undefined):
            setattr(self.obj, self.key, value)
        elif hasattr(self.obj, self.key):
            delattr(self.obj, self.key)


class _Item(Place):
    __slots__ = ()

    def get(self):
        try:
            return self.obj[self.key]
        except (KeyError, IndexError):
            return Undefined(self.name)

    def put(self, value):
        if not isinstance(value, Undefined):
            self.obj[self.key] = value
            return
        try:
            del self.obj[self.key]
        except (KeyError, IndexError):
            pass


class _Variable(Place):
    """A variable of the function around the statement, which closures made inside the
    statement read (so the statement's functions share it through `nonlocal` instead of
    passing it as state: Python's late binding). `obj` reads it, `key` assigns it."""
    __slots__ = ()

    def get(self):
        try:
            return self.obj()
        except NameError:
            return Undefined(self.name)

    def put(self, value):
        self.key(value)


def variable(read, assign, name):
    """The variable `name` as a place: `read()` gives its value, `assign(v)` sets it."""
    return _Variable(read, assign, name)


def attr(obj, name, label=None):
    """`obj.name` as a place (`label`: how the user wrote it, for messages)."""
    return _Attr(obj, name, label or name)


def item(obj, key, label=None):
    """`obj[key]` as a place."""
    return _Item(obj, key, label or repr(key))


def get_all(places):
    return tuple(p.get() for p in places)


def put_all(places, values):
    for p, v in zip(places, values):
        p.put(v)
