"""The compiler's entry points: to_graph, to_code, do_not_convert, converted_call.

    converted = ag.to_graph(collatz)    # a Python function whose control flow stages on tensors
    print(ag.to_code(collatz))          # the generated source (a teaching artefact)

Conversion parses the function (autograph.source.parser), runs the converter passes
(autograph.converters) and loads the result (autograph.source.loader) bound to the user's
own globals and closure cells. It is cached per code object: another function made from the
same code (a lambda or nested def created again) reuses the compiled code with its own
closure. The caches keep nothing alive: the conversion of a code object lives as long as the
code, a function's converted version lives in (and dies with) the function. Library code
(NumPy, the standard library, installed packages, autograph itself) is never converted;
neither is anything marked with `do_not_convert`.
"""

import functools
import inspect
import _thread
import types
import weakref

from autograph import config, errors, operators
from autograph.frames import value_is_library as is_library  # (part of the API)
from autograph.operators import calls

_DO_NOT_CONVERT = "__autograph_do_not_convert__"
_lock = _thread.RLock()


class _CodeCache:
    """code object -> _Converted, by identity, holding the code object weakly: an entry
    lives as long as its code. Functions made again from one `def` or `lambda` (the code
    is a constant of the enclosing code) share one conversion; the code of a function made
    by exec, or of a module that was dropped, takes its conversion with it when it dies.
    (By identity: equal code objects from two files compare equal.)"""

    def __init__(self):
        self._entries = {}   # id(code) -> (weakref to the code, _Converted)

    def get(self, code):
        found = self._entries.get(id(code))
        if found is not None and found[0]() is code:
            return found[1]
        return None

    def setdefault(self, code, entry):
        with _lock:
            found = self.get(code)
            if found is not None:
                return found
            ref = weakref.ref(code, functools.partial(self._drop, id(code)))
            self._entries[id(code)] = (ref, entry)
            return entry

    def _drop(self, key, ref):
        if _lock is None:   # interpreter shutdown: module globals are already gone
            return
        with _lock:
            found = self._entries.get(key)
            if found is not None and found[0] is ref:
                del self._entries[key]

    def clear(self):
        with _lock:
            self._entries.clear()

    def __len__(self):
        return len(self._entries)


_by_code = _CodeCache()                # user's code object -> _Converted
_unconvertible = weakref.WeakSet()     # functions without source: called as they are

# The converted version of a function is kept in the function's own __dict__: it holds the
# function (its closure cells, `__autograph_original__`), so a cache outside the function
# would keep every converted function alive forever; inside, both die together. Stored
# with the function's id, so that a wrapper that copies __dict__ (functools.wraps) does not
# take it for its own.
_CONVERTED = "__autograph_converted__"


class _Converted:
    """One conversion of a code object: the generated code object (with the names of its
    free variables that are autograph's own, and their cells), its source text and the
    filename it is registered under. It holds no user function, globals or closure: each
    function made from the code gets its own (see _rebind)."""

    def __init__(self, code, cells, source, filename):
        self.code, self.cells, self.source, self.filename = code, cells, source, filename


# -- conversion ---------------------------------------------------------------------------

def do_not_convert(func=None):
    """Mark `func` so that converted code calls it as it is (usable as a decorator)."""
    if func is None:
        return do_not_convert
    try:
        setattr(func, _DO_NOT_CONVERT, True)
        return func
    except (AttributeError, TypeError):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        setattr(wrapper, _DO_NOT_CONVERT, True)
        return wrapper


def _python_function(f):
    """The plain Python function behind `f` (an ag.function Function, a method, ...)."""
    inner = getattr(f, "python_function", None)
    if inner is not None and not isinstance(f, types.FunctionType):
        return inner
    return f


def _convert_code(fn):
    """Convert `fn` (a plain function or lambda); cached per code object."""
    entry = _by_code.get(fn.__code__)
    if entry is not None:
        return entry
    from autograph.source import disk_cache
    key = disk_cache.key(fn) if disk_cache.directory() is not None else None
    record = disk_cache.load(key) if key is not None else None
    if record is not None:   # converted by an earlier process: no parsing, no passes
        new_fn, source, filename = _load_record(record, fn)
        config.log(1, "converted %s (from the disk cache)", fn.__qualname__)
    else:
        from autograph import converters
        from autograph.source import loader, parser
        node, text, info = parser.parse_entity(fn)
        ctx = converters.Context(fn, node, info, source=text)
        node = converters.convert(node, ctx)
        record = {} if key is not None else None
        new_fn, source, filename = loader.load(node, fn, {"ag__": operators},
                                               generated=ctx.namer.generated, record=record)
        if key is not None:
            disk_cache.store(key, record)
        config.log(1, "converted %s (%s:%s)", fn.__qualname__, info.filename, info.lineno)
    config.log(2, "generated code of %s:\n%s", fn.__qualname__, source)
    own = set(fn.__code__.co_freevars)
    code = new_fn.__code__
    cells = {name: cell for name, cell in zip(code.co_freevars, new_fn.__closure__ or ())
             if name not in own}
    return _by_code.setdefault(fn.__code__, _Converted(code, cells, source, filename))


def _load_record(record, fn):
    """(function, source, filename) from a disk-cache record (what loader.load returns)."""
    from autograph.source import disk_cache, origin
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells["ag__"] = types.CellType(operators)
    filename = origin._filename_for(fn)
    new_fn = origin.make_function(record["module_text"], fn, cells, record["inner_name"],
                                   record["cls"], record["generated"], filename, record["flags"],
                                   lambda: disk_cache.origin_map(record))
    return new_fn, record["source_text"], filename


def _rebind(entry, fn):
    """The converted code of `entry` as a function of `fn`'s globals, defaults and closure
    (what the loader makes for the function it converts)."""
    from autograph.source import origin
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    code = entry.code
    return origin.function_for(
        code, fn, tuple(own[v] if v in own else entry.cells[v] for v in code.co_freevars))


def _cached(f):
    """The converted version of plain function `f` made before, or None."""
    found = f.__dict__.get(_CONVERTED)
    if found is not None and found[0] == id(f):
        return found[1]
    return None


def _remember(f, converted):
    f.__dict__[_CONVERTED] = (id(f), converted)
    return converted


def _entry_point(generated):
    """Wrap the generated function so errors escaping it name the user's lines first.
    `__wrapped__` keeps inspect.getsource (and pdb) on the generated code."""
    from autograph.source import origin

    @functools.wraps(generated)
    def converted(*args, **kwargs):
        with origin.user_frames():
            return generated(*args, **kwargs)

    converted.__autograph_generated__ = generated
    return converted


def _generator_entry_point(gen_fn):
    """A generator runs as Python (its `yield`s cannot become graph nodes). If it meets a
    tensor condition, say so at its line instead of a bare "cannot use a tensor as bool"."""
    from autograph.runtime.ir.tensor import SymbolicTensorError

    @functools.wraps(gen_fn)
    def generator(*args, **kwargs):
        try:
            return (yield from gen_fn(*args, **kwargs))
        except SymbolicTensorError as exc:
            tb, line = exc.__traceback__, None
            while tb is not None:
                if tb.tb_frame.f_code is gen_fn.__code__:
                    line = tb.tb_lineno
                tb = tb.tb_next
            where = f" at {gen_fn.__code__.co_filename}:{line}" if line else ""
            raise errors.StagingError(
                f"The generator {gen_fn.__qualname__}{where} uses a tensor where Python needs a "
                f"value (e.g. in an `if` or `while`). Generators run as plain Python: their "
                f"`yield` cannot become part of a graph, so their control flow cannot depend "
                f"on tensors. Compute the values with array operations (np.where, ag.cond), or "
                f"write a function that returns them instead of yielding. ({exc})") from exc

    return generator


def _is_generator(fn):
    return bool(fn.__code__.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                                        inspect.CO_ASYNC_GENERATOR))


def to_graph(f):
    """The converted version of function `f` (a function, method, lambda or ag.function):
    same signature, with Python control flow that builds graph nodes when it meets tensors."""
    f = _python_function(f)
    if isinstance(f, types.MethodType):
        return types.MethodType(to_graph(f.__func__), f.__self__)
    if isinstance(f, functools.partial):
        return functools.partial(to_graph(f.func), *f.args, **f.keywords)
    if not isinstance(f, types.FunctionType):
        call = getattr(type(f), "__call__", None)
        if isinstance(call, types.FunctionType):
            return types.MethodType(to_graph(call), f)
        raise errors.ConversionError(
            f"autograph can only convert Python functions, methods and lambdas, not "
            f"{type(f).__name__} {f!r}. Call it from a converted function instead; it runs "
            f"as it is.")
    cached = _cached(f)
    if cached is not None:
        return cached
    if _is_generator(f):
        config.log(1, "%s is a generator or coroutine: not converted", f.__qualname__)
        return _remember(f, _generator_entry_point(f) if inspect.isgeneratorfunction(f) else f)
    entry = _convert_code(f)
    return _remember(f, _entry_point(_rebind(entry, f)))


def to_code(f):
    """The generated source of `f` (a function or an ag.function Function), as text."""
    f = _python_function(f)
    if isinstance(f, types.MethodType):
        f = f.__func__
    if not isinstance(f, types.FunctionType):
        call = getattr(type(f), "__call__", None)
        if isinstance(call, types.FunctionType):
            f = call
    if not isinstance(f, types.FunctionType):
        raise errors.ConversionError(
            f"to_code needs a Python function, method or ag.function, not {type(f).__name__}.")
    return _convert_code(f).source


# -- converted_call -----------------------------------------------------------------------

def _is_generated_code(fn):
    from autograph.source import origin
    return origin.is_generated(fn.__code__.co_filename)


def _should_convert(fn):
    if getattr(fn, _DO_NOT_CONVERT, False) or getattr(fn, "__autograph_original__", None):
        return False
    if _is_generated_code(fn):
        return False
    return not is_library(fn)


def _target(f):
    """What to call for `f`: its converted version, or None to call `f` as it is."""
    if getattr(f, _DO_NOT_CONVERT, False):
        return None
    if isinstance(f, types.FunctionType):
        cached = _cached(f)
        if cached is not None:
            return cached
        if f in _unconvertible:
            return None
        return to_graph(f) if _should_convert(f) else None
    if isinstance(f, types.MethodType):
        func = f.__func__
        if func in _unconvertible:
            return None
        if isinstance(func, types.FunctionType) and _should_convert(func):
            return types.MethodType(to_graph(func), f.__self__)
        return None
    if isinstance(f, functools.partial):
        inner = _target(f.func)
        return None if inner is None else functools.partial(inner, *f.args, **f.keywords)
    if isinstance(f, type) or hasattr(f, "python_function"):
        return None  # classes are instantiated as they are; ag.functions trace themselves
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType) and _should_convert(call):
        return types.MethodType(to_graph(call), f)
    return None


def converted_call(f, *args, **kwargs):
    """Call `f(*args, **kwargs)`, converting `f` first when it is user code (what converted
    code calls: builtins passed as values and NumPy functions get their meaning on tensors
    in autograph.operators.calls, which forwards everything else to `_call`)."""
    return calls.converted_call(f, *args, **kwargs)


def _call(f, args, kwargs):
    try:
        target = _target(f)
    except errors.ConversionError as exc:
        # no source (REPL, C extension, exec'd code): run it as Python, as TensorFlow does,
        # and say so once (a later error about a tensor in it says why, too)
        config.log(1, "calling %r unconverted: %s", f, exc)
        inner = getattr(f, "__func__", f)
        if isinstance(inner, types.FunctionType):
            _unconvertible.add(inner)  # remembered: later calls skip the attempt
            from autograph.operators import unconverted
            unconverted.warn(inner, exc, stacklevel=4)
        target = None
    if target is None:
        return f(*args, **kwargs)
    return target(*args, **kwargs)


calls.set_call_handler(_call)
