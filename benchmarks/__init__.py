"""Side-by-side timings of autograph against eager NumPy, a hand-written NumPy floor and,
when installed, TensorFlow (tf.function) and JAX (jax.jit). Run `python -m benchmarks`
(`--quick` for a smoke run); see benchmarks/README.md for the cases and the latest table."""
