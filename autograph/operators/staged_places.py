"""Attributes and items that a staged `if` or loop writes, carried as extra state.

`self.count += 1` or `y['a'] = x` in a tensor `if` or loop writes a place, not a variable
(the converter passes them as `places=(ag__.attr(...), ag__.item(...))`, see
autograph.operators.variables). The graph has no objects to write, so each place's value
goes in as one more state variable: every branch or iteration starts by setting the places
from its inputs and ends by reading them back, and the statement writes the final values
to the objects. Imported by autograph.operators.control_flow and for_loops on first use.
"""

from autograph import errors
from autograph.operators import _where as where   # (location: loaded on first use)
from autograph.operators import calls
from autograph.operators.control_flow import (_as_tuple, _check_branch, _cond, _result, _staged_if,
                                              _staged_while)
from autograph.operators.variables import Undefined, get_all, put_all


@calls.guards("if")   # (its branches without state are staged here, not in _staged_if)
def if_with_places(pred, if_true, if_false, state, names, places):
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

    out = _staged_if(pred, with_places(if_true, places, n), with_places(if_false, places, n),
                     state + before, names + pnames, bindable=n)
    out = _as_tuple(out, n + k)
    put_all(places, out[n:])
    return _result(out[:n], n)


def with_places(fn, places, n, lead=0):
    """`fn` over the state variables, as a function over variables and places: it sets the
    places from its last arguments first and returns their values after it (`lead`: leading
    arguments that are not state, like a for loop's item)."""
    k = len(places)

    def wrapped(*args):
        put_all(places, args[lead + n:])
        out = _as_tuple(fn(*args[:lead + n]), n)
        return _result(out + get_all(places), n + k)
    return wrapped


def loop_places(places, what):
    """The values of the places a staged loop writes, as it starts. An attribute or a key
    that does not exist yet (first made inside the loop: `y['a'] = x`) is Undefined, a loop
    variable that the body gives its first value (placeholders.staged_while_first,
    loop_created_places).
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


def put_loop_places(places, before, after):
    """Write a staged loop's places back. One the loop created (Undefined before it) exists
    after it only where the loop ran: the graph cannot add a key or attribute sometimes, so
    it checks that the loop ran (TensorFlow: "loop must iterate at least once"), raising
    UnboundLocalError naming the place, not a made-up value, where it did not."""
    from autograph.operators.variables import check
    for old, new in zip(before, after):
        if isinstance(old, Undefined):
            check(new)
    put_all(places, after)


def test_with_places(test, places, n):
    def wrapped(*s):
        put_all(places, s[n:])
        return test(*s[:n])
    return wrapped



def staged_while_with_places(test, body, state, names, places):
    """A staged `while` whose test and body also write `places`; returns the variables'
    final state (the places are written back)."""
    n = len(names)
    before = loop_places(places, "`while` loop")
    out = _staged_while(test_with_places(test, places, n), with_places(body, places, n),
                        state + before, names + tuple(p.name for p in places))
    put_loop_places(places, before, out[n:])
    return out[:n]
