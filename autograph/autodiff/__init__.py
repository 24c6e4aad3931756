"""Automatic differentiation: reverse mode as a graph -> graph transform.

transform.py walks a graph backwards calling each primitive's rule; loops.py and conds.py
hold the rules of `while_loop` and `cond`; tensor_arrays.py those of TensorArray; tape.py
the GradientTape; api.py grad, value_and_grad, vjp, stop_gradient; custom.py
custom_gradient.
"""
