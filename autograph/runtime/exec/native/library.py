"""The helpers every generated native module may call, compiled once per machine.

grad_code.py's handle helpers (`grow`, gradient lists, TensorArrays, `rows_into`),
copies.py's assignment loops for ranks up to `RANKS` and `matmul` (`np.dot`) are the same
text in every program.
Written into each generated module, Numba would compile them again for every new
program (~0.1-0.5 s each). Instead they live in one module of their own, written to the
native cache dir as `ag_lib_<hash>.py` (the hash of its source and of Numba's and
autograph's versions) and compiled with `cache=True`: the first program on a machine that
needs a helper for some argument types compiles it once, every later program, in any
process, loads its machine code from Numba's cache. A generated module imports what it
uses (`from autograph_native_lib_<hash> import grow, put_set_2_2`), and Numba links
their compiled code into the function that calls them.

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


def names():
    """Every function the library defines."""
    return set(HELPERS) | {"matmul"} | {copies.helper_name(op, d, s) for op in copies.OPS
                           for d in range(1, RANKS + 1) for s in range(RANKS + 1)}


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
             "from numba import njit", ""]
    lines += ("".join(HELPERS.values()) + MATMUL).split("\n")
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
