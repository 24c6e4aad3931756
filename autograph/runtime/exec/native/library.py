"""The helpers every generated native module may call, compiled once per machine.

grad_code.py's handle helpers (`grow`, gradient lists, TensorArrays, `rows_into`),
copies.py's assignment loops for ranks up to `RANKS`, `matmul` (`np.dot`) and the NumPy
calls of `WRAPPED` (`np.empty`, `np.full`, `np.sum`, `np.ascontiguousarray`, ...: Numba
types and compiles each one's implementation again in every process, 0.05-0.3 s apiece)
are the same text in every program.
Written into each generated module, Numba would compile them again for every new
program (~0.1-0.5 s each). Instead they live in one module of their own, written to the
native cache dir as `ag_lib_<hash>.py` (the hash of its source and of Numba's and
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


@functools.lru_cache(maxsize=None)
def source():
    """The library's module source (fixed for a version of autograph)."""
    lines = ['"""autograph: native helpers shared by every generated module '
             '(runtime/exec/native/library.py)."""', "import numpy as np",
             "from autograph.runtime.exec.native.unlinked import njit   # callers call these "
             "by address (unlinked.py)", ""]
    lines += ("".join(HELPERS.values()) + MATMUL).split("\n")
    for fn, n in sorted(WRAPPED):
        lines += _wrapper_source(fn, n).split("\n")
    for op in copies.OPS:
        for d in range(1, RANKS + 1):
            for s in range(RANKS + 1):
                lines += copies.source(copies.helper_name(op, d, s), op, d, s)
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=None)
def digest():
    import numba
    from autograph import __version__ as ag_version
    return hashlib.sha256(
        f"{numba.__version__}\0{ag_version}\0{source()}".encode()).hexdigest()


def module_name():
    return f"autograph_native_lib_{digest()[:32]}"


def import_line(used):
    """The generated module's import of the library functions in `used` (sorted)."""
    return f"from {module_name()} import {', '.join(sorted(used))}"


def ensure_loaded():
    """Load the library module (writing its file when missing) before a generated module
    that imports it runs; once per process."""
    import sys
    if module_name() not in sys.modules:
        from autograph.runtime.exec.native import jit
        jit._load_module(source(), module_name(), f"ag_lib_{digest()[:32]}.py")
