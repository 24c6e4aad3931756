"""if/while as functions: what converted code calls for Python control flow.

Generated code passes state functionally. For

    if x > 0:
        x = x * x
    else:
        x = 0

it emits two branch functions that take the state variables (here `x`) as parameters and
return them, and `x = ag__.if_stmt(x > 0, if_true, if_false, (x,), ('x',))`. Loops are the
same with a test and a body. The functions return the state as the statement assigns it:
nothing for no variable, the bare value for one, a tuple for several.

Each operator first has its plain Python meaning: a Python condition picks a branch and
loops over Python values run as Python loops, so converted code on Python values behaves
exactly like the original. Only when a condition (or a loop's iterable) is a symbolic Tensor
is the statement staged, as one `cond` or `while_loop` node of the graph being traced.

This module holds `if_stmt`, `if_exp`, `while_stmt` and the staged `if` and `while` every
traced program uses. Beside it, imported on first need (docs/internals.md): for_loops.py
(`for_stmt`, still importable from here, as STAGE_RANGES_LONGER_THAN is), placeholders.py
(values undefined on some paths), staged_places.py (attributes and items a staged statement
writes) and statement_errors.py (the errors, naming the user's line and variable).
"""

import _thread

import numpy as np

from autograph import errors
from autograph.operators import calls
from autograph.operators.variables import Tracker, Undefined, UndefinedReturnValue, mark as mark_unbound
from autograph.operators.variables import _tensors_of
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import is_tensor


def _runtime():
    from autograph.runtime import control_flow
    return control_flow


def _placeholders():   # (the modules beside this one: imported on first need)
    from autograph.operators import placeholders
    return placeholders


def _errors():
    from autograph.operators import statement_errors
    return statement_errors


def _places():
    from autograph.operators import staged_places
    return staged_places


def _as_tuple(result, n):
    """The state a branch/body function returned, as an n-tuple."""
    if n == 1:
        return (result,)
    if n == 0:
        return ()
    return tuple(result)


def _result(state, n):
    """What the statement assigns: None, the bare value, or the tuple."""
    if n == 1:
        return state[0]
    if n == 0:
        return None
    return tuple(state)


def _leaf_names(values, names):
    """One name per flat leaf of `values`, for the runtime's error messages."""
    out = []
    for value, name in zip(values, names):
        leaves = nest.flatten(value)
        if len(leaves) == 1:
            out.append(name)
        else:
            out.extend(f"{name}[{i}]" for i in range(len(leaves)))
    return out


def _is_return_placeholder(value):
    return isinstance(value, UndefinedReturnValue)

# -- if -------------------------------------------------------------------------------------

def if_stmt(cond, if_true, if_false, state=(), names=(), places=(), in_try=False, jump=False):
    """`if cond:` with branch functions taking and returning the state variables.

    With `names` empty the branches return whatever they return (e.g. the function's return
    value when both branches end in `return`), and so does if_stmt. `places`: the
    attributes and items the branches write (autograph.operators.variables); only a staged
    `if` needs them. `jump`: the `if` sets or tests the flag of a break, continue or return
    of the loop it is in (see _LoopJumps)."""
    if type(cond).__name__ == "TensorList":   # `if l`: a list a staged loop appended to
        cond = cond.size() > 0
    if is_tensor(cond):
        if jump:
            _LoopJumps.depends_on_tensor()
        if in_try:
            raise _errors().refuse_in_try("if")
        state, names = tuple(state), tuple(names)
        track = Tracker(state, names)
        if track:  # variables that may have no value (see autograph.operators.variables)
            return _result(track.finish(_as_tuple(_staged_if_stmt(
                cond, track.wrap(if_true), track.wrap(if_false), track.state, track.names,
                places), len(track.names))), len(names))
        return _staged_if_stmt(cond, if_true, if_false, state, names, places)
    return if_true(*state) if cond else if_false(*state)


def _staged_if_stmt(cond, if_true, if_false, state, names, places):
    if places:
        return _places().if_with_places(cond, if_true, if_false, state, names, places)
    return _staged_if(cond, if_true, if_false, state, names)


def _check_branch(out, names, which):
    """Raise if a state variable is still undefined after a branch of a tensor `if`."""
    for value, name in zip(out, names):
        if isinstance(value, Undefined) and not _is_return_placeholder(value):
            raise _errors().undefined_after_branch(name, which)


@calls.guards("if")   # Python lists changed in a branch are refused (both branches run)
def _staged_if(pred, if_true, if_false, state, names, bindable=None):
    """`bindable`: how many leading state entries are variables (the rest are places); a
    variable without a value before the `if` may get one in one branch only (below)."""
    n = len(names)
    if n == 0:  # no state: the branches' own return values (or None) are the outputs
        return _cond(pred, lambda: if_true(*state), lambda: if_false(*state), _RETURN_NAMES)
    unbound = [i for i in range(n if bindable is None else bindable)
               if isinstance(state[i], Undefined) and not _is_return_placeholder(state[i])]

    def run(fn, which):
        def branch():
            out = _as_tuple(fn(*state), n)
            _check_branch([v for i, v in enumerate(out) if i not in unbound],
                          [m for i, m in enumerate(names) if i not in unbound], which)
            # a variable this branch leaves unbound: False, it has no value after the `if`
            return out + tuple(_placeholders().bound_flag(out[i]) for i in unbound)
        return branch

    true_fn, false_fn = run(if_true, "if"), run(if_false, "else")
    if unbound or any(_is_return_placeholder(v) or type(v) is list for v in state):
        true_fn, false_fn = _placeholders().filling_each_other(true_fn, false_fn, names, unbound)
    out = _cond(pred, true_fn, false_fn,
                _leaf_names(state, names) + [f"<'{names[i]}' has a value>" for i in unbound])
    out = list(out)
    for k, i in enumerate(unbound):
        if is_tensor(out[n + k]):   # (True: bound on both paths; False: on neither)
            out[i] = _carrying_flag(out[i])
            mark_unbound(out[i], out[n + k], _placeholders().one_branch_message(names[i]))
    return _result(tuple(out[:n]), n)


def _carrying_flag(value):
    """`value`, a variable that one branch gave its first value, as tensors that can carry
    the flag of whether it has one. A Python number that branch assigned (`u = b // 6`,
    with `b` a Python int) comes out of `cond` as it went in, since the other branch's
    placeholder equals it: it becomes a constant tensor, or the mark (and the check where
    it is read) would be lost and the program read a value Python never gave it."""
    if _tensors_of(value):
        return value
    # (a value no tensor holds, a string or an object, was refused by name before `cond`)
    return _placeholders().as_loop_tensors(value)


# names of the flat outputs of an `if` whose branches return the function's value
_RETURN_NAMES = [f"item {i} of the return value" for i in range(256)]


def _cond(pred, true_fn, false_fn, leaf_names):
    try:
        return _runtime().cond(pred, true_fn, false_fn, names=leaf_names)
    except errors.StagingError as exc:
        raise _errors().locate(exc, "if", leaf_names is _RETURN_NAMES) from None
    except NameError as exc:
        raise _errors().name_in_graph(exc, "if") from exc


def if_exp(cond, if_true, if_false):
    """`a if cond else b` with `if_true`/`if_false` as functions of no arguments."""
    if type(cond).__name__ == "TensorList":   # `if l`: a list a staged loop appended to
        cond = cond.size() > 0
    if is_tensor(cond):
        try:
            return _runtime().cond(cond, if_true, if_false, names=["value of the conditional expression"])
        except errors.StagingError as exc:
            raise _errors().locate(exc, "... if ... else ...") from None
    return if_true() if cond else if_false()


# -- while ----------------------------------------------------------------------------------

def while_stmt(test, body, state=(), names=(), places=(), test_writes=False, in_try=False):
    """`while test:` with a test and a body that take the state variables.

    Runs as a Python loop while the test gives Python values; from the first time it gives a
    tensor, the rest of the loop is staged as one while_loop node. `test_writes`: the test
    assigns variables too (a walrus) and returns `(condition, state after the test)`."""
    with _LoopJumps(None):   # its jumps are its own, not those of a Python loop around it
        return _while_stmt(test, body, tuple(state), names, places, test_writes, in_try)


def _while_stmt(test, body, state, names, places, test_writes, in_try):
    n = len(names)
    state = tuple(state)
    watch = _Watch()
    while True:
        cond = test(*state)
        if test_writes:
            cond, after = cond
            state = _as_tuple(after, n)
        if is_tensor(cond):
            if in_try:
                raise _errors().refuse_in_try("while")
            if test_writes:
                # the condition becomes a loop variable: the body runs, then the test,
                # whose writes the next iteration (or the code after the loop) sees
                out = _staged_while_stmt(_given_test, _body_then_test(body, test, n),
                                         (cond,) + state, ("<loop test>",) + tuple(names), places)
                return _result(out[1:], n)
            return _result(_staged_while_stmt(test, body, state, tuple(names), places), n)
        if not cond:
            watch.done(isinstance(cond, np.generic))
            return _result(state, n)
        state = _as_tuple(body(*state), n)
        watch.step()


def _staged_while_stmt(test, body, state, names, places, tracked=False):
    track = None if tracked else Tracker(state, names)
    if track:  # variables that may have no value (see autograph.operators.variables)
        return track.finish(_staged_while_stmt(track.wrap_test(test), track.wrap(body),
                                               track.state, track.names, places, tracked=True))
    if places:
        return _places().staged_while_with_places(test, body, state, names, places)
    return _staged_while(test, body, state, names)


def _given_test(cond, *state):
    return cond


def _body_then_test(body, test, n):
    def step(cond, *state):
        cond, after = test(*_as_tuple(body(*state), n))
        return (cond,) + _as_tuple(after, n)
    return step


def _first_assigned(state, names):
    """Indices of state variables that have no value before the loop (the body gives them
    their first one)."""
    return [i for i, v in enumerate(state)
            if isinstance(v, Undefined) and not _is_return_placeholder(v)]


def _check_loop_exit(out, names, what):
    for value, name in zip(out, names):
        if isinstance(value, Undefined) and not _is_return_placeholder(value):
            raise _errors().undefined_at_loop_end(name, what)


def _check_structures(before, after, names, what):
    for old, new, name in zip(before, after, names):
        if _is_return_placeholder(old):
            continue  # its structure is being learned (see _staged_while)
        if nest.structure_of(old) != nest.structure_of(new):
            raise _errors().changes_structure(name, old, new, what)


def _staged_while(test, body, state, names, what="`while` loop"):
    """Stage a while loop; returns the final state tuple.
    A variable the body gives its first value (TensorFlow allows it too) enters the loop as
    a placeholder of the type the body gives it, learned from a trace of the body; the
    loop carries a flag that it ran, and the graph checks it after the loop."""
    with _LoopJumps(None):   # the body's jumps are this loop's, not a Python loop's around
        if any(is_tensor(v) and v.shape != () for v in state):
            from autograph.operators import aliases
            # `y = x` before the loop and `y += 1` in it would change x in NumPy
            with aliases.loop_entry(state, names):
                return _staged_while_guarded(test, body, state, names, what)
        return _staged_while_guarded(test, body, state, names, what)


@calls.guards("loop")   # Python lists changed in the body are refused (they would change once)
def _staged_while_guarded(test, body, state, names, what):
    if any(type(v) is list for v in state):   # a list the body appends to (operators.lists)
        state = _placeholders().lists_as_loop_values(body, state, names)
    first = _first_assigned(state, names)
    if first:
        return _placeholders().staged_while_first(test, body, state, names, what, first)
    n = len(names)

    def body_fn(*vs, learning=False):
        out = _as_tuple(body(*vs), n)
        _check_loop_exit(out, names, what)
        _check_structures(vs, out, names, what)
        if not learning:
            _check_returns_learned(vs, out)
        return out

    if any(_is_return_placeholder(v) for v in state):
        # loop variables enter the loop as tensors: Python scalars become weak constants
        ph = _placeholders()
        tmpl = ph.scratch_trace(lambda: body_fn(*[ph.as_loop_value(v) for v in state],
                                                learning=True))
        state = ph.fill_placeholders(state, [None if _is_return_placeholder(v) else v for v in tmpl])
    while True:
        try:
            out = _runtime().while_loop(test, body_fn, state, names=_leaf_names(state, names))
        except _ReturnLearned as learned:
            # a trace with relaxed shapes reached a `return` that the first trace's shapes
            # ruled out in Python (`if len(v) == 2: return v` once v's length is unknown):
            # the return value enters the loop as a placeholder of the type learned
            state = _placeholders().fill_placeholders(state, learned.templates)
            continue
        except errors.StagingError as exc:
            raise _errors().locate(exc, what.strip("`").split("`")[0] if "`" in what else what) from None
        except NameError as exc:
            raise _errors().name_in_graph(exc, what.strip("`").split("`")[0]) from exc
        return tuple(out)


class _ReturnLearned(Exception):
    """A loop body's trace gave a value to a return placeholder that entered the loop
    undefined; `templates` holds it (None for the other loop variables)."""

    def __init__(self, templates):
        super().__init__("a return value's type was learned")
        self.templates = templates


def _check_returns_learned(before, after):
    if any(_is_return_placeholder(b) and not _is_return_placeholder(a)
           for b, a in zip(before, after)):
        raise _ReturnLearned([a if _is_return_placeholder(b) and not _is_return_placeholder(a)
                              else None for b, a in zip(before, after)])


# -- Python loops --------------------------------------------------------------------------

class _LoopJumps:
    """Whether a jump (break, continue, return) of the Python loop running now depends on
    a tensor: a jump's `if` (Conv.JUMP_IF: the one that sets its flag, or one that guards
    the statements it skips) met a tensor condition.

    A break or return is seen anyway, by the loop's extra test; a `continue` has only its
    `if`s to tell (its flag lives within one iteration). Each Python loop opens one as the
    current record while it runs; a staged loop or a Python `while` opens `None`, so the
    jumps of a loop nested in a Python `for` never count as the `for`'s own."""

    _current = _thread._local()   # (the C type: `threading` costs a fresh first call)

    def __init__(self, record=True):
        self.tensor = False
        self.outer = None
        self._record = self if record else None   # (None: no loop listens)

    __slots__ = ("tensor", "outer", "_record")

    def __enter__(self):
        current = _LoopJumps._current
        self.outer = getattr(current, "loop", None)
        current.loop = self._record
        return self

    def __exit__(self, *exc):
        _LoopJumps._current.loop = self.outer
        return False

    @staticmethod
    def depends_on_tensor():
        loop = getattr(_LoopJumps._current, "loop", None)
        if loop is not None:
            loop.tensor = True


UNROLL_LIMIT = 1000   # Python loop iterations that stage nodes before a warning (unroll.py)


class _Watch:
    """Counts the iterations of one Python loop; cheap when nothing is being traced. Past
    UNROLL_LIMIT iterations that added nodes, autograph.operators.unroll warns (imported
    only then)."""

    __slots__ = ("steps", "graph", "nodes")

    def __init__(self):
        from autograph.runtime.ir.graph import get_default_graph
        self.steps = 0
        self.graph = get_default_graph()
        self.nodes = len(self.graph.nodes) if self.graph is not None else 0

    def step(self):
        self.steps += 1

    def done(self, numpy_test=False):
        """The loop ended; `numpy_test`: its condition was a NumPy value (np.bool_), which
        stays a Python value while tracing however many iterations it takes."""
        if self.steps > UNROLL_LIMIT and self.graph is not None:
            added = len(self.graph.nodes) - self.nodes
            if added > 0:
                from autograph.operators import unroll
                unroll.warn(self.steps, added, numpy_test)



def __getattr__(name):
    """The names for loops had here before for_loops.py held them (imported on first use)."""
    if name in ("for_stmt", "STAGE_RANGES_LONGER_THAN"):
        from autograph.operators import for_loops
        return getattr(for_loops, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
