"""Fused kernels as modules of their own, keyed by their text: compiled once per machine.

A fused kernel (kernel.py) depends only on its own text: the run's ops, dtypes and static
shapes. Written into the generated module of the function that uses it, Numba compiles it
again for every new program (0.2-0.5 s each, the `tanh` loop the largest), though the
next program, or the same layer in another model, has the very same kernel. So each
kernel is written as a module of its own, `<cache dir>/ag_k_<hash>.py`, the hash taken
over its text (with the function always named `fused`) and Numba's and autograph's
versions, compiled with `cache=True`; the generated module imports it under its local
name (`from autograph_native_k_<hash> import fused as fused_1`) and calls it through its
address (`@unlinked.njit`: unlinked.py), so its code is not compiled again inside the
caller. The first program on a machine that needs a kernel compiles it; every later one,
in any process, loads it.

The file is written and executed like a generated module (jit.py `_load_module`): only
ever as the source this process generated, rewritten when its text differs, in the cache
dir `jit.cache_dir` accepts (this user's alone).
"""

import hashlib

from autograph.runtime.exec.native import vector_math as native_math

NAME = "fused"      # every kernel's name in its own module
_HEAD = ["import math", "import numpy as np", "from numba import njit",
         "from autograph.runtime.exec.native import unlinked"]


class KernelModule:
    """One kernel's module: `text` (its source), `made_by` (the node behind each line, or
    None), `module_name` and `file_name` (named by the hash of the text)."""

    def __init__(self, lines, made_by, pairwise):
        body, owners = [], []
        for dtype in sorted(pairwise):   # NumPy-order sums the kernel calls (vector_math)
            extra = native_math.pairwise_sum_source(dtype)
            body += extra
            owners += [None] * len(extra)
        body += lines
        owners += made_by
        self.text = "\n".join(_HEAD + body) + "\n"
        self.made_by = [None] * len(_HEAD) + owners
        digest = _digest(self.text)[:32]
        self.module_name = f"autograph_native_k_{digest}"
        self.file_name = f"ag_k_{digest}.py"

    def import_line(self, local):
        return (f"from {self.module_name} import {NAME}" if local == NAME else
                f"from {self.module_name} import {NAME} as {local}")


def _digest(text):
    import numba
    from autograph import __version__ as ag_version
    return hashlib.sha256(f"{numba.__version__}\0{ag_version}\0{text}".encode()).hexdigest()


def ensure_loaded(modules):
    """Load the kernel modules (writing their files when missing) before a generated module
    that imports them runs."""
    import sys
    from autograph.runtime.exec.native import jit
    for m in modules:
        if m.module_name not in sys.modules:
            jit._load_module(m.text, m.module_name, m.file_name)
