"""Where generated code came from, and errors that point at the user's code.

The loader registers an origin map for each generated file: generated line -> the
`LineLocation` (file, line, column, source line, function name) of the user's code it was
generated from. With it:

- `lookup(filename, lineno)` maps one generated line back to the user's code;
- `user_location()` finds the innermost frame of generated code on the current stack and
  returns the user's location it runs (the operators use it to put file and line into
  StagingErrors);
- `rewrite_traceback(exc)` (and the context manager `user_frames()`) make an exception that
  escapes converted code speak of the user's code: a note lists the user's frames (file,
  line, source line) and autograph's own internal frames are dropped from the traceback.
  That part lives in autograph.source.tracebacks, imported when an error first needs it
  (its names are reachable here too).

Also here (`make_function`): binding generated module text to the user's function as the
loader and the disk cache (autograph.source.disk_cache) both do, without gast or the passes.
(One module, not two: a first call in a fresh process loads both, and pays per module.)
"""

import functools
import inspect
import itertools
import linecache
import os
import sys
import _thread
import types
import weakref

from autograph import errors, frames


class LineLocation(tuple):
    """A place in the user's source: (filename, lineno, col_offset, source_line,
    function_name), a tuple with named fields. `source_line` is the text of that line
    (unstripped). (Written out, not a collections.namedtuple: making one costs every fresh
    process's first call.)"""

    __slots__ = ()
    _fields = ("filename", "lineno", "col_offset", "source_line", "function_name")

    def __new__(cls, filename, lineno, col_offset, source_line, function_name):
        return tuple.__new__(cls, (filename, lineno, col_offset, source_line, function_name))

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self):
        return "LineLocation(" + ", ".join(f"{f}={v!r}" for f, v in zip(self._fields, self)) + ")"

    def _replace(self, **changes):
        return LineLocation(*[changes.pop(f, v) for f, v in zip(self._fields, self)])

    filename = property(lambda self: self[0], doc="the user's file")
    lineno = property(lambda self: self[1], doc="1-based line in that file")
    col_offset = property(lambda self: self[2], doc="0-based column")
    source_line = property(lambda self: self[3], doc="the line's text")
    function_name = property(lambda self: self[4], doc="the enclosing function's name")

    def format(self):
        """Two lines in the style of a traceback entry."""
        text = f'  File "{self.filename}", line {self.lineno}, in {self.function_name}'
        if self.source_line and self.source_line.strip():
            text += "\n    " + self.source_line.strip()
        return text

    def __str__(self):
        return f"{self.filename}:{self.lineno}"


class OriginMap:
    """The origin map of one generated file: its text and generated line -> LineLocation.

    `lines` may be a callable that builds the mapping: it is then built on first use (an
    error, a traceback, `user_location()`), not when the file is loaded, since most
    converted functions never need it and building it is a sizable part of conversion."""

    def __init__(self, filename, source, lines):
        self.filename = filename
        self.source = source
        self._build = lines if callable(lines) else None
        self._lines = None if callable(lines) else dict(lines)

    @property
    def lines(self):
        if self._lines is None:
            build, self._build = self._build, None
            try:
                self._lines = dict(build()) if build is not None else {}
            except Exception:  # never let a mapping failure hide the user's error
                self._lines = {}
        return self._lines

    def __getitem__(self, lineno):
        return self.lines[lineno]

    def get(self, lineno, default=None):
        return self.lines.get(lineno, default)

    def __repr__(self):
        state = f"{len(self._lines)} lines" if self._lines is not None else "not built yet"
        return f"OriginMap({self.filename!r}, {state})"


_registry = {}
_lock = _thread.RLock()   # reentrant: unregister runs from GC callbacks

# Frames of this directory are autograph's machinery; tracebacks hide them unless
# ag.config.show_internal_frames(True) (or AUTOGRAPH_TRACEBACK=full) asks to keep them.
_PACKAGE_DIR = frames.PACKAGE_DIR


def register(filename, source, line_map):
    """Record the generated `source` under `filename`: in linecache (so tracebacks,
    inspect.getsource and pdb show it) and with its origin map (a dict, or a callable
    returning one, called on first use). Returns the OriginMap."""
    omap = OriginMap(filename, source, line_map)
    with _lock:
        _registry[filename] = omap
    _ensure_linecache(filename)
    return omap


def unregister(filename):
    """Forget a generated file (its code is gone): its origin map and its linecache text."""
    with _lock:
        omap = _registry.pop(filename, None)
    entry = linecache.cache.get(filename)
    if omap is not None and entry is not None and entry[1] is None:
        linecache.cache.pop(filename, None)


def _ensure_linecache(filename):
    omap = _registry.get(filename)
    if omap is None:
        return
    if filename not in linecache.cache:
        lines = omap.source.splitlines(keepends=True)
        # mtime None: linecache.checkcache leaves the entry alone (there is no file).
        linecache.cache[filename] = (len(omap.source), None, lines, filename)


def origin_map(filename):
    """The OriginMap registered for a generated file, or None."""
    return _registry.get(filename)


def is_generated(filename):
    return filename in _registry


def lookup(filename, lineno):
    """The user's LineLocation for line `lineno` of generated file `filename`, or None
    (not a generated file, or a line made only of generated scaffolding)."""
    omap = _registry.get(filename)
    return None if omap is None else omap.get(lineno)


def user_location(frame=None):
    """The user's LineLocation of the innermost frame running generated code on the
    current stack (starting at `frame`, default the caller's), or None outside converted code."""
    frame = frame if frame is not None else sys._getframe(1)
    while frame is not None:
        loc = lookup(frame.f_code.co_filename, frame.f_lineno)
        if loc is not None:
            return loc
        frame = frame.f_back
    return None


def boundary(fn):
    """Decorator for autograph's entry points (e.g. Function.__call__): an exception that
    passed through converted code leaves with the user's frames in a note and without the
    internal frames between this boundary and the error."""
    @functools.wraps(fn)
    def api_boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            _rewrite(exc)
            raise
    return api_boundary


class user_frames:
    """Re-raise any exception escaping the block with the user's frames in front:
        with origin.user_frames():
            return converted_fn(*args)
    Use it at the outermost boundary too (e.g. around a traced call): the internal frames
    between the boundary and the error are only known there.
    (A class, not @contextmanager: contextlib restores the original traceback.)"""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and not isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            _rewrite(exc)
        return False  # the exception goes on, with the rewritten traceback


def _tracebacks():
    from autograph.source import tracebacks
    return tracebacks


def _rewrite(exc, how="rewrite_traceback"):
    """tracebacks.<how>(exc), unless the stack is too deep for it: a RecursionError's
    handlers run at the recursion limit, where importing tracebacks (its first use) or
    walking frames would raise a RecursionError of its own, chained to importlib's
    internal KeyError, in place of the user's. Then `exc` goes on as it is."""
    try:
        return getattr(_tracebacks(), how)(exc)
    except RecursionError:
        return exc


def user_traceback(exc):
    """tracebacks.user_traceback(exc), leaving `exc` as it is at the recursion limit."""
    return _rewrite(exc, "user_traceback")


def rewrite_traceback(exc):
    """tracebacks.rewrite_traceback(exc), leaving `exc` as it is at the recursion limit."""
    return _rewrite(exc)


# what autograph.source.tracebacks does, under the names it had here
_TRACEBACK_NAMES = frozenset({
    "user_frames_of", "format_note", "_NOTE_HEADER",
    "_strip_internal", "_strip_chained", "_is_internal", "_is_library", "_user_view",
    "_user_line_tb", "_fake_source", "_innermost_of", "_is_codegen", "_Marker"})


def __getattr__(name):
    if name in _TRACEBACK_NAMES:
        return getattr(_tracebacks(), name)
    raise AttributeError(f"module 'autograph.source.origin' has no attribute {name!r}")


# -- binding generated code to the user's function -------------------------------------------

_FACTORY = "__autograph_factory"
_counter = itertools.count(1)
_names_lock = _thread.RLock()   # reentrant: _forget runs from GC callbacks
_used_filenames = set()


def _short_path(path):
    return _short_path_from(path, os.getcwd())


@functools.lru_cache(maxsize=256)
def _short_path_from(path, cwd):
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive on Windows
        return path
    return path if rel.startswith(".." + os.sep + "..") else rel


def _filename_for(fn):
    code = fn.__code__
    base = f"<autograph: {fn.__qualname__} at {_short_path(code.co_filename)}:{code.co_firstlineno}"
    with _names_lock:
        name = base + ">"
        while name in _used_filenames:
            name = f"{base} #{next(_counter)}>"
        _used_filenames.add(name)
    if frames.is_package_file(code.co_filename):
        frames.mark_internal(name)
    return name


def _forget(filename):
    unregister(filename)
    frames._internal_converted.discard(filename)
    with _names_lock:
        _used_filenames.discard(filename)


def _find_code(code, name):
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name:
            return const
    raise AssertionError(f"no code object {name!r} in {code.co_name}")


def _requalify(code, old, new, generated):
    """`code` with the qualified names of the functions and classes nested in it as Python
    gave them in the original: under `new` (the user's `Outer.make`) instead of `old` (what
    compiling inside the factory gave), without the `if_true.<locals>` of generated
    functions (`generated`: their names) a def or class was moved into."""
    consts = list(code.co_consts)
    changed = False
    for i, const in enumerate(consts):
        if isinstance(const, types.CodeType):
            fixed = _requalify(const, old, new, generated)
            if fixed is not const:
                consts[i], changed = fixed, True
    qualname = code.co_qualname
    if qualname == old or qualname.startswith(old + "."):
        parts = qualname[len(old):].split(".")[1:]
        kept = []
        for part in parts:
            if part == "<locals>" and kept and kept[-1] in generated:
                kept.pop()
                continue
            kept.append(part)
        qualname = ".".join([new] + kept)
    if qualname != code.co_qualname and not code.co_flags & inspect.CO_NEWLOCALS:
        # a class body: it stores its __qualname__ as a constant
        consts = [qualname if c == code.co_qualname and isinstance(c, str) else c
                  for c in consts]
        changed = True
    if not changed and qualname == code.co_qualname:
        return code
    return code.replace(co_consts=tuple(consts), co_qualname=qualname)


def function_for(code, fn, closure):
    """A function running `code` in place of `fn`: `fn`'s globals, name, defaults,
    annotations and attributes, with `closure` (cells in `code.co_freevars` order), and
    `__autograph_original__` naming `fn`."""
    new = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = dict(fn.__kwdefaults__) if fn.__kwdefaults__ else None
    new.__qualname__ = fn.__qualname__
    new.__doc__ = fn.__doc__
    new.__module__ = fn.__module__
    new.__annotations__ = dict(getattr(fn, "__annotations__", {}) or {})
    new.__dict__.update({k: v for k, v in fn.__dict__.items()
                         if k not in ("__wrapped__", "__autograph_converted__")})
    new.__autograph_original__ = fn
    return new


def make_function(module_text, fn, cells, inner_name, cls, generated, filename, flags, line_map):
    """The function `inner_name` defined by generated `module_text` (registered under
    `filename`, with origin map `line_map`: a dict or a callable making one), bound to
    `fn`'s globals and defaults and to `cells` (free variable name -> cell)."""
    try:
        module_code = compile(module_text, filename, "exec", flags=flags, dont_inherit=True)
    except SyntaxError as e:
        raise errors.ConversionError(
            f"internal: the converted code of {fn.__qualname__} does not compile: {e.msg} "
            f"(line {e.lineno} of {filename}):\n{module_text}") from e
    if cls is not None:
        module_code = _find_code(module_code, cls)
    factory_code = _find_code(module_code, _FACTORY)
    inner_code = _find_code(factory_code, inner_name)
    if hasattr(inner_code, "co_qualname"):   # Python 3.11+
        inner_code = _requalify(inner_code, inner_code.co_qualname, fn.__qualname__,
                                frozenset(generated))

    missing = [v for v in inner_code.co_freevars if v not in cells]
    if missing:
        raise errors.ConversionError(f"internal: no cell for free variables {missing}")
    new_fn = function_for(inner_code, fn, tuple(cells[v] for v in inner_code.co_freevars))

    register(filename, module_text, line_map)
    # the file's text, origin map (and the tree it is built from) and name live as long as
    # the generated code does (functions made from it, frames and tracebacks running it)
    weakref.finalize(inner_code, _forget, filename).atexit = False
    return new_fn
