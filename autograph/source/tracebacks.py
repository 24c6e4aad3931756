"""Errors that escape converted code, told in the user's terms (see autograph.source.origin,
which imports this module when an exception first passes through converted code).

`rewrite_traceback(exc)` adds a note listing the user's frames (file, line, source line),
mapped from generated code through the origin maps, and drops autograph's own internal
frames; `user_traceback(exc)` makes the traceback itself the user's view, at the public
entry points.
"""

import linecache
import os
import types

from autograph import config, errors, frames
from autograph.source.origin import (_PACKAGE_DIR, LineLocation, _ensure_linecache, _registry,
                                     is_generated, lookup)

_is_library = frames.is_library   # the standard library and installed packages (NumPy, ...)


def _is_internal(filename):
    """True for autograph's own modules and generated glue (not generated code that maps to
    the user's lines; tests and examples live outside the package directory)."""
    return filename.startswith(frames.GLUE_PREFIX) or (
        filename not in _registry and os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep))


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
    unless ag.config.show_internal_frames(True) (or AUTOGRAPH_TRACEBACK=full) asks to keep
    them, drops autograph's internal frames from the traceback. Exceptions that never passed through generated code are
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
    if not config.internal_frames_shown() and tb is not None:
        own_error = isinstance(exc, errors.AutographError)
        exc.__traceback__ = _strip_internal(tb, keep_innermost=not own_error)
        _strip_chained(exc)
    return exc


def _strip_chained(exc):
    """Drop internal frames from the exceptions `exc` was raised from or during (printed
    above it), when they passed through generated code too."""
    for e in _chained(exc):
        if e.__traceback__ is not None and user_frames_of(e.__traceback__):
            e.__traceback__ = _strip_internal(e.__traceback__)


def _chained(exc):
    """The exceptions `exc` was raised from or during (its __cause__ / __context__ chain,
    each once)."""
    seen = {id(exc)}
    todo = [exc.__cause__, exc.__context__]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        todo += [e.__cause__, e.__context__]


# -- tracebacks at the public entry points -----------------------------------------------------
#
# An error leaving `ag.function` (a call, a trace, a run of the graph) is shown as if the
# user's code had run as plain Python: the traceback starts at the user's call, each frame of
# converted code is the user's own line (mapped through the origin map), the failing node of a
# running graph is the user's line that made it, and autograph's own frames are gone.
# Python frames can only be made by running code, so a user's line is a tiny code object
# compiled under the user's file name at that line, run once to get a frame.

class _Marker(Exception):
    pass


def _fake_source(lineno, text):
    """Source whose line `lineno` raises `ag_exc_` with a `raise` spanning the user's line
    `text` (column for column, so that tracebacks draw no carets under the user's code)."""
    stripped = text.strip()
    indent = len(text.rstrip()) - len(stripped)
    statement = "raise (ag_exc_" + " " * max(0, len(stripped) - 15) + ")"
    if len(statement) > len(stripped):   # a short line: two lines, from one column earlier
        indent = max(0, indent - 1)
        statement = "raise (\nag_exc_)"
    if indent and lineno > 1:            # indented: inside an `if 1:` on the line above
        return "\n" * (lineno - 2) + "if 1:\n" + " " * indent + statement
    return "\n" * (lineno - 1) + statement


def _user_line_tb(loc, tb_next, f_locals=None):
    """A traceback entry (in front of `tb_next`) for the user's `loc` (a LineLocation),
    whose frame's namespace holds `f_locals` (the converted frame's variables, for pdb)."""
    filename, lineno, _, text, function_name = loc
    try:
        code = compile(_fake_source(lineno, text or ""), filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return tb_next
    name = function_name or "<module>"
    code = code.replace(co_name=name, co_qualname=name)
    namespace = dict(f_locals or {})
    namespace["ag_exc_"] = _Marker()
    try:
        exec(code, namespace)
    except _Marker as marker:
        fake = marker.__traceback__.tb_next
        if fake is not None:
            return types.TracebackType(tb_next, fake.tb_frame, fake.tb_lasti, fake.tb_lineno)
    return tb_next


def _is_codegen(filename):
    return filename.startswith(frames.CODEGEN_PREFIX)


def _user_view(exc, tb):
    """Traceback chain `tb` of `exc` as the user's code: see the comment above."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    run_origin = getattr(exc, "_autograph_origin", None)
    kept = []          # (traceback entry, None) or (None, (LineLocation, locals))
    last_loc = None
    for t in entries:
        filename = t.tb_frame.f_code.co_filename
        loc, f_locals = None, None
        if filename in _registry:                       # converted code: the user's line
            loc = lookup(filename, t.tb_lineno)
            f_locals = t.tb_frame.f_locals
            _ensure_linecache(filename)
        elif _is_codegen(filename):                     # a running graph: the failing node's
            if run_origin is not None and t is _innermost_of(entries, filename):
                loc = errors.origin_location(run_origin)
        elif not _is_internal(filename):
            kept.append((t, None))
            last_loc = None
            continue
        if loc is not None and loc != last_loc:         # (a lambda on one line: once)
            kept.append((None, (loc, f_locals)))
            last_loc = loc
    new_tb = None
    for t, user in reversed(kept):
        if t is not None:
            new_tb = types.TracebackType(new_tb, t.tb_frame, t.tb_lasti, t.tb_lineno)
        else:
            new_tb = _user_line_tb(user[0], new_tb, user[1])
    return new_tb


def _innermost_of(entries, filename):
    found = None
    for t in entries:
        if t.tb_frame.f_code.co_filename == filename:
            found = t
    return found


def user_traceback(exc):
    """At autograph's public entry points (`ag.function` calls and traces): make `exc`
    speak of the user's code only, in place, and return it. With
    ag.config.show_internal_frames(True) it gets rewrite_traceback's note instead and keeps
    every frame. Safe to call again as the exception travels outwards."""
    if config.internal_frames_shown():
        return rewrite_traceback(exc)
    if exc.__traceback__ is None:
        return exc
    # the frames now show the user's lines: the note listing them would repeat them
    note = getattr(exc, "_autograph_note", None)
    notes = getattr(exc, "__notes__", None)
    if note is not None and isinstance(notes, list) and note in notes:
        notes.remove(note)
    try:
        exc.__traceback__ = _user_view(exc, exc.__traceback__)
    except Exception:   # never let the rewrite hide the user's error
        return exc
    _drop_internal_context(exc)
    for e in _chained(exc):
        if e.__traceback__ is not None:
            try:
                e.__traceback__ = _user_view(e, e.__traceback__)
            except Exception:
                pass
    return exc


def _is_bookkeeping(e):
    """An exception autograph raises and catches for itself (a private class of its own,
    such as the trace cache's 'not kept' signal): never the user's business."""
    cls = type(e)
    return cls.__name__.startswith("_") and cls.__module__.split(".")[0] == "autograph"


def _drop_internal_context(exc):
    """Unlink autograph's bookkeeping exceptions from the chain of what `exc` was raised
    during (Python prints it as 'During handling of the above exception...'): user code
    that fails while autograph handles one of them did not fail because of it."""
    e, seen = exc, set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        ctx = e.__context__
        while ctx is not None and _is_bookkeeping(ctx) and ctx is not e.__cause__:
            ctx = ctx.__context__
        if ctx is not e.__context__:
            e.__context__ = ctx
        e = ctx
