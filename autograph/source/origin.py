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
"""

import collections
import functools
import linecache
import os
import sys
import sysconfig
import threading
import types

from autograph import errors


class LineLocation(collections.namedtuple(
        "LineLocation", ["filename", "lineno", "col_offset", "source_line", "function_name"])):
    """A place in the user's source. `source_line` is the text of that line (unstripped)."""

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
_lock = threading.RLock()   # reentrant: unregister runs from GC callbacks

# Frames of these directories are autograph's machinery; tracebacks hide them.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HIDE_INTERNAL_FRAMES = os.environ.get("AUTOGRAPH_FULL_TRACEBACKS", "") in ("", "0")


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


def _library_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.realpath(path) + os.sep)
    return tuple(sorted(dirs))


_LIBRARY_DIRS = _library_dirs()


def _is_library(filename):
    """True for the standard library and installed packages (NumPy, ...)."""
    return os.path.realpath(filename).startswith(_LIBRARY_DIRS) if filename[:1] != "<" else False


def _is_internal(filename):
    """True for autograph's own modules (not generated code; tests and examples live
    outside the package directory)."""
    return (filename not in _registry
            and os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep))


def user_frames_of(tb):
    """The user's view of traceback `tb`: a list of LineLocations, outermost first, of the
    frames from the first generated frame on; generated frames are mapped to the user's
    code, frames of autograph itself, the standard library and installed packages are left
    out, other frames (user helpers called from converted code) are kept as they are."""
    entries = []
    seen_generated = False
    while tb is not None:
        code = tb.tb_frame.f_code
        filename = code.co_filename
        loc = lookup(filename, tb.tb_lineno)
        if loc is not None:
            _ensure_linecache(filename)  # linecache.clearcache() may have dropped the text
            seen_generated = True
            if not entries or entries[-1] != loc:  # a lambda on the same line: once
                entries.append(loc)
        elif (seen_generated and not is_generated(filename) and not _is_internal(filename)
              and not _is_library(filename)):
            line = linecache.getline(filename, tb.tb_lineno, tb.tb_frame.f_globals)
            entries.append(LineLocation(filename, tb.tb_lineno, 0, line.rstrip("\n"),
                                        code.co_name))
        tb = tb.tb_next
    return entries


_NOTE_HEADER = "autograph: raised in converted code; in your source (most recent call last):"


def format_note(locations):
    return "\n".join([_NOTE_HEADER] + [loc.format() for loc in locations])


def _strip_internal(tb, keep_innermost=True):
    """A copy of traceback chain `tb` without autograph's internal frames. The innermost
    frame, where the exception was raised, is kept unless `keep_innermost` is False (for
    autograph's own errors, whose message already says what went wrong where)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = [t for i, t in enumerate(frames)
            if (keep_innermost and i == len(frames) - 1)
            or not _is_internal(t.tb_frame.f_code.co_filename)]
    if not kept:
        kept = frames[-1:]
    new_tb = None
    for t in reversed(kept):
        new_tb = types.TracebackType(new_tb, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return new_tb


def rewrite_traceback(exc):
    """Make `exc` speak of the user's code, in place, and return it.

    Adds (or refreshes) a note listing the user's frames, mapped from generated code, and,
    unless the environment sets AUTOGRAPH_FULL_TRACEBACKS=1, drops autograph's internal
    frames from the traceback. Exceptions that never passed through generated code are
    returned unchanged. Safe to call again as the exception travels outwards.
    """
    tb = exc.__traceback__
    locations = user_frames_of(tb)
    if not locations:
        return exc
    note = format_note(locations)
    notes = getattr(exc, "__notes__", None)
    old = getattr(exc, "_autograph_note", None)
    if isinstance(notes, list) and old is not None and old in notes:
        notes.remove(old)
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    elif isinstance(notes, list):  # before 3.11 notes are kept but not printed
        notes.append(note)
    else:
        try:
            exc.__notes__ = [note]
        except AttributeError:
            pass
    try:
        exc._autograph_note = note
    except AttributeError:  # exceptions with __slots__: the note is still there
        pass
    if HIDE_INTERNAL_FRAMES and tb is not None:
        own_error = isinstance(exc, errors.AutographError)
        exc.__traceback__ = _strip_internal(tb, keep_innermost=not own_error)
        _strip_chained(exc)
    return exc


def _strip_chained(exc):
    """Drop internal frames from the exceptions `exc` was raised from or during (printed
    above it), when they passed through generated code too."""
    seen = {id(exc)}
    todo = [exc.__cause__, exc.__context__]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if e.__traceback__ is not None and user_frames_of(e.__traceback__):
            e.__traceback__ = _strip_internal(e.__traceback__)
        todo += [e.__cause__, e.__context__]


def boundary(fn):
    """Decorator for autograph's entry points (e.g. Function.__call__): an exception that
    passed through converted code leaves with the user's frames in a note and without the
    internal frames between this boundary and the error."""
    @functools.wraps(fn)
    def api_boundary(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            rewrite_traceback(exc)
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
            rewrite_traceback(exc)
        return False  # the exception goes on, with the rewritten traceback
