"""Tensors that may have no value: Python's UnboundLocalError, checked by the graph.

A variable that a staged loop gives its first value (`while i < n: last = i`) has no value
after the loop when the graph runs it zero times. Python would raise UnboundLocalError only
where the program then *reads* it, so the loop does not raise: it marks its output as
"bound only if `flag`" (a boolean tensor: the loop ran). Converted code reads variables
that may be unassigned through `ag__.ld(x)`, and `ld` of a marked tensor stages the check
(a `check_bound` node that raises at run time, with the message naming the variable and
the loop). A staged `if` or loop that passes a marked tensor through carries the flag as
an extra output: a branch or iteration that assigns the variable sets it to True.
"""

from autograph.runtime.ir import primitives
from autograph.runtime.ir.tensor import is_tensor


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


def mark(tensor, flag, message):
    """`tensor` has a value only where `flag` is true at run time."""
    if is_tensor(tensor):
        _table(tensor.node.graph)[id(tensor)] = (tensor, flag, message)


def lookup(value):
    """(flag, message) when `value` is a marked tensor, else None."""
    if not is_tensor(value):
        return None
    entry = getattr(value.node.graph, "_ag_unbound", {}).get(id(value))
    return None if entry is None or entry[0] is not value else entry[1:]


def check(value):
    """Stage the check that a marked tensor has a value (where the program reads it)."""
    entry = lookup(value)
    if entry is not None:
        flag, message = entry
        if flag is not True:
            primitives.bind("check_bound", [flag], {"message": message}, node_name="check_bound")
    return value


def _flag_of(value):
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
            new = tuple(flag if outs[i] is state[i] else _flag_of(outs[i])
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
