"""`converted_call`: how converted code calls what it cannot tell apart statically.

The compiler (autograph.api, a layer above) registers the function that does the work with
`set_call_handler`; this module only forwards to it, so imports keep pointing down the
layers while generated code still finds everything under `ag__`. Before forwarding it gives
three kinds of callee the meaning a direct call would have:

- a builtin passed as a value (`fn = range; fn(n)`, `ops = {"len": len}`) is the operator
  converted code calls for the builtin itself (`ag__.range`, `ag__.len`, ...);
- a NumPy function gets Python lists and tuples that hold tensors packed the way NumPy
  would pack them (`np.asarray([x, 1])`, `np.concatenate((v, [i]))`);
- a method that changes a Python list, dict or set of the function's own (a local or a
  closure variable, or what one holds) from inside a loop or `if` that is being traced into
  a graph (`acc.append(x)`, `stack.pop()` in a `for` over a tensor) is refused with the
  user's line: the body is traced once (both branches of an `if` are), so the change would
  happen once instead of once per iteration, and the result would be silently wrong.
  Module globals stay side effects of tracing, like print (see `_reach`);
- a method of a NumPy random generator (`rng.normal`, the legacy `np.random.random`) and
  `np.random.default_rng` stage a draw that runs on every call (runtime/numpy/random.py).
"""

import collections
import functools
import itertools
import sys
import _thread
import types

from autograph import errors
from autograph.operators import _where as where   # (location: loaded on first use)


def _random():
    """autograph.runtime.numpy.random once the user's code has imported numpy.random (no
    generator or np.random function exists before that): a process that draws no random
    numbers never imports NumPy's random machinery."""
    if "numpy.random" not in sys.modules:
        return None
    from autograph.runtime.numpy import random
    return random

_handler = None


def set_call_handler(handler):
    """Install `handler(f, args, kwargs)`: api.py does this when it is imported."""
    global _handler
    _handler = handler


# builtin -> the operator a direct call of it becomes (what call_trees writes for `len(x)`)
_BUILTIN_OPERATORS = None   # builtin -> its operator (py_builtins), made on first use


def _builtin_operators():
    global _BUILTIN_OPERATORS
    if _BUILTIN_OPERATORS is None:
        from autograph.operators import py_builtins
        _BUILTIN_OPERATORS = {builtin: getattr(py_builtins, f"{name}_")
                              for builtin, name in py_builtins.BUILTINS.items()}
    return _BUILTIN_OPERATORS


def _builtin_operator(f):
    try:
        return (_BUILTIN_OPERATORS or _builtin_operators()).get(f)
    except TypeError:   # an unhashable callable
        return None


def converted_call(f, *args, **kwargs):
    """Call `f(*args, **kwargs)`, converting `f` first if it is user code."""
    if _state.watch is not None:   # a trace the trace cache may keep: it sees each callee
        _state.watch(f)
    kind = type(f)
    if kind is types.BuiltinFunctionType:   # len, abs, ... and methods like list.append
        if isinstance(f.__self__, CONTAINERS):
            if _state.loops:
                _check_mutation(f.__self__, f.__name__)
        else:
            op = (_BUILTIN_OPERATORS or _builtin_operators()).get(f)
            if op is not None:
                return op(*args, **kwargs)
    elif kind is type:   # range, enumerate, zip, int, float, bool
        op = (_BUILTIN_OPERATORS or _builtin_operators()).get(f)
        if op is not None:
            return op(*args, **kwargs)
    elif kind is types.MethodType and _random() is not None and \
            isinstance(f.__self__, _random().SOURCES):
        # rng.normal(...), np.random.random(...): a draw on every run, not once while tracing
        return _random().call(f, args, kwargs)
    elif kind is functools.partial:   # functools.partial(range, 1)
        op = _builtin_operator(f.func)
        if op is not None:
            return op(*f.args, *args, **{**f.keywords, **kwargs})
    if args and type(args[0]).__name__ == "TensorList":   # np.stack(l) of a list a staged
        from autograph.operators import lists               # loop appended to
        out = lists.call(f, args, kwargs)
        if out is not NotImplemented:
            return out
    from autograph.runtime.numpy import packing   # (here: a trace that calls no NumPy
    if packing.is_numpy_callable(f):             # function never loads it)
        rnd = _random()
        if rnd is not None and f in rnd.MODULE_FUNCTIONS:
            return rnd.call(f, args, kwargs)
        return packing.call(f, args, kwargs)
    if (getattr(f, "__module__", None) or "")[:6] == "scipy.":   # SciPy's np.asarray users
        from autograph.runtime.numpy import scipy_direct
        if scipy_direct.lookup(f) is not None:
            return scipy_direct.call(f, args, kwargs)
    if _handler is None:   # converted code is made by autograph.api, which registers it
        raise RuntimeError("converted code called before the compiler (autograph.api) was "
                           "imported: it registers converted_call's handler")
    return _handler(f, args, kwargs)


def trace_effect():
    """Tell a trace being recorded (autograph.function.trace_cache) that tracing did something a
    later process would miss if it loaded the trace instead of tracing (it warned)."""
    if _state.watch is not None:
        _state.watch(None)


# -- Python containers changed inside a traced loop -------------------------------------------

CONTAINERS = (list, dict, set, bytearray, collections.deque)
_MUTATORS = {
    list: {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
           "__setitem__", "__delitem__", "__iadd__", "__imul__"},
    dict: {"pop", "popitem", "update", "setdefault", "clear", "__setitem__", "__delitem__",
           "__ior__"},
    set: {"add", "discard", "remove", "pop", "clear", "update", "intersection_update",
          "difference_update", "symmetric_difference_update", "__ior__", "__iand__",
          "__isub__", "__ixor__"},
    bytearray: {"append", "extend", "insert", "pop", "remove", "clear", "reverse",
                "__setitem__", "__delitem__", "__iadd__"},
    collections.deque: {"append", "appendleft", "extend", "extendleft", "insert", "pop",
                        "popleft", "remove", "clear", "reverse", "rotate", "__setitem__",
                        "__delitem__", "__iadd__"},
}


class _State(_thread._local):
    def __init__(self):
        self.loops = []   # one _Staged per loop or `if` being traced into a graph
        self.watch = None   # fn(callee) while a trace is recorded (autograph.function.trace_cache)


_state = _State()


class _Staged:
    """A statement being traced: what it runs (its roots), and what they reach (found at
    the first change of a container inside it, then kept: a search, done once)."""

    __slots__ = ("kind", "roots", "outside")

    def __init__(self, kind, roots):
        self.kind, self.roots, self.outside = kind, roots, None

    def holds(self, obj):
        if self.outside is None:
            self.outside = _reach(self.roots)
        return id(obj) in self.outside


def guards(kind):
    """Decorate a function that stages a loop (kind "loop") or an `if` (kind "if") from
    the functions and state it is given: while it traces, a Python container reachable
    from those counts as made outside the statement, and changing one through one of its
    methods is refused (see `converted_call`)."""
    def decorate(staged):
        @functools.wraps(staged)
        def wrapper(*args, **kwargs):
            _state.loops.append(_Staged(kind, args))
            try:
                return staged(*args, **kwargs)
            finally:
                _state.loops.pop()
        return wrapper
    return decorate


def staged_outside(obj):
    """Whether a loop or `if` the graph runs is being traced and `obj` (a container) was
    made outside it: a change to it in place would happen once, while tracing."""
    return any(s.holds(obj) for s in _state.loops)


def del_item(target, key):
    """`del target[key]`, as converted code writes it: a change to a container, refused
    like `pop` inside a staged loop or `if` when the container is the function's own."""
    if _state.loops and isinstance(target, CONTAINERS):
        # a dict's item deleted in a loop body is an item of the loop's state like any
        # other (`del d[k]; d[k] = v` works; reading a deleted key fails while tracing)
        _check_mutation(target, "__delitem__", loops_ok=isinstance(target, dict))
    del target[key]


def check_mutation(owner, name, depth=0):
    """Refuse `owner.name(...)` as converted_call does (a change to a container made outside
    the loop or `if` being traced), for an operator called `depth` frames below the user's."""
    _check_mutation(owner, name, depth=depth)


def _check_mutation(owner, name, loops_ok=False, depth=0):
    kind = next(k for k in CONTAINERS if isinstance(owner, k))
    if name not in _MUTATORS[kind]:
        return
    staged = next((s for s in reversed(_state.loops) if s.holds(owner)), None)
    if staged is None or (loops_ok and staged.kind == "loop"):
        return   # made in this trace of the body or branch: an ordinary Python value
    var = _name_of(owner, sys._getframe(2 + depth))
    what = f"the Python {kind.__name__} `{var}`" if var else f"a Python {kind.__name__}"
    call = f"{var or kind.__name__}.{name}(...)"
    if name == "__delitem__":
        call = f"del {var or kind.__name__}[...]"
    if kind is list and name in ("append", "extend", "insert", "pop"):
        fix = ("A list in a loop or `if` over tensors may change by `l.append(v)`, "
               "`l.extend(vs)`, `l.insert(i, v)`, `l.pop(i)` or `v = l.pop(i)`, each a "
               "statement of its own on a name the function binds, with elements that are "
               "arrays or numbers (or tuples or dicts of them); `l[i]`, `l[i] = v` and "
               "`len(l)` work too. Or use ag.TensorArray: "
               "`ta = ag.TensorArray(dtype, size=0, dynamic_size=True)` before the loop, "
               "`ta = ta.write(i, value)` in it, and `ta.stack()` after it")
    else:
        fix = ("Keep the values in an array instead (np.concatenate, np.where, slicing) and "
               "assign it (`x = ...`), or collect them with ag.TensorArray "
               "(`ta = ta.write(i, value)`)")
    if staged.kind == "loop":
        why = ("inside a loop whose condition is a tensor: such a loop is traced into a "
               "graph once, so a change to a Python {0} made outside it would happen once, "
               "not once per iteration, and the result would be wrong")
    else:
        why = ("inside an `if` whose condition is a tensor: both of its branches are traced "
               "into the graph, so a change to a Python {0} made outside it would happen "
               "whichever branch runs, and the result would be wrong")
    raise errors.StagingError(
        f"Cannot {'run' if name == '__delitem__' else 'call'} {call} on {what}{where()} {why.format(kind.__name__)}. {fix}.")


_LEAVES = (str, bytes, int, float, complex, bool, type(None), type, types.ModuleType,
           types.BuiltinFunctionType)
_LIMIT = 100_000   # objects visited at most: a search, not a garbage collector
_ITEMS = 10_000    # items looked at in one container


def _reach(roots):
    """The objects reachable from `roots` (functions through their closures, containers
    through their items, objects through their attributes), by id, each kept alive with its
    id while the statement traces.

    Module globals are not followed: changing a global (a log, a counter) is a side effect
    that happens while tracing, as printing is (the design's semantics, TensorFlow's too);
    the function's own lists, and what they hold, are the values a computation reads."""
    seen, todo, budget = {}, list(roots), _LIMIT
    while todo and budget:
        x = todo.pop()
        budget -= 1
        if isinstance(x, _LEAVES) or id(x) in seen:
            continue
        seen[id(x)] = x
        if isinstance(x, types.FunctionType):
            for cell in x.__closure__ or ():
                try:
                    todo.append(cell.cell_contents)
                except ValueError:   # an empty cell
                    pass
        elif isinstance(x, types.MethodType):
            todo.extend((x.__func__, x.__self__))
        elif isinstance(x, dict):
            todo.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset, collections.deque)):
            todo.extend(itertools.islice(x, _ITEMS))   # (a long list of numbers: its head)
        elif isinstance(x, functools.partial):
            todo.extend((x.func, *x.args, *x.keywords.values()))
        else:
            attrs = getattr(x, "__dict__", None)
            if isinstance(attrs, dict):
                todo.extend(attrs.values())
    return seen


def _name_of(obj, frame):
    """The user's name for `obj` in the calling frame (a local or a closure variable)."""
    try:
        for name, value in frame.f_locals.items():
            if value is obj:
                return name
    except Exception:   # never let a lookup hide the real error
        pass
    return None
