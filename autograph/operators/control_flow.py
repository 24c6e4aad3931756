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

import numpy as np

from autograph import errors
from autograph.operators import calls
from autograph.operators.iterables import StagedIterable
from autograph.operators.location import where
from autograph.operators.variables import Undefined, UndefinedReturnValue
from autograph.runtime import nest
from autograph.runtime.tensor import is_tensor


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

def _placeholder_like(value):
    """A value of the same type as `value`, standing for a return value never read."""
    def leaf(v):
        if is_tensor(v):
            if v.shape == ():  # a Python scalar: weak, it adopts the real value's dtype
                return {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}.get(v.dtype.kind, 0)
            shape = tuple(0 if d is None else d for d in (v.shape or ()))
            from autograph.runtime import primitives
            return primitives.constant(np.zeros(shape, dtype=v.dtype))
        if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
            return type(v)(0) if not isinstance(v, np.ndarray) else np.zeros_like(v)
        return v
    return nest.map_structure(leaf, value)


def _scratch_trace(fn):
    """Run `fn` in a throwaway graph (child of the current one) to learn the types it
    produces; nothing it stages reaches the program. Its prints are swallowed, so the
    user's trace-time `print`s still appear once per trace."""
    import contextlib
    import io

    from autograph.runtime.graph import Graph, get_default_graph
    scratch = Graph("scratch", parent=get_default_graph())
    with scratch.as_default(), contextlib.redirect_stdout(io.StringIO()):
        return fn()


def _as_loop_value(value):
    if isinstance(value, (bool, int, float)) and not isinstance(value, Undefined):
        from autograph.runtime import primitives
        return primitives.constant(value)
    return value


def _fill_placeholders(outputs, templates):
    """Replace undefined return values in `outputs` by placeholders like `templates`."""
    return tuple(_placeholder_like(t) if _is_return_placeholder(o) and t is not None else o
                 for o, t in zip(outputs, templates))


# -- if -------------------------------------------------------------------------------------

def _refuse_in_try(statement):
    raise errors.StagingError(
        f"This `{statement}`{where()} would run in the graph (its condition is a tensor), but "
        f"it is inside a `try` block: Python's try/except cannot catch errors raised while "
        f"the graph runs, so the program would not mean what it says. Move the try/except "
        f"outside the function, or make the condition a Python value.")


def if_stmt(cond, if_true, if_false, state=(), names=(), in_try=False):
    """`if cond:` with branch functions taking and returning the state variables.

    With `names` empty the branches return whatever they return (e.g. the function's return
    value when both branches end in `return`), and so does if_stmt."""
    if is_tensor(cond):
        if in_try:
            _refuse_in_try("if")
        return _staged_if(cond, if_true, if_false, tuple(state), tuple(names))
    return if_true(*state) if cond else if_false(*state)


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
def _staged_if(pred, if_true, if_false, state, names):
    n = len(names)
    if n == 0:  # no state: the branches' own return values (or None) are the outputs
        return _cond(pred, lambda: if_true(*state), lambda: if_false(*state), _RETURN_NAMES)

    def run(fn, which):
        def branch():
            out = _as_tuple(fn(*state), n)
            _check_branch(out, names, which)
            return out
        return branch

    true_fn, false_fn = run(if_true, "if"), run(if_false, "else")
    if any(_is_return_placeholder(v) for v in state):
        # A return value assigned in one branch only: learn its type from the branch that
        # assigns it, and give the other branch a placeholder of that type.
        t_out, f_out = _scratch_trace(true_fn), _scratch_trace(false_fn)
        t_tmpl = [None if _is_return_placeholder(v) else v for v in t_out]
        f_tmpl = [None if _is_return_placeholder(v) else v for v in f_out]
        true_fn = _then(true_fn, lambda out: _fill_placeholders(out, f_tmpl))
        false_fn = _then(false_fn, lambda out: _fill_placeholders(out, t_tmpl))
    out = _cond(pred, true_fn, false_fn, _leaf_names(state, names))
    return _result(tuple(out), n)


# names of the flat outputs of an `if` whose branches return the function's value
_RETURN_NAMES = [f"item {i} of the return value" for i in range(256)]


def _then(fn, post):
    return lambda: post(fn())


def _cond(pred, true_fn, false_fn, leaf_names):
    try:
        return _runtime().cond(pred, true_fn, false_fn, names=leaf_names)
    except errors.StagingError as exc:
        raise _locate(exc, "if", leaf_names) from None


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
    if is_tensor(cond):
        try:
            return _runtime().cond(cond, if_true, if_false, names=["value of the conditional expression"])
        except errors.StagingError as exc:
            raise _locate(exc, "... if ... else ...") from None
    return if_true() if cond else if_false()


# -- while ----------------------------------------------------------------------------------

def while_stmt(test, body, state=(), names=(), in_try=False):
    """`while test:` with a test and a body that take the state variables.

    Runs as a Python loop while the test gives Python values; from the first time it gives a
    tensor, the rest of the loop is staged as one while_loop node."""
    n = len(names)
    state = tuple(state)
    while True:
        cond = test(*state)
        if is_tensor(cond):
            if in_try:
                _refuse_in_try("while")
            return _result(_staged_while(test, body, state, names), n)
        if not cond:
            return _result(state, n)
        state = _as_tuple(body(*state), n)


def _check_loop_entry(state, names, what):
    for value, name in zip(state, names):
        if isinstance(value, Undefined) and not _is_return_placeholder(value):
            raise errors.StagingError(
                f"'{name}' is first assigned inside the {what}{where()}, whose condition is a "
                f"tensor, and is used after the loop (or by its next iteration). A loop run by "
                f"the graph may run zero times, so '{name}' needs a value before it: assign "
                f"'{name}' before the loop (e.g. {name} = 0, or an array of the right shape "
                f"and dtype).")


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


@calls.guards("loop")   # Python lists changed in the body are refused (they would change once)
def _staged_while(test, body, state, names, what="`while` loop"):
    """Stage a while loop; returns the final state tuple."""
    n = len(names)
    _check_loop_entry(state, names, what)

    def body_fn(*vs):
        out = _as_tuple(body(*vs), n)
        _check_loop_exit(out, names, what)
        _check_structures(vs, out, names, what)
        return out

    if any(_is_return_placeholder(v) for v in state):
        # loop variables enter the loop as tensors: Python scalars become weak constants
        tmpl = _scratch_trace(lambda: body_fn(*[_as_loop_value(v) for v in state]))
        state = _fill_placeholders(state, [None if _is_return_placeholder(v) else v for v in tmpl])
    try:
        out = _runtime().while_loop(test, body_fn, state, names=_leaf_names(state, names))
    except errors.StagingError as exc:
        raise _locate(exc, what.strip("`").split("`")[0] if "`" in what else what) from None
    return tuple(out)


# -- for ------------------------------------------------------------------------------------

def for_stmt(iterable, body, state=(), names=(), extra_test=None, in_try=False):
    """`for target in iterable:` with body(item, *state) returning the state.

    `extra_test(*state)`, when given, is checked before every iteration; the loop stops when
    it is false (converted `break` statements use it). A tensor iterable is staged: a graph
    range loops with a counter, any other tensor is iterated along its first axis. Python
    iterables (lists, tuples, dicts, ranges) unroll while tracing, like the original loop."""
    n = len(names)
    if in_try and (is_tensor(iterable) or isinstance(iterable, StagedIterable)):
        _refuse_in_try("for")
    if is_tensor(iterable):
        iterable = StagedIterable.of(iterable)
    if isinstance(iterable, StagedIterable):
        return _result(_staged_for(iterable, body, tuple(state), tuple(names), extra_test), n)
    return _result(_py_for(iterable, body, tuple(state), n, tuple(names), extra_test), n)


def _py_for(iterable, body, state, n, names, extra_test):
    for item in iterable:
        if extra_test is not None:
            go = extra_test(*state)
            if is_tensor(go):
                # A break under a tensor condition: the iterations left are unrolled, each
                # running only where the loop has not broken yet.
                state = _as_tuple(if_stmt(go, _bind_item(body, item, n), _identity(n), state, names), n)
                continue
            if not go:
                break
        state = _as_tuple(body(item, *state), n)
    return state


def _bind_item(body, item, n):
    return lambda *s: body(item, *s)


def _identity(n):
    return lambda *s: _result(s, n)


def _staged_for(iterable, body, state, names, extra_test):
    """A counter loop over a staged iterable; returns the final state tuple."""
    n = len(names)

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
