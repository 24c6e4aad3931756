"""Values undefined on some paths of a staged `if` or loop, and what stands for them.

A tensor `if` traces both branches and a staged loop traces its body once, but Python lets
a path leave a variable without a value: a variable bound in one branch only, or first in a
loop body; a return value set on some paths (`UndefinedReturnValue`); a Python list a loop
appends to. The graph needs a value of one type on every path, so each gets a placeholder
of the type the other path (or a trace of the body) gives it, never read where it stands:
`ag__.ld` checks a flag carried beside a variable (autograph.operators.variables), a
return value is read only once `do_return` is set, and a list becomes a TensorList
(autograph.operators.lists). Imported by autograph.operators.control_flow on first need.
"""

import numpy as np

from autograph import errors
from autograph.operators import _where as where   # (location: loaded on first use)
from autograph.operators.control_flow import (_as_tuple, _check_loop_exit, _is_return_placeholder,
                                              _staged_while)
from autograph.operators.variables import Tracker, Undefined, flag_of, mark as mark_unbound
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import is_tensor


# -- placeholders ---------------------------------------------------------------------------

def placeholder_like(value, exact=False):
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
            return primitives.constant(np.zeros(shape, dtype=v.dtype),
                                       handle=v.dtype.kind == "O")
        if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
            return type(v)(0) if not isinstance(v, np.ndarray) else np.zeros_like(v)
        return v
    return nest.map_structure(leaf, value)


def scratch_trace(fn, sign=None):
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


def as_loop_value(value):
    if isinstance(value, (bool, int, float)) and not isinstance(value, Undefined):
        from autograph.runtime.ir import primitives
        return primitives.constant(value)
    return value


def as_loop_tensors(value):
    """`value` with each Python or NumPy leaf a constant tensor (structures keep theirs)."""
    from autograph.runtime.ir import primitives

    def leaf(v):
        if isinstance(v, (bool, int, float, complex, np.generic, np.ndarray)):
            return primitives.constant(v)
        return v
    return nest.map_structure(leaf, value)


def fill_placeholders(outputs, templates):
    """Replace undefined return values in `outputs` (a loop's initial state) by
    placeholders of exactly the types of `templates`."""
    return tuple(placeholder_like(t, exact=True) if _is_return_placeholder(o) and t is not None else o
                 for o, t in zip(outputs, templates))


# -- if -------------------------------------------------------------------------------------

def bound_flag(value):
    """Whether a variable has a value at the end of a branch: False, True, or the flag of a
    value that itself may have none (Python bools: where both branches agree, `cond` passes
    the bool through and the `if` gets no extra output)."""
    if isinstance(value, Undefined):
        return False
    return flag_of(value)


def one_branch_message(name):
    return (f"'{name}' is assigned in only one branch of the `if`{where()}, whose condition is "
            f"a tensor, and the other branch ran, so it has no value where it is read (Python "
            f"raises the same). Assign '{name}' before the `if`, or in both branches.")


def filling_each_other(true_fn, false_fn, names=(), unbound=()):
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
                outputs[i] = placeholder_like(t)
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
                outputs[i] = placeholder_like(t)


# -- while ----------------------------------------------------------------------------------

def lists_as_loop_values(body, state, names):
    """The state with each Python list that a trace of the body turns into a TensorList
    (it appends to it) converted, so that the loop carries the list as a tensor."""
    from autograph.operators import lists
    from autograph.runtime.ir.tensor import SymbolicTensorError
    n = len(names)
    def trace(state):
        return scratch_trace(lambda: _as_tuple(body(*[as_loop_value(v) for v in state]), n))
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


def staged_while_first(test, body, state, names, what, first):
    n = len(names)

    def learn():
        out = _as_tuple(body(*[as_loop_value(v) for v in state]), n)
        _check_loop_exit(out, names, what)
        return out
    made = [i for i in first if not names[i].isidentifier()]   # items, attributes
    if made:
        from autograph.operators import loop_created_places as created
    if made:
        tmpl, absent = scratch_trace(learn, created.signature)
    else:
        tmpl = scratch_trace(learn)
    state = tuple(placeholder_like(tmpl[i]) if i in first else v for i, v in enumerate(state))

    # each such variable has a value only once an iteration assigned it (an inner loop that
    # ran zero times does not): a flag per variable, carried like the others (Tracker). The
    # flag rides on the variable's tensors, so every leaf enters as one: a body that makes
    # a constant (`v = np.zeros(3)`, `v = {'a': 1}`) gives a NumPy or Python placeholder,
    # which would carry no flag and read as bound after a loop that never ran
    from autograph.runtime.ir import primitives as prims
    state = tuple(as_loop_tensors(v) if i in first else v for i, v in enumerate(state))
    if made:   # the first iteration ran with them missing, the graph's body has them
        present = scratch_trace(lambda: body(*[as_loop_value(v) for v in state]),
                                 created.signature)[1]
        created.check_alike(absent, present, names[made[0]], what)
    for i in first:
        mark_unbound(state[i], prims.constant(False), unbound_message(names[i], what))
    track = Tracker(state, names)
    out = _staged_while(track.wrap_test(test), track.wrap(body), track.state, track.names, what)
    return track.finish(out)


def unbound_message(name, what):
    if not name.isidentifier():   # an item or attribute (staged_places.put_loop_places)
        return (f"'{name}' is first created inside the {what}{where(' at ')}, which ran zero "
                f"times (or no iteration reached the assignment): Python would leave it "
                f"missing, which a graph cannot do only sometimes. Create '{name}' before "
                f"the loop (e.g. {name} = 0, or an array of the right shape and dtype).")
    return (f"'{name}' is first assigned inside the {what}{where(' at ')}, which ran zero "
            f"times (or no iteration reached the assignment), so it has no value where it is "
            f"read after the loop. Assign '{name}' before the loop (e.g. {name} = 0, or an "
            f"array of the right shape and dtype).")
