"""The NumPy surface: one module per family of operations, each primitive's shape rule and kernel side by side, and NumPy's dispatch tables (dispatch.py)."""
