"""`for` loops: what converted code's `ag__.for_stmt` does with each kind of iterable.

A Python iterable (list, tuple, dict, Python range) runs as a Python loop, unrolling while
tracing exactly as the original runs; a jump (break, continue, return) of it that turns out
to depend on a tensor makes each later iteration conditional, and over a long Python range
the rest of the range becomes one staged loop instead (_stage_rest_of_range; jit_ranges.py
asks for that from the start when tracing for native code). A tensor, `ag.range` or a
Dataset met while tracing is staged as one while_loop (autograph.operators.control_flow's
_staged_while) with a counter.
"""

import numpy as np

from autograph.operators.control_flow import (_LoopJumps, _Watch, _as_tuple, _result, _staged_while,
                                              if_stmt)
from autograph.operators.variables import Tracker, get_all, put_all
from autograph.runtime.ir.tensor import is_tensor


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
        from autograph.operators import statement_errors
        raise statement_errors.refuse_in_try("for")
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
        if places:   # attributes and items the body writes (operators/staged_places.py)
            from autograph.operators import staged_places as sp
            k = len(places)
            body = sp.with_places(body, places, n, lead=1)
            if extra_test is not None:
                extra_test = sp.test_with_places(extra_test, places, n)
            before = sp.loop_places(places, "`for` loop")
            out = _staged_for(iterable, body, tuple(state) + before,
                              tuple(names) + tuple(p.name for p in places), extra_test)
            sp.put_loop_places(places, before, out[n:n + k])
            return _result(out[:n], n)
        return _result(_staged_for(iterable, body, tuple(state), tuple(names), extra_test), n)
    return _result(_py_for(iterable, body, tuple(state), n, tuple(names), extra_test, places), n)


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
