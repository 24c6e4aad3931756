"""Global switches of autograph (`ag.config`).

`run_functions_eagerly(True)` makes every `ag.function` call its original Python function
instead of a traced graph: print statements run on every call, a debugger stops at the user's
lines, and exceptions come straight from the user's code. It is a debugging switch; turn it
off again to get graphs (and their speed) back.

`show_internal_frames(True)` keeps autograph's own frames in the tracebacks of errors that
leave an `ag.function` (by default they are hidden, and the frames of converted code and of
a running graph are shown as the user's own lines: a traceback starts at the user's call and
reads like one of plain Python). The environment variable AUTOGRAPH_TRACEBACK=full (or the
older AUTOGRAPH_FULL_TRACEBACKS=1) sets it at start-up: for reporting a bug in autograph, or
for a post-mortem debugger that should see the generated code's real frames.

`set_disk_cache(False)` stops keeping converted source on disk for later processes (see
autograph.source.disk_cache; the environment variable AUTOGRAPH_CACHE_DIR sets the place,
or turns it off with `off`).
"""

import os
import threading

from autograph.call_flag import BUSY

_lock = threading.Lock()

_run_functions_eagerly = False
_show_internal_frames = (os.environ.get("AUTOGRAPH_TRACEBACK", "").lower() in ("full", "off", "1")
                         or os.environ.get("AUTOGRAPH_FULL_TRACEBACKS", "") not in ("", "0"))


def run_functions_eagerly(run_eagerly):
    """Make every ag.function run its Python function directly (True) or traced (False)."""
    global _run_functions_eagerly
    with _lock:
        if run_eagerly and not _run_functions_eagerly:   # one BUSY entry while it is on
            BUSY.append(None)                             # (autograph.call_flag)
        elif not run_eagerly and _run_functions_eagerly:
            BUSY.pop()
        _run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    """Whether ag.function calls currently run the original Python (see run_functions_eagerly)."""
    return _run_functions_eagerly


def show_internal_frames(show):
    """Keep autograph's own frames (and the generated code's) in tracebacks (True), or hide
    them so that tracebacks show only the user's code (False, the default)."""
    global _show_internal_frames
    _show_internal_frames = bool(show)


def internal_frames_shown():
    """Whether tracebacks keep autograph's internal frames (see show_internal_frames)."""
    return _show_internal_frames


_disk_cache = True


def set_disk_cache(enabled):
    """Keep converted source on disk for later processes (True, the default) or not (False).
    See autograph.source.disk_cache; AUTOGRAPH_CACHE_DIR=off turns it off too."""
    global _disk_cache
    _disk_cache = bool(enabled)


def disk_cache_enabled():
    """Whether conversions are read from and written to the disk cache."""
    return _disk_cache
