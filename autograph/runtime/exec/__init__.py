"""The executors: the reference interpreter, the optimiser, code generation (fast Python), and drawing graphs (dot)."""
