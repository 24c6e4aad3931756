"""The executors: the reference interpreter, the optimiser, code generation (fast Python),
native code through Numba (native/, `jit_compile=True`), and drawing graphs (dot)."""
