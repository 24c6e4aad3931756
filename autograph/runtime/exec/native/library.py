"""The helpers every generated native module may call, compiled once per machine.

grad_code.py's handle helpers (`grow`, gradient lists, TensorArrays, `rows_into`),
copies.py's assignment loops for ranks up to `RANKS`, `matmul` (`np.dot`) and the NumPy
calls of `WRAPPED` (`np.empty`, `np.full`, `np.sum`, `np.ascontiguousarray`, ...: Numba
types and compiles each one's implementation again in every process, 0.05-0.3 s apiece)
are the same text in every program.
Written into each generated module, Numba would compile them again for every new
program (~0.1-0.5 s each). Instead they live in modules of their own (the library's parts:
the handle helpers, the NumPy wrappers, each assignment loop), written to the native
cache dir as `ag_lib_<hash>.py` (the hash of the part's source and of Numba's and
autograph's versions) and compiled with `cache=True`: the first program on a machine that
needs a helper for some argument types compiles it once, every later program, in any
process, loads its machine code from Numba's cache. A generated module imports what it
uses (`from autograph_native_lib_<hash> import grow, put_set_2_2`) and calls them
through their address (they are unlinked.py's `njit`): their code is not linked, optimised
and compiled again inside every program that calls them.

The file is written and executed like a generated module (jit.py `_load`): only ever as
the source this process generated, rewritten when its text differs.
"""

import functools
import hashlib

from autograph.runtime.exec.native import copies
from autograph.runtime.exec.native.grad_code import HELPERS

RANKS = 4        # copies.py's loops for destination and source ranks up to this


# `np.dot` behind a function of the library: Numba compiles its BLAS call (0.8 s per
# pair of operand layouts in a fresh process, SciPy's import included) once per machine
MATMUL = '''
@njit(cache=True)
def matmul(a, b):
    return np.dot(a, b)
'''


# NumPy calls the generated function makes through the library (`np.empty(s, t)` ->
# `np_empty_2(s, t)`): (function, positional arguments) of calls without keywords
WRAPPED = {("empty", 2), ("full", 2), ("full", 3), ("zeros", 1), ("zeros", 2), ("ones", 1),
           ("ones", 2), ("sum", 1), ("prod", 1), ("mean", 1), ("max", 1), ("min", 1),
           ("any", 1), ("all", 1), ("argmax", 1), ("argmin", 1), ("arange", 3),
           ("ascontiguousarray", 1)}    # (not np.copy: the copies the in-place proofs
#                                            leave stay visible as `np.copy(` in the source)


def wrapper_name(fn, n):
    return f"np_{fn}_{n}"


def _wrapper_source(fn, n):
    args = ", ".join(f"a{i}" for i in range(n))
    return f"\n@njit(cache=True)\ndef {wrapper_name(fn, n)}({args}):\n    return np.{fn}({args})\n"


def wrap(line):
    """(line, names): a generated line whose NumPy calls of `WRAPPED` call the library's
    wrappers instead (`x = np.empty((0, 4), np.float64)` -> `x = np_empty_2(...)`), and
    the wrappers it calls. A line that is not a whole statement is returned as it is."""
    if "np." not in line:
        return line, ()
    import ast
    text = line.lstrip()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return line, ()
    spans, used = {}, set()
    for node in ast.walk(tree):
        f = getattr(node, "func", None)
        if isinstance(node, ast.Call) and isinstance(f, ast.Attribute) and \
                isinstance(f.value, ast.Name) and f.value.id == "np" and f.lineno == 1 and \
                not node.keywords and (f.attr, len(node.args)) in WRAPPED and \
                not any(isinstance(a, ast.Starred) for a in node.args):
            name = wrapper_name(f.attr, len(node.args))
            used.add(name)
            spans[f.col_offset, f.end_col_offset] = name
            # int and bool constants as `int(7)`: a literal would make Numba compile the
            # wrapper once per value (a shape `(32, 64)` is a tuple of two literals)
            for c in (c for a in node.args for c in _constants(a)):
                cast = "bool" if isinstance(c.value, bool) else "int"
                spans[c.col_offset, c.end_col_offset] = f"{cast}({c.value!r})"
    for (start, end), name in sorted(spans.items(), reverse=True):
        text = text[:start] + name + text[end:]
    return line[:len(line) - len(line.lstrip())] + text, used


def _constants(node):
    """The int and bool constants of an argument that are values or shape items (`7`,
    `(0, 32)`, `(n,) + (3,)`, `-1`), not those inside indexing or calls."""
    import ast
    if isinstance(node, ast.Constant):
        return [node] if isinstance(node.value, (bool, int)) else []
    if isinstance(node, ast.Tuple):
        return [c for e in node.elts for c in _constants(e)]
    if isinstance(node, ast.BinOp):
        return _constants(node.left) + _constants(node.right)
    if isinstance(node, ast.UnaryOp):
        return _constants(node.operand)
    return []


def names():
    """Every function the library defines."""
    return set(HELPERS) | {"matmul"} | {copies.helper_name(op, d, s) for op in copies.OPS
                           for d in range(1, RANKS + 1) for s in range(RANKS + 1)} | {
        wrapper_name(fn, n) for fn, n in WRAPPED}


def holds(name):
    return name in _names()


@functools.lru_cache(maxsize=None)
def _names():
    return frozenset(names())


# The library is written as several modules, its parts, so that a process loads (compiles
# to bytecode and executes) the parts a program calls, not all ~4,400 lines (~80 ms):
# the handle helpers, which call one another; `matmul` and the NumPy wrappers; and each
# assignment loop of copies.py on its own.
_HEAD = ['"""autograph: native helpers shared by every generated module '
         '(runtime/exec/native/library.py)."""', "import numpy as np",
         "from autograph.runtime.exec.native.unlinked import njit   # callers call these "
         "by address (unlinked.py)", ""]


@functools.lru_cache(maxsize=None)
def _parts():
    """{part: its functions' source text}, and {function: its part}."""
    parts = {"handles": "".join(HELPERS.values()).split("\n"),
             "numpy": MATMUL.split("\n") + [line for fn, n in sorted(WRAPPED)
                                            for line in _wrapper_source(fn, n).split("\n")]}
    for op in copies.OPS:
        for d in range(1, RANKS + 1):
            for s in range(RANKS + 1):
                name = copies.helper_name(op, d, s)
                parts[name] = copies.source(name, op, d, s)
    where = dict.fromkeys(HELPERS, "handles")
    where.update(dict.fromkeys(["matmul"] + [wrapper_name(fn, n) for fn, n in WRAPPED],
                               "numpy"))
    where.update((name, name) for name in parts if name not in ("handles", "numpy"))
    return parts, where


@functools.lru_cache(maxsize=None)
def source(part):
    """The source of one part of the library (fixed for a version of autograph)."""
    return "\n".join(_HEAD + _parts()[0][part]) + "\n"


@functools.lru_cache(maxsize=None)
def digest(part):
    import numba
    from autograph import __version__ as ag_version
    return hashlib.sha256(
        f"{numba.__version__}\0{ag_version}\0{source(part)}".encode()).hexdigest()


def module_name(part):
    return f"autograph_native_lib_{digest(part)[:32]}"


def import_lines(used):
    """The generated module's imports of the library functions in `used` (sorted)."""
    where = _parts()[1]
    by_part = {}
    for name in sorted(used):
        by_part.setdefault(where[name], []).append(name)
    return [f"from {module_name(part)} import {', '.join(names)}"
            for part, names in sorted(by_part.items())]


@functools.lru_cache(maxsize=None)
def _part_of_module():
    return {module_name(part): part for part in _parts()[0]}


def ensure_loaded(source_text):
    """Load the library's parts that the generated module `source_text` imports (writing
    their files when missing) before it runs; each once per process."""
    import sys
    parts = _part_of_module()
    for line in source_text.split("\n"):
        if line.startswith("from autograph_native_lib_"):
            module = line.split()[1]
            if module not in sys.modules:
                from autograph.runtime.exec.native import jit
                part = parts[module]
                jit._load_module(source(part), module, f"ag_lib_{digest(part)[:32]}.py")
