"""Whose code a stack frame runs: autograph's own, a library's, or the user's.

Two things need the answer. While tracing, every graph node records the user's place that
made it (`user_position()`, the innermost frame of the user's code on the stack: converted
code or the user's own functions), so that an error raised when the graph runs, or a
tensor leaked out of its trace, can name the user's file and line. And tracebacks leaving
autograph's entry points hide autograph's own frames (autograph.source.origin).

Kept at the bottom of the package (it imports nothing of autograph): the runtime calls it.
"""

import _thread
import functools
import itertools
import linecache
import os
import sys
import types
import weakref

# autograph's own modules live here; tests, examples and user code live elsewhere
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
CODEGEN_PREFIX = "<autograph codegen"   # files of graphs compiled to Python (runtime.codegen)
# files of generated glue around native code (its runners, jit calls' entries): autograph's own
GLUE_PREFIX = "<autograph glue"


@functools.lru_cache(maxsize=None)
def library_dirs():
    """The standard library's and installed packages' folders, each ending in a separator:
    where os.py lives and site's package folders (both known without importing sysconfig
    and its platform data); sysconfig's paths when Python started without site."""
    paths = [os.path.dirname(os.__file__)]
    site = sys.modules.get("site")
    if site is not None and hasattr(site, "getsitepackages"):
        paths += site.getsitepackages()
    else:
        import sysconfig
        paths += [sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib",
                                                          "platlib")]
    return tuple(sorted({os.path.realpath(p) + os.sep for p in paths if p}))


def is_library(filename):
    """True for the standard library and installed packages (NumPy, ...)."""
    return os.path.realpath(filename).startswith(library_dirs()) if filename[:1] != "<" else False


def is_package_file(filename):
    """True for autograph's own modules (a real file inside the package directory)."""
    return filename[:1] != "<" and os.path.abspath(filename).startswith(PACKAGE_DIR + os.sep)


_internal_converted = set()   # converted code of autograph's own functions (ag.grad's wrapper)


def mark_internal(filename):
    """Converted code named `filename` is autograph's own (a wrapper that ag.function
    converts so that it converts the user's function it calls): not the user's place."""
    _internal_converted.add(filename)
    _user_files.pop(filename, None)


def _is_user(filename):
    if filename.startswith((CODEGEN_PREFIX, GLUE_PREFIX)):
        return False
    if filename[:1] == "<":      # converted code ("<autograph: f at ...>"), <stdin>, <string>
        return filename not in _internal_converted
    return not is_package_file(filename) and not is_library(filename)


_user_files = {}     # co_filename -> whether it is the user's (bounded: cleared when large)
_MAX_DEPTH = 64      # frames looked at: nodes made far from any user frame get no origin


def user_position(depth=2):
    """(filename, line, function name) of the innermost user frame on the stack, starting
    `depth` frames above this call, or None. Converted code counts as the user's (its
    generated line maps back through autograph.source.origin). Called for every node made
    while tracing (user_frame is a plain loop over frames with one dict lookup per frame)."""
    frame = user_frame(depth + 1)
    if frame is None:
        return None
    code = frame.f_code
    return (code.co_filename, frame_line(frame), code.co_name)


def user_frame(depth=2):
    """The innermost user frame on the stack, starting `depth` frames above this call (the
    frame itself: its locals, its code), or None."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    known = _user_files
    for _ in range(_MAX_DEPTH):
        if frame is None:
            return None
        user = known.get(frame.f_code.co_filename)
        if user is None:
            user = _classify(frame.f_code.co_filename)
        if user:
            return frame
        frame = frame.f_back
    return None


# -- the line a frame is at ----------------------------------------------------------------
# `frame.f_lineno` is not stored: CPython finds it by scanning the code object's line table
# from its start to the frame's instruction, so it costs time proportional to the function's
# length. user_position asks it for every node a trace makes, nodes being made all along
# the function: tracing an n-statement function read n lines of an n-long table, quadratic
# (a 1,000-statement function: ~30 us a node, a third of its first call; issue 30). For a
# long code object the lines of all its instructions are listed once (one pass over
# `co_lines()`), and a frame's line is an index into that list by its instruction
# (`f_lasti`, in bytes; 2 a code unit). Short code objects (most functions) are scanned.

LINE_TABLE_ABOVE = 256   # bytes of `co_linetable` (~25 lines) above which lines are listed
_line_tables = {}        # id(code) -> (weak reference to the code, its lines by code unit)


def frame_line(frame):
    """`frame.f_lineno`, in constant time for long functions (see above)."""
    code = frame.f_code
    if len(code.co_linetable) <= LINE_TABLE_ABOVE:
        return frame.f_lineno
    lasti = frame.f_lasti
    entry = _line_tables.get(id(code))
    if entry is None or entry[0]() is not code:
        entry = _line_tables[id(code)] = (weakref.ref(code, _forget_lines(id(code))),
                                         line_table(code))
    lines = entry[1]
    index = lasti >> 1
    if frame.f_trace is not None or not 0 <= index < len(lines):
        return frame.f_lineno     # a tracer may set the line (pdb's `jump`); before the start
    return lines[index]


def line_table(code):
    """The line of each code unit (2 bytes) of `code`, as `f_lineno` reports it (None
    where CPython has none: instructions the compiler added)."""
    lines = []
    for start, end, line in code.co_lines():
        if len(lines) < start >> 1:      # (ranges are contiguous; a gap has no line)
            lines.extend([None] * ((start >> 1) - len(lines)))
        lines.extend([line] * ((end - start) >> 1))
    return lines


def line_tables_kept():
    """How many code objects' line lists are kept (tests: none once the code is gone)."""
    return len(_line_tables)


def _forget_lines(key):
    def forget(ref):
        entry = _line_tables.get(key)
        if entry is not None and entry[0] is ref:
            del _line_tables[key]
    return forget


def is_user_code(code):
    """Whether a code object is the user's (not autograph's, a library's or generated)."""
    user = _user_files.get(code.co_filename)
    return _classify(code.co_filename) if user is None else user


def _classify(filename):
    if len(_user_files) > 4096:
        _user_files.clear()
    user = _user_files[filename] = _is_user(filename)
    return user


# -- library code: never converted, called as it is --------------------------------------
# NumPy, the standard library, installed packages (anything under site-packages) and
# autograph itself are library code; everything else (the user's files, `__main__`, tests,
# code exec'd from a string) is user code that the compiler converts when it is called.
# The call-tree converter reads this at conversion time, converted_call at run time (here,
# not in the converters package, so that a call needs no part of the compiler).

_LIBRARY_ROOTS = {"numpy", "autograph", "scipy", "cupy", "torch", "jax", "jaxlib",
                  "tensorflow", "pandas", "gast", "array_api_strict", "array_api_compat",
                  "pytest", "_pytest", "hypothesis"}


@functools.lru_cache(maxsize=4096)   # bounded: exec'd code may invent module names
def module_is_library(module_name):
    if not module_name:
        return False
    root = module_name.split(".")[0]
    if root in _LIBRARY_ROOTS or root in sys.stdlib_module_names or root == "builtins":
        return True
    if root == "__main__":
        return False
    module = sys.modules.get(module_name) or sys.modules.get(root)
    path = getattr(module, "__file__", None)
    if not path:
        return module is not None  # built-in or frozen modules
    path = os.path.realpath(path)
    return path.startswith(library_dirs())


def value_is_library(value):
    """True when `value` (a module, function, class, method or object) is library code."""
    if isinstance(value, types.ModuleType):
        return module_is_library(value.__name__)
    if isinstance(value, types.MethodType):
        value = value.__func__
    module = getattr(value, "__module__", None)
    if isinstance(value, types.FunctionType) and not isinstance(module, str):
        return False  # Python code exec'd without a module name: the user's
    if not isinstance(module, str):
        module = getattr(type(value), "__module__", None)
    if isinstance(value, (types.FunctionType, type)) or callable(value):
        return module_is_library(module) if isinstance(module, str) else True
    return module_is_library(getattr(type(value), "__module__", None))


# -- the file names of generated code ---------------------------------------------------------
# Tracebacks, `inspect` and pdb show generated code through `linecache`, so each compiled
# graph needs a file name of its own while its function lives. CPython keeps every file name
# passed to `compile()` for the life of the process (some 100-200 bytes each): numbering
# names afresh made every traced-and-dropped function and every save/load cycle grow memory
# (issue 29). Numbers are recycled: a function's number returns to the pool when the
# function is collected (with its linecache entry), and the next compile takes a free one,
# so the names in use never outnumber the most functions alive at once. (Here, at the
# bottom of the package, because both codegen and the trace cache's loader need it, and a
# fresh process's first call should import no extra module for it.)

_free_numbers = []                  # released numbers, reused last-freed first
_fresh_numbers = itertools.count()
_numbers_lock = _thread.allocate_lock()


def take_codegen_filename(graph_name, note=""):
    """(file name, number) for the code of graph `graph_name` about to be compiled."""
    with _numbers_lock:
        n = _free_numbers.pop() if _free_numbers else next(_fresh_numbers)
    return f"{CODEGEN_PREFIX} {graph_name} #{n}{note}>", n


def register_source(filename, number, source, fn):
    """Show `source` as `filename` in linecache while `fn` lives; then free the name."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(fn, _release_filename, filename, number)


def _release_filename(filename, number):
    # (a finalizer: it runs on whichever thread collects, so it imports nothing)
    linecache.cache.pop(filename, None)
    with _numbers_lock:
        _free_numbers.append(number)


def codegen_filenames_in_use():
    """How many generated-code names are in use (tests: flat after code is dropped)."""
    global _fresh_numbers
    with _numbers_lock:
        n = next(_fresh_numbers)              # (itertools.count has no peek)
        _fresh_numbers = itertools.count(n)
        return n - len(_free_numbers)
