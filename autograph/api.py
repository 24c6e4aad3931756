"""The compiler's entry points: to_graph, to_code, do_not_convert, converted_call.

    converted = ag.to_graph(collatz)    # a Python function whose control flow stages on tensors
    print(ag.to_code(collatz))          # the generated source (a teaching artefact)

Conversion parses the function (autograph.source.parser), runs the converter passes
(autograph.converters) and loads the result (autograph.source.loader) bound to the user's
own globals and closure cells. It is cached per code object: another function made from the
same code (a lambda or nested def created again) reuses the compiled code with its own
closure. Library code (NumPy, the standard library, installed packages, autograph itself)
is never converted; neither is anything marked with `do_not_convert`.
"""

import functools
import inspect
import threading
import types
import weakref

from autograph import errors, log, operators
from autograph.converters.library import is_library  # noqa: F401  (part of the API)
from autograph.operators import calls

_DO_NOT_CONVERT = "__autograph_do_not_convert__"
_lock = threading.RLock()
_by_code = {}                          # (code object, filename) -> _Converted
_by_function = weakref.WeakKeyDictionary()  # function -> converted entry point
_unconvertible = weakref.WeakSet()     # functions without source: called as they are


class _Converted:
    """One conversion of a code object: the loaded function and its source text."""

    def __init__(self, fn, source, filename):
        self.fn, self.source, self.filename = fn, source, filename


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
    # equal code objects from two files compare equal: the file is part of the key
    code = (fn.__code__, fn.__code__.co_filename)
    with _lock:
        entry = _by_code.get(code)
        if entry is not None:
            return entry
    from autograph import converters
    from autograph.source import loader, parser
    node, _, info = parser.parse_entity(fn)
    ctx = converters.Context(fn, node, info)
    node = converters.convert(node, ctx)
    new_fn, source, filename = loader.load(node, fn, {"ag__": operators})
    log.log(1, "converted %s (%s:%s)", fn.__qualname__, info.filename, info.lineno)
    log.log(2, "generated code of %s:\n%s", fn.__qualname__, source)
    entry = _Converted(new_fn, source, filename)
    with _lock:
        _by_code.setdefault(code, entry)
    return entry


def _rebind(entry, fn):
    """The converted code of `entry` with the globals, defaults and closure of `fn`."""
    template = entry.fn
    if template.__autograph_original__ is fn:
        return template
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    theirs = dict(zip(template.__code__.co_freevars, template.__closure__ or ()))
    cells = tuple(own.get(v, theirs.get(v)) for v in template.__code__.co_freevars)
    new = types.FunctionType(template.__code__, fn.__globals__, fn.__name__, fn.__defaults__, cells)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__doc__ = fn.__doc__
    new.__module__ = fn.__module__
    new.__autograph_original__ = fn
    return new


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
    from autograph.runtime.tensor import SymbolicTensorError

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
    cached = _by_function.get(f)
    if cached is not None:
        return cached
    if _is_generator(f):
        log.log(1, "%s is a generator or coroutine: not converted", f.__qualname__)
        converted = _generator_entry_point(f) if inspect.isgeneratorfunction(f) else f
        _by_function[f] = converted
        return converted
    entry = _convert_code(f)
    converted = _entry_point(_rebind(entry, f))
    _by_function[f] = converted
    return converted


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
        cached = _by_function.get(f)
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
        # no source (REPL, C extension, exec'd code): run it as Python, as TensorFlow does
        log.log(1, "calling %r unconverted: %s", f, exc)
        inner = getattr(f, "__func__", f)
        if isinstance(inner, types.FunctionType):
            _unconvertible.add(inner)  # remembered: later calls skip the attempt
        target = None
    if target is None:
        return f(*args, **kwargs)
    return target(*args, **kwargs)


calls.set_call_handler(_call)
