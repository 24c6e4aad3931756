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

`check_numerics(True)` makes every graph stop at the first operation that makes a NaN or an
infinity, naming it, the user's line and the loop iteration (autograph.runtime.exec.numerics);
off by default, when the generated code holds no check at all.

`flush_denormals(True)` makes the calling thread's floating-point unit flush subnormal
floats to zero (FTZ and DAZ, as XLA and TensorFlow run their computations): a recurrence
that decays into numbers below 2.2e-308 (1.2e-38 in float32) stops paying the CPU's 10-100x
slow path for them. Off by default, since results change (those tiny numbers become 0.0);
it applies to everything the thread computes, NumPy included, until `flush_denormals(False)`;
used as `with ag.config.flush_denormals(True):` it restores the previous mode on exit. See
autograph.runtime.fpu and docs/performance.md.

Logging of what autograph does, conversions and traces (`set_verbosity`, `log`; the module
autograph.log names them too), lives here so that a first call loads one module for both.
Verbosity 0 (the default) is silent; 1 logs each conversion and trace; 2 also logs the
generated code and graph sizes; 3 and up logs everything. Set it with the environment
variable AUTOGRAPH_VERBOSITY or `ag.set_verbosity(level)`. Messages go to the standard
`logging` logger named "autograph" (stderr when nothing else is configured).
"""

import os
import sys
import _thread

# The call fast paths' process-wide flag: one entry per open device scope and per graph
# being built, in any thread, plus one while run_functions_eagerly(True) is set. A steady-
# state ag.function call may skip binding and tracing only when, on its thread, no device
# scope is open, no graph is being built and functions do not run eagerly; asking the two
# thread-local stacks and the eager flag costs ~140 ns a call, testing this list ~10. Those
# places append on entry and pop on exit (list.append/pop are atomic; the entries are all
# alike, so which one a pop removes does not matter). While it is empty no thread can be in
# a scope or a trace, so the fast path runs at once; while it is not, the fast path asks
# the calling thread's own state exactly, as before (correct, ~130 ns slower meanwhile).
_busy = []
_lock = _thread.allocate_lock()

_run_functions_eagerly = False
_show_internal_frames = (os.environ.get("AUTOGRAPH_TRACEBACK", "").lower() in ("full", "off", "1")
                         or os.environ.get("AUTOGRAPH_FULL_TRACEBACKS", "") not in ("", "0"))


def run_functions_eagerly(run_eagerly):
    """Make every ag.function run its Python function directly (True) or traced (False)."""
    global _run_functions_eagerly
    with _lock:
        if run_eagerly and not _run_functions_eagerly:   # one _busy entry while it is on
            _busy.append(None)
        elif not run_eagerly and _run_functions_eagerly:
            _busy.pop()
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


class _FlushMode:
    """What flush_denormals returns: the switch is already set; as a context manager it
    puts back the mode the thread had before, on exit."""

    def __init__(self, saved):
        self._saved = saved

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        from autograph.runtime import fpu
        fpu.restore(self._saved)
        return False


def flush_denormals(enabled):
    """Flush subnormal floats to zero in this thread (True) or compute with them exactly
    (False, NumPy's and the hardware's default). Returns a context manager that restores the
    previous mode. Raises NotImplementedError where the platform offers no such mode."""
    from autograph.runtime import fpu
    saved = fpu.save()
    fpu.set_flush(bool(enabled))
    return _FlushMode(saved)


class _Restore:
    """What check_numerics returns: the switch is already set; as a context manager it puts
    back the previous setting on exit."""

    def __init__(self, setter, saved):
        self._setter, self._saved = setter, saved

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._setter(self._saved)
        return False


_check_numerics = False


def check_numerics(enabled):
    """Stop at the first operation of a running graph that makes a NaN or an infinity
    (True), raising `ag.errors.NonFiniteError` (a FloatingPointError) that names the
    operation, your line and, inside loops, the iteration; or run unchecked (False, the
    default: the check is then not in the generated code at all). Graphs compiled before
    are compiled again, once, for the other mode (a jit_compile=True function runs the
    checked generated code while it is on). Code that runs no graph (a function called
    under run_functions_eagerly, a Dataset's map/filter function run by the host) is
    checked too: NumPy raises at the operation that makes a NaN or an infinity from finite
    values, and an argument holding one raises at the first operation computing with it, as
    in the graph (autograph.runtime.exec.eager_numerics). Returns a context manager that
    restores the previous setting. See autograph.runtime.exec.numerics."""
    global _check_numerics
    saved = _check_numerics
    with _lock:
        # the call fast paths skip their checks while _busy is empty: one entry while on
        # makes them ask (function._calm), so a call never runs the unchecked code
        if enabled and not _check_numerics:
            _busy.append(None)
        elif not enabled and _check_numerics:
            _busy.pop()
        _check_numerics = bool(enabled)
    return _Restore(check_numerics, saved)


def numerics_checked():
    """Whether graphs check their floating-point results (see check_numerics)."""
    return _check_numerics


def denormals_flushed():
    """Whether this thread flushes subnormal floats to zero (see flush_denormals)."""
    from autograph.runtime import fpu
    return fpu.supported() and fpu.flushing()


# -- logging -------------------------------------------------------------------------------

try:
    _verbosity = int(os.environ.get("AUTOGRAPH_VERBOSITY", "0"))
except ValueError:
    _verbosity = 0


def _logger():
    import logging
    return logging.getLogger("autograph")


def set_verbosity(level, alsologtostdout=False):
    """Log conversions and traces from now on (0 silences; higher is chattier)."""
    global _verbosity
    _verbosity = int(level)
    if alsologtostdout:
        import logging
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("autograph: %(message)s"))
        _logger().addHandler(handler)


def get_verbosity():
    return _verbosity


def log(level, msg, *args):
    """Log `msg % args` if the verbosity is at least `level` (cheap when it is not)."""
    if _verbosity >= level:
        import logging
        logger = _logger()
        if not logger.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("autograph: %(message)s"))
            logger.addHandler(handler)
            logger.propagate = False
        logger.setLevel(logging.DEBUG)
        logger.info(msg, *args)
