"""Names that share an array in NumPy, and `AliasWarning` when an update splits them.

In NumPy an in-place update is seen through every name of the array it changes:

    y = x;        y += 1       # x changes too
    y = x[1:];    y[0] = 5     # y is a view of x: x[1] changes
    v = x[0];     x += 1       # ... and the other way round: v changes
    l = [x, x];   l[0] += 1    # both items are one array: l[1] changes

Inside a traced function a tensor is immutable: the update makes a new tensor for the name
(or list item) it assigns, and every other name keeps the old value. Where that happens
while tracing, autograph warns once per user line (`AliasWarning`), naming the names that
would have seen the write. The names looked at are the local variables of the function
doing the update, and the items of the lists, tuples and dicts they hold (one level).

Two arrays share memory here when one is the other, or one was made from the other by
operations that give views in NumPy (basic slicing, reshape, transpose, ...; the list is
`array_api_writes.VIEW_OPS`). A 0-d tensor is taken for what NumPy's 0-d results
usually are, an immutable scalar (`i += 1` on a counter another list holds). Two views of
one array (`a = x[:2]; b = x[2:]`) are not taken to share: their elements may not overlap,
and a warning must mean something. A NumPy array that an update with a tensor turns into
a tensor (`c = np.zeros(3); c[0] = t`) shares with the names that hold the same array.
"""

import _thread
import contextlib

import numpy as np

from autograph import frames
from autograph.runtime.ir.tensor import Tensor


class AliasWarning(UserWarning):
    """An in-place update inside a traced function that another name would see in NumPy."""


_warned = set()


class _Entries(_thread._local):
    def __init__(self):
        self.stack = []   # per staged loop being traced: {loop variable: [other holders]}


_entries = _Entries()


@contextlib.contextmanager
def loop_entry(state, names):
    """While a staged loop's body is traced: which loop variables entered it holding an
    array another name also holds (`y = x` before the loop). In the body the variable is
    the loop's own value, which no other name holds, so an update of it there is checked
    against this record instead."""
    shared = {}
    frame = frames.user_frame()
    if frame is not None:
        for name, value in zip(names, state):
            if isinstance(value, Tensor) and value.shape != ():
                others = [n for n in _sharing(value, frame) if n != name]
                if others:
                    shared[name] = others
    _entries.stack.append(shared)
    try:
        yield
    finally:
        _entries.stack.pop()


def warn_if_shared(target, frame, what):
    """Warn (once per user line) when a name of `frame` other than the updated one holds
    an array that NumPy's update of `target` would change. `what` says which update
    ("an item update", "`+=`"). The updated name is one of the names found."""
    if isinstance(target, np.ndarray):
        names = _sharing(target, frame)
    elif isinstance(target, Tensor) and target.shape != ():
        names = _sharing(target, frame)   # (0-d: a scalar, `x.sum()`, immutable in NumPy)
        for entry in _entries.stack:      # a loop variable that entered its loop shared
            names = sorted(set(names).union(*(entry.get(n, ()) for n in names)))
    else:
        return
    if len(names) < 2:
        return
    from autograph.operators.location import warn_once
    listed = ", ".join(f"`{n}`" for n in names[:-1]) + f" and `{names[-1]}`"
    message = (f"{what} of an array that {listed} {'both' if len(names) == 2 else 'all'} "
               "hold (as one array or as a view of it): in NumPy every one of them sees "
               "the write; inside a traced function "
               "the update makes a new tensor for the name it assigns, and the others keep "
               "the old value. Copy first (`y = x.copy()`) to say that they differ, or read "
               "the updated value through the name that was assigned.")
    warn_once(message, AliasWarning, _warned, tuple(names))


def _sharing(target, frame):
    lineage = _lineage(target)
    names = []
    for name, value in _visible_locals(frame):
        if name.startswith("ag__"):
            continue
        if isinstance(value, (list, tuple, dict)):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            names += [f"{name}[{key!r}]" for key, item in items
                      if _shares(item, target, lineage)]
        elif _shares(value, target, lineage):
            names.append(name)
    return sorted(set(names))


def _visible_locals(frame):
    """The local variables of `frame`, then of the function that defined it, and so on
    while the definer called it through autograph (a loop or branch body the converter
    made, `for r in rows: r += 1`, runs as a function inside the user's)."""
    while frame is not None:
        yield from frame.f_locals.items()
        code, caller = frame.f_code, frame.f_back
        while caller is not None and not frames.is_user_code(caller.f_code):
            caller = caller.f_back
        if caller is None or not any(c is code for c in caller.f_code.co_consts):
            return
        frame = caller


def _shares(value, target, lineage):
    if value is target:
        return True
    return isinstance(value, Tensor) and (any(value is t for t in lineage) or
                                          any(target is t for t in _lineage(value)))


def _lineage(t):
    """The arrays `t` is a view of, nearest first (empty when it owns its memory)."""
    from autograph.runtime.numpy.array_api_writes import _is_view
    chain = []
    if not isinstance(t, Tensor):
        return chain
    node = t.node
    while _is_view(node) and node.inputs and isinstance(node.inputs[0], Tensor):
        parent = node.inputs[0]
        chain.append(parent)
        node = parent.node
    return chain


def check_augmented(target, frame, symbol):
    """`y += v` on a tensor, in code that is not autograph's own (Tensor.__iadd__ and the
    other in-place operators call this: runtime.ir.tensor.user_inplace_check)."""
    if not frames.is_user_code(frame.f_code):
        return
    warn_if_shared(target, frame, f"`{symbol}=`")
