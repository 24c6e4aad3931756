"""The native executor (`jit_compile=True`): a graph lowered to one Numba function, compiled to
machine code and cached on disk.

jit compiles and runs (the disk cache, the runner); lower writes a graph as the function's
Python source, one node a line, with ops (each primitive as a Numba expression), fills
(TensorArrays as preallocated arrays), grad, handles and grad_code (the handles and updates
of backward graphs), fuse, kernel and vector_math (elementwise runs fused into one loop),
fuse_updates and inplace (a Variable's update inside that loop, written into its own array),
copies (array assignments as loops), library (the helpers and NumPy calls shared by every
generated module, compiled once per machine), kernel_modules (each fused kernel a module
of its own, compiled once per machine for its text), unlinked (the `njit` of those, which
generated code calls through their address instead of compiling them into itself) and
cache_load (the `njit` of generated functions: a later process loads them without Numba's
compiler registries).
"""

from autograph.runtime.exec.native.jit import (NativeLoweringError, available, compile_graph,
                                               source_of, stats)

__all__ = ["compile_graph", "source_of", "stats", "NativeLoweringError", "available"]
