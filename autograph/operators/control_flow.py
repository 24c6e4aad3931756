"""if/while/for as functions: what converted code calls for Python control flow.

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
"""

import _thread

import numpy as np

from autograph import errors
from autograph.operators import calls
from autograph.operators import _where as where   # (location: loaded on first use)
from autograph.operators.variables import (Tracker, Undefined, UndefinedReturnValue, flag_of,
                                          get_all, mark as mark_unbound, put_all)
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import is_tensor


def _runtime():
    from autograph.runtime import control_flow
    return control_flow


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


# -- placeholders for return values that are undefined on some paths ------------------------

def _placeholder_like(value, exact=False):
    """A value of the same type as `value`, standing for a return value never read.

    `exact`: a tensor scalar keeps its dtype unless it is weak (a loop variable's type must
    be right on entry, or the loop is traced again to relax it)."""
    def leaf(v):
        if is_tensor(v):
            if v.shape == () and not (exact and not v.weak):
                # a Python scalar: weak, it adopts the real value's dtype
                return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}.get(v.dtype.kind, 0)
            shape = tuple(0 if d is None else d for d in (v.shape or ()))
            from autograph.runtime.ir import primitives
            return primitives.constant(np.zeros(shape, dtype=v.dtype))
        if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
            return type(v)(0) if not isinstance(v, np.ndarray) else np.zeros_like(v)
        return v
    return nest.map_structure(leaf, value)


def _scratch_trace(fn, sign=None):
    """Run `fn` in a throwaway graph (child of the current one) to learn the types it
    produces; nothing it stages reaches the program. Its prints are swallowed, so the
    user's trace-time `print`s still appear once per trace. `sign(graph, out)`, when
    given: (what fn gave, what sign says of what it staged)."""
    import contextlib
    import io

    from autograph.runtime.ir.graph import Graph, get_default_graph
    scratch = Graph("scratch", parent=get_default_graph())
    with scratch.as_default(), contextlib.redirect_stdout(io.StringIO()):
        out = fn()
    return (out, sign(scratch, out)) if sign else out


def _as_loop_value(value):
    if isinstance(value, (bool, int, float)) and not isinstance(value, Undefined):
        from autograph.runtime.ir import primitives
        return primitives.constant(value)
    return value


def _as_loop_tensors(value):
    """`value` with each Python or NumPy leaf a constant tensor (structures keep theirs)."""
    from autograph.runtime.ir import primitives

    def leaf(v):
        if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
            return primitives.constant(v)
        return v
    return nest.map_structure(leaf, value)


def _fill_placeholders(outputs, templates):
    """Replace undefined return values in `outputs` (a loop's initial state) by
    placeholders of exactly the types of `templates`."""
    return tuple(_placeholder_like(t, exact=True) if _is_return_placeholder(o) and t is not None else o
                 for o, t in zip(outputs, templates))


# -- if -------------------------------------------------------------------------------------

def _refuse_in_try(statement):
    raise errors.StagingError(
        f"This `{statement}`{where()} would run in the graph (its condition is a tensor), but "
        f"it is inside a `try` block: Python's try/except cannot catch errors raised while "
        f"the graph runs, so the program would not mean what it says. Move the try/except "
        f"outside the function, or make the condition a Python value.")


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
            _refuse_in_try("if")
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
        return _if_with_places(cond, if_true, if_false, state, names, places)
    return _staged_if(cond, if_true, if_false, state, names)


@calls.guards("if")   # (its branches without state are staged here, not in _staged_if)
def _if_with_places(pred, if_true, if_false, state, names, places):
    """A staged `if` whose branches also write attributes or items: each branch starts
    from the places' values before the `if`, and their values after it are outputs too."""
    n, k = len(names), len(places)
    before = get_all(places)
    pnames = tuple(p.name for p in places)
    if n == 0:  # the branches' own return values travel with the places
        def returning(fn, which):
            def branch():
                put_all(places, before)
                value = fn(*state)
                after = get_all(places)
                _check_branch(after, pnames, which)
                return after + (value,)
            return branch
        leaf_names = list(pnames) + [f"item {i} of the return value" for i in range(256)]
        out = _cond(pred, returning(if_true, "if"), returning(if_false, "else"), leaf_names)
        put_all(places, out[:k])
        return out[k]

    out = _staged_if(pred, _with_places(if_true, places, n), _with_places(if_false, places, n),
                     state + before, names + pnames, bindable=n)
    out = _as_tuple(out, n + k)
    put_all(places, out[n:])
    return _result(out[:n], n)


def _with_places(fn, places, n, lead=0):
    """`fn` over the state variables, as a function over variables and places: it sets the
    places from its last arguments first and returns their values after it (`lead`: leading
    arguments that are not state, like a for loop's item)."""
    k = len(places)

    def wrapped(*args):
        put_all(places, args[lead + n:])
        out = _as_tuple(fn(*args[:lead + n]), n)
        return _result(out + get_all(places), n + k)
    return wrapped


def _loop_places(places, what):
    """The values of the places a staged loop writes, as it starts. An attribute or a key
    that does not exist yet (first made inside the loop: `y['a'] = x`) is Undefined, a loop
    variable that the body gives its first value (_staged_while_first, loop_created_places).
    A variable that closures share, first bound inside the loop, is refused: a closure would
    see the first iteration differently from the rest."""
    values = get_all(places)
    for place, value in zip(places, values):
        if isinstance(value, Undefined) and place.name.isidentifier():
            raise errors.StagingError(
                f"'{place.name}' is first created inside the {what}{where()}, whose condition "
                f"is a tensor, and a function defined in it reads it: the graph runs every "
                f"iteration alike, but the first would find '{place.name}' missing and the "
                f"later ones present. Create it before the loop (e.g. {place.name} = 0, or an "
                f"array of the right shape and dtype).")
    return values


def _put_loop_places(places, before, after):
    """Write a staged loop's places back. One the loop created (Undefined before it) exists
    after it only where the loop ran: the graph cannot add a key or attribute sometimes, so
    it checks that the loop ran (TensorFlow: "loop must iterate at least once"), raising
    UnboundLocalError naming the place, not a made-up value, where it did not."""
    from autograph.operators.variables import check
    for old, new in zip(before, after):
        if isinstance(old, Undefined):
            check(new)
    put_all(places, after)


def _test_with_places(test, places, n):
    def wrapped(*s):
        put_all(places, s[n:])
        return test(*s[:n])
    return wrapped


def _check_branch(out, names, which):
    """Raise if a state variable is still undefined after a branch of a tensor `if`."""
    for value, name in zip(out, names):
        if isinstance(value, Undefined) and not _is_return_placeholder(value):
            other = "else" if which == "if" else "if"
            raise errors.StagingError(
                f"'{name}' has a value after the {other} branch of the `if`{where()} but not "
                f"after its {which} branch. The condition is a tensor, so both branches become "
                f"part of the graph and '{name}' must be defined on both. Assign '{name}' "
                f"before the `if`, or in the {which} branch too.")


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
            return out + tuple(_bound_flag(out[i]) for i in unbound)
        return branch

    true_fn, false_fn = run(if_true, "if"), run(if_false, "else")
    if unbound or any(_is_return_placeholder(v) or type(v) is list for v in state):
        true_fn, false_fn = _filling_each_other(true_fn, false_fn, names, unbound)
    out = _cond(pred, true_fn, false_fn,
                _leaf_names(state, names) + [f"<'{names[i]}' has a value>" for i in unbound])
    out = tuple(out)
    for k, i in enumerate(unbound):
        if is_tensor(out[n + k]):   # (True: bound on both paths; False: on neither)
            mark_unbound(out[i], out[n + k], _one_branch_message(names[i]))
    return _result(out[:n], n)


def _bound_flag(value):
    """Whether a variable has a value at the end of a branch: False, True, or the flag of a
    value that itself may have none (Python bools: where both branches agree, `cond` passes
    the bool through and the `if` gets no extra output)."""
    if isinstance(value, Undefined):
        return False
    return flag_of(value)


def _one_branch_message(name):
    return (f"'{name}' is assigned in only one branch of the `if`{where()}, whose condition is "
            f"a tensor, and the other branch ran, so it has no value where it is read (Python "
            f"raises the same). Assign '{name}' before the `if`, or in both branches.")


# names of the flat outputs of an `if` whose branches return the function's value
_RETURN_NAMES = [f"item {i} of the return value" for i in range(256)]


def _filling_each_other(true_fn, false_fn, names=(), unbound=()):
    """Branch functions whose undefined values become placeholders of the type the other
    branch gives them: a return value assigned in one branch only, or a variable (index in
    `unbound`) that has no value before the `if` and gets one in one branch only. Either is
    never read where the placeholder stands: a return value only once `do_return` is set,
    a variable only through `ag__.ld`, which checks the flag `_staged_if` adds for it. A
    Python list that the other branch appended to becomes a TensorList (operators.lists).

    Each branch is traced once: the branch that `cond` traces second fills the placeholders
    of both, each in its own branch graph, before `cond` reads either branch's outputs. (A
    trial trace of each branch to learn the types first made nested `if`s that may return
    trace their branches 2**depth times.)"""
    from autograph.runtime.ir.graph import get_default_graph
    traced = []   # (branch graph, outputs as a list that can still be filled)

    def filling(fn):
        def branch():
            out = list(fn())
            traced.append((get_default_graph(), out))
            if len(traced) == 2:
                (graph_a, a), (graph_b, b) = traced
                _fill_from(a, b, graph_a, names, unbound)
                _fill_from(b, a, graph_b, names, unbound)
            return out
        return branch

    return filling(true_fn), filling(false_fn)


def _fill_from(outputs, templates, graph, names=(), unbound=()):
    """Replace (in place) the undefined values in `outputs`, a branch's outputs in `graph`,
    by placeholders like the other branch's `templates`."""
    with graph.as_default():
        for i, (o, t) in enumerate(zip(outputs, templates)):
            if _is_return_placeholder(o) and not _is_return_placeholder(t):
                outputs[i] = _placeholder_like(t)
            elif type(o) is list and type(t).__name__ == "TensorList":
                from autograph.operators import lists   # the other branch appended to it
                outputs[i] = lists.as_loop_value(o, t)
            elif i in unbound and isinstance(o, Undefined) and not isinstance(t, Undefined):
                if not (is_tensor(t) or isinstance(t, (bool, int, float, complex, np.generic))):
                    # (only a single tensor can carry the flag that `ld` checks)
                    raise errors.StagingError(
                        f"'{names[i]}' has a value after one branch of the `if`{where()} but "
                        f"not after the other. The condition is a tensor, so both branches "
                        f"become part of the graph; a variable bound in one branch only must "
                        f"be a single array or number, but here it is {nest.describe(t)}. "
                        f"Assign '{names[i]}' before the `if`, or in both branches.")
                outputs[i] = _placeholder_like(t)


def _cond(pred, true_fn, false_fn, leaf_names):
    try:
        return _runtime().cond(pred, true_fn, false_fn, names=leaf_names)
    except errors.StagingError as exc:
        raise _locate(exc, "if", leaf_names) from None
    except NameError as exc:
        raise _name_in_graph(exc, "if") from exc


def _name_in_graph(exc, statement):
    """A name that does not exist, met while tracing a path of a tensor `if` or loop that
    may never run: a refusal that says so (still a NameError)."""
    return errors.NameInGraph(
        f"{exc} (in a branch or body of the `{statement}`{where(' at ')}, whose condition is a "
        f"tensor: the graph holds that path whether or not it runs, so every name it reads must "
        f"exist when the function is traced)")


def _locate(exc, statement, names=None):
    """The same error with the user's location of the statement added, once."""
    msg = str(exc)
    if names is _RETURN_NAMES:
        msg = msg.replace("for the results", "for the return value").replace("'item 0 of the return value'", "the return value")
    if "return value" in msg and "None in the" in msg:
        msg += (" A path through a function that ends without `return` returns None; "
                "return a value of the same kind on every path.")
    loc = where(" at ")
    if loc and loc.strip() not in msg:
        msg = f"{msg}\n(in the `{statement}`{loc})"
    new = type(exc)(msg)
    new.__cause__ = exc.__cause__
    return new


def if_exp(cond, if_true, if_false):
    """`a if cond else b` with `if_true`/`if_false` as functions of no arguments."""
    if type(cond).__name__ == "TensorList":   # `if l`: a list a staged loop appended to
        cond = cond.size() > 0
    if is_tensor(cond):
        try:
            return _runtime().cond(cond, if_true, if_false, names=["value of the conditional expression"])
        except errors.StagingError as exc:
            raise _locate(exc, "... if ... else ...") from None
    return if_true() if cond else if_false()


# -- while ----------------------------------------------------------------------------------

def while_stmt(test, body, state=(), names=(), places=(), test_writes=False, in_try=False):
    """`while test:` with a test and a body that take the state variables.

    Runs as a Python loop while the test gives Python values; from the first time it gives a
    tensor, the rest of the loop is staged as one while_loop node. `test_writes`: the test
    assigns variables too (a walrus) and returns `(condition, state after the test)`."""
    with _LoopJumps(None):   # its jumps are its own, not those of a Python loop around it
        return _while_stmt(test, body, tuple(state), names, places, test_writes, in_try)


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
                _refuse_in_try("while")
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
    n = len(names)
    if not places:
        return _staged_while(test, body, state, names)
    before = _loop_places(places, "`while` loop")
    out = _staged_while(_test_with_places(test, places, n), _with_places(body, places, n),
                        state + before, names + tuple(p.name for p in places))
    _put_loop_places(places, before, out[n:])
    return out[:n]


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


def _unbound_message(name, what):
    if not name.isidentifier():   # an item or attribute (_put_loop_places)
        return (f"'{name}' is first created inside the {what}{where(' at ')}, which ran zero "
                f"times (or no iteration reached the assignment): Python would leave it "
                f"missing, which a graph cannot do only sometimes. Create '{name}' before "
                f"the loop (e.g. {name} = 0, or an array of the right shape and dtype).")
    return (f"'{name}' is first assigned inside the {what}{where(' at ')}, which ran zero "
            f"times (or no iteration reached the assignment), so it has no value where it is "
            f"read after the loop. Assign '{name}' before the loop (e.g. {name} = 0, or an "
            f"array of the right shape and dtype).")


def _check_loop_exit(out, names, what):
    for value, name in zip(out, names):
        if isinstance(value, Undefined) and not _is_return_placeholder(value):
            raise errors.StagingError(
                f"'{name}' is undefined at the end of an iteration of the {what}{where()}, "
                f"whose condition is a tensor. Assign '{name}' on every path through the "
                f"loop body, or before the loop.")


def _check_structures(before, after, names, what):
    for old, new, name in zip(before, after, names):
        if _is_return_placeholder(old):
            continue  # its structure is being learned (see _staged_while)
        if nest.structure_of(old) != nest.structure_of(new):
            raise errors.StagingError(
                f"'{name}' changes structure in the {what}{where()}, whose condition is a "
                f"tensor: it enters the loop as {nest.describe(old)} and an iteration makes "
                f"it {nest.describe(new)}. A graph loop's variables keep their structure; to "
                f"collect values in a loop use ag.TensorArray (ta = ta.write(i, value)).")


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
        state = _lists_as_loop_values(body, state, names)
    first = _first_assigned(state, names)
    if first:
        return _staged_while_first(test, body, state, names, what, first)
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
        tmpl = _scratch_trace(lambda: body_fn(*[_as_loop_value(v) for v in state],
                                              learning=True))
        state = _fill_placeholders(state, [None if _is_return_placeholder(v) else v for v in tmpl])
    while True:
        try:
            out = _runtime().while_loop(test, body_fn, state, names=_leaf_names(state, names))
        except _ReturnLearned as learned:
            # a trace with relaxed shapes reached a `return` that the first trace's shapes
            # ruled out in Python (`if len(v) == 2: return v` once v's length is unknown):
            # the return value enters the loop as a placeholder of the type learned
            state = _fill_placeholders(state, learned.templates)
            continue
        except errors.StagingError as exc:
            raise _locate(exc, what.strip("`").split("`")[0] if "`" in what else what) from None
        except NameError as exc:
            raise _name_in_graph(exc, what.strip("`").split("`")[0]) from exc
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


def _lists_as_loop_values(body, state, names):
    """The state with each Python list that a trace of the body turns into a TensorList
    (it appends to it) converted, so that the loop carries the list as a tensor."""
    from autograph.operators import lists
    from autograph.runtime.ir.tensor import SymbolicTensorError
    n = len(names)
    def trace(state):
        return _scratch_trace(lambda: _as_tuple(body(*[_as_loop_value(v) for v in state]), n))
    try:
        tmpl = trace(state)
    except SymbolicTensorError as exc:
        # e.g. `l[i - 1]` (a tensor index) in a body that appends to `l`: lists of arrays
        # are lists of tensors from the start, if the body then keeps them lists of tensors
        # (else the error stands)
        converted = lists.as_tensor_lists(state, names)
        try:
            tmpl = None if converted is None else trace(converted)
        except Exception:   # noqa: BLE001 (the first error is the one to report)
            tmpl = None
        if tmpl is None or any(type(c) is not type(t) for c, t in zip(converted, tmpl)
                               if type(c).__name__ == "TensorList"):
            raise exc from None
        return converted
    return tuple(lists.as_loop_value(v, t, m) for v, t, m in zip(state, tmpl, names))


def _staged_while_first(test, body, state, names, what, first):
    n = len(names)

    def learn():
        out = _as_tuple(body(*[_as_loop_value(v) for v in state]), n)
        _check_loop_exit(out, names, what)
        return out
    made = [i for i in first if not names[i].isidentifier()]   # items, attributes
    if made:
        from autograph.operators import loop_created_places as created
    if made:
        tmpl, absent = _scratch_trace(learn, created.signature)
    else:
        tmpl = _scratch_trace(learn)
    state = tuple(_placeholder_like(tmpl[i]) if i in first else v for i, v in enumerate(state))

    # each such variable has a value only once an iteration assigned it (an inner loop that
    # ran zero times does not): a flag per variable, carried like the others (Tracker). The
    # flag rides on the variable's tensors, so every leaf enters as one: a body that makes
    # a constant (`v = np.zeros(3)`, `v = {'a': 1}`) gives a NumPy or Python placeholder,
    # which would carry no flag and read as bound after a loop that never ran
    from autograph.runtime.ir import primitives as prims
    state = tuple(_as_loop_tensors(v) if i in first else v for i, v in enumerate(state))
    if made:   # the first iteration ran with them missing, the graph's body has them
        present = _scratch_trace(lambda: body(*[_as_loop_value(v) for v in state]),
                                 created.signature)[1]
        created.check_alike(absent, present, names[made[0]], what)
    for i in first:
        mark_unbound(state[i], prims.constant(False), _unbound_message(names[i], what))
    track = Tracker(state, names)
    out = _staged_while(track.wrap_test(test), track.wrap(body), track.state, track.names, what)
    return track.finish(out)


# -- for ------------------------------------------------------------------------------------

def for_stmt(iterable, body, state=(), names=(), extra_test=None, places=(), in_try=False, *,
             _tracked=False):
    """`for target in iterable:` with body(item, *state) returning the state.

    `extra_test(*state)`, when given, is checked before every iteration; the loop stops when
    it is false (converted `break` statements use it). A tensor iterable is staged: a graph
    range loops with a counter, any other tensor is iterated along its first axis. Python
    iterables (lists, tuples, dicts, ranges) unroll while tracing, like the original loop."""
    n = len(names)
    # (py_builtins: imported by the first `for`, a while loop's first call does without it)
    from autograph.operators.py_builtins import StagedIterable
    if type(iterable).__name__ == "TensorList":   # a list a staged loop changed: over its
        iterable, body = iterable.loop_over(body)  # elements (operators/tensor_list.py)
    if in_try and (is_tensor(iterable) or isinstance(iterable, StagedIterable) or _is_dataset(iterable)):
        _refuse_in_try("for")
    if is_tensor(iterable):
        iterable = StagedIterable.of(iterable)
    elif _is_dataset(iterable):   # a Dataset while tracing: one while_loop node (autograph.data)
        from autograph.data.lowering import DatasetLoop
        iterable = DatasetLoop(iterable)
    if isinstance(iterable, StagedIterable) or _is_dataset_loop(iterable):
        track = None if _tracked else Tracker(state, names)
        if track:  # variables that may have no value (see autograph.operators.variables)
            return _result(track.finish(_as_tuple(for_stmt(
                iterable, track.wrap(body, lead=1), track.state, track.names,
                None if extra_test is None else track.wrap_test(extra_test), places,
                _tracked=True), len(track.names))), n)
        if places:
            k = len(places)
            body = _with_places(body, places, n, lead=1)
            if extra_test is not None:
                extra_test = _test_with_places(extra_test, places, n)
            before = _loop_places(places, "`for` loop")
            out = _staged_for(iterable, body, tuple(state) + before,
                              tuple(names) + tuple(p.name for p in places), extra_test)
            _put_loop_places(places, before, out[n:n + k])
            return _result(out[:n], n)
        return _result(_staged_for(iterable, body, tuple(state), tuple(names), extra_test), n)
    return _result(_py_for(iterable, body, tuple(state), n, tuple(names), extra_test, places), n)


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


# A Python range loop with a tensor break/return unrolls (exactly as Python runs it, one
# nested cond per iteration) while at most this many iterations are left; longer ones stage
# the rest as one while_loop, so a loop over x.shape[0] cannot unroll into a huge graph.
STAGE_RANGES_LONGER_THAN = 8
_stage_long_ranges = None   # set by operators/jit_ranges.py when native tracing is used


def _py_for(iterable, body, state, n, names, extra_test, places=()):
    if _stage_long_ranges is not None and _stage_long_ranges(iterable, STAGE_RANGES_LONGER_THAN):
        # tracing for jit_compile=True: a long Python range is one loop (jit_ranges.py)
        staged = _stage_rest_of_range(iterable, 0, body, state, names, extra_test, places)
        if staged is not None:
            return staged
    with _LoopJumps() as jumps:
        return _py_for_loop(iterable, body, state, n, names, extra_test, places, jumps)


def _py_for_loop(iterable, body, state, n, names, extra_test, places, jumps):
    """A Python loop; over a long Python range whose break, continue or return turns out to
    depend on a tensor (the extra test gives a tensor, or a jump's `if` met one: `jumps`),
    the rest of the range is staged as one while_loop (_stage_rest_of_range). Unrolled,
    every later iteration would sit in a `cond`: a graph growing with the range, quadratic
    with nested `cond`s for a break."""
    watch = _Watch()
    stageable = isinstance(iterable, range)
    for k, item in enumerate(iterable):
        if extra_test is not None:
            go = extra_test(*state)
            if is_tensor(go):
                if stageable and len(iterable) - k > STAGE_RANGES_LONGER_THAN:
                    staged = _stage_rest_of_range(iterable, k, body, state, names, extra_test,
                                                  places)
                    if staged is not None:
                        return staged
                    stageable = False   # the body cannot take a tensor item: unroll the rest
                # The iterations left are unrolled, each running only where the loop has
                # not broken yet.
                state = _as_tuple(if_stmt(go, _bind_item(body, item, n), _identity(n), state, names,
                                          places), n)
                watch.step()
                continue
            if not go:
                break
        state = _as_tuple(body(item, *state), n)
        watch.step()
        if jumps.tensor and stageable and len(iterable) - k - 1 > STAGE_RANGES_LONGER_THAN:
            # a `continue` (or a break/return the extra test sees next) under a tensor
            # condition: the iterations after this one are one graph loop
            staged = _stage_rest_of_range(iterable, k + 1, body, state, names, extra_test,
                                          places)
            if staged is not None:
                return staged
            stageable = False
    watch.done()
    return state


def _stage_rest_of_range(rng, k, body, state, names, extra_test, places):
    """The iterations k, k+1, ... of the Python range `rng` as one staged loop, whose
    counter is the loop's item; the final state, or None when the graph loop cannot be
    made: the body cannot take a tensor item (it indexes a Python list with it, or makes a
    shape from it), or the loop refuses it (StagingError, a TypeError: it changes a Python
    list made outside the loop, say). The caller then unrolls the iterations left, as
    Python runs them.

    The attempt has traced the body once by then. Variables are state (the attempt never
    changes the caller's values); the attributes, items and closure variables the body
    writes (`places`) are put back as they were, so the unrolled iterations read what
    Python would (a refused attempt left body tensors there). Changes to Python containers
    are refused before they happen. What a function the body calls does to Python objects
    is a side effect of tracing, like a `print`: the attempt is one more trace of it."""
    from autograph.operators.py_builtins import StagedIterable
    rest = StagedIterable(rng[k], rng.stop, rng.step, _same)
    before = get_all(places) if places else ()
    try:
        return _as_tuple(for_stmt(rest, body, state, names, extra_test, places), len(names))
    except (TypeError, IndexError):
        put_all(places, before)
        return None


def _same(i):
    return i


def _bind_item(body, item, n):
    return lambda *s: body(item, *s)


def _identity(n):
    return lambda *s: _result(s, n)


def _is_dataset(x):
    from autograph.runtime.ir.graph import get_default_graph
    return type(x).__name__ == "Dataset" and hasattr(x, "_host_only") and \
        get_default_graph() is not None


def _is_dataset_loop(x):
    return hasattr(x, "staged_for")


def _staged_for(iterable, body, state, names, extra_test):
    """A counter loop over a staged iterable; returns the final state tuple."""
    n = len(names)
    if _is_dataset_loop(iterable):
        return iterable.staged_for(body, state, names, extra_test, _staged_while, _as_tuple, _result)
    if iterable.progress is not None:   # ag.range(..., progress=True): autograph.runtime.progress
        from autograph.runtime import progress as bars
        from autograph.operators.py_builtins import StagedIterable
        counter = StagedIterable(iterable.start, iterable.limit, iterable.delta, _same)
        return bars.with_bar(iterable.start, iterable.limit, iterable.delta, iterable.progress,
                             True, lambda *loop: _staged_for(counter, *loop), body, state,
                             names, extra_test, item=iterable.item)

    def test(i, *s):
        go = iterable.test(i)
        if extra_test is not None:
            go = np.logical_and(go, extra_test(*s))
        return go

    def loop_body(i, *s):
        out = _as_tuple(body(iterable.item(i), *s), n)
        return _result((i + iterable.delta, *out), n + 1)

    out = _staged_while(test, loop_body, (iterable.start, *state), ("<loop counter>",) + names,
                        what="`for` loop")
    return out[1:]
