"""Case 6: a Python-heavy model forward pass, where tracing should pay for itself.

A stack of small dense layers driven by config objects: every call, eager Python walks the
layers, reads config attributes and dict entries, takes branches on them, rescales the
weights and runs many small NumPy ops. A trace does all the Python once; the graph keeps only
the array ops (the rescaled weights fold into constants, repeated subexpressions merge)."""

import functools
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.cases._common import autograph, blocking, jax_contender, tf_contender
from benchmarks.harness import Case, Contender, Goal


@dataclass(frozen=True)
class LayerConfig:
    units: int
    activation: str = "tanh"
    use_bias: bool = True
    gain: float = 1.0
    norm: bool = False
    residual: bool = False
    eps: float = 1e-5


class Dense:
    def __init__(self, config, in_units, rng):
        self.config = config
        self.params = {
            "kernel": rng.standard_normal((in_units, config.units)) / math.sqrt(in_units),
            "bias": rng.standard_normal(config.units) * 0.1,
        }

    def activate(self, y):
        name = self.config.activation
        if name == "relu":
            return np.maximum(y, 0.0)
        if name == "tanh":
            return np.tanh(y)
        if name == "gelu":
            return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
        return y

    def __call__(self, x):
        cfg = self.config
        kernel = self.params["kernel"] * cfg.gain      # weight scaling, redone every eager call
        y = x @ kernel
        if cfg.use_bias:
            y = y + self.params["bias"]
        if cfg.norm:
            mean = np.mean(y, axis=-1, keepdims=True)
            var = np.mean((y - mean) * (y - mean), axis=-1, keepdims=True)
            y = (y - mean) / np.sqrt(var + cfg.eps)
        y = self.activate(y)
        if cfg.residual:
            y = y + x
        return y


class Model:
    def __init__(self, configs, in_units, rng):
        self.layers = []
        for cfg in configs:
            self.layers.append(Dense(cfg, in_units, rng))
            in_units = cfg.units

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def make_model(depth, width, seed=0):
    acts = ["tanh", "relu", "gelu", "linear"]
    configs = [LayerConfig(width, activation=acts[k % 4], use_bias=k % 3 != 2,
                           gain=1.0 + 0.01 * k, norm=k % 2 == 0, residual=k % 4 == 3)
               for k in range(depth)]
    return Model(configs, width, np.random.default_rng(seed))


def hand_written(model):
    """The floor: everything Python decides is decided once, up front; the call is only the
    array ops, with the scaled weights precomputed."""
    plan = [(l.params["kernel"] * l.config.gain,
             l.params["bias"] if l.config.use_bias else None,
             l.config.norm, l.config.eps, l.config.activation, l.config.residual)
            for l in model.layers]

    def forward(x):
        for kernel, bias, norm, eps, act, residual in plan:
            y = x @ kernel
            if bias is not None:
                y = y + bias
            if norm:
                mean = y.mean(axis=-1, keepdims=True)
                d = y - mean
                y = d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps)
            if act == "relu":
                y = np.maximum(y, 0.0)
            elif act == "tanh":
                y = np.tanh(y)
            elif act == "gelu":
                y = 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
            x = y + x if residual else y
        return x
    return forward


def build(quick):
    depth, width, batch = (4, 8, 2) if quick else (16, 32, 8)
    model = make_model(depth, width)
    x = np.random.default_rng(1).standard_normal((batch, width))

    def forward(x):
        return model(x)

    def make_ag():
        return functools.partial(autograph().function(forward), x)

    def make_tf(tf):
        return functools.partial(tf.function(_tf_forward(tf, model)), tf.constant(x))

    def make_jax(jax, jnp, lax):
        return blocking(jax.jit(_jax_forward(jnp, model)), jnp.asarray(x))

    contenders = [
        Contender("numpy_eager", lambda: functools.partial(forward, x)),
        Contender("numpy_hand", lambda: functools.partial(hand_written(model), x)),
        Contender("autograph", make_ag),
        tf_contender(make_tf),
        jax_contender(make_jax),
    ]
    return {"depth": depth, "width": width, "batch": batch}, contenders


def _tf_forward(tf, model):
    """The same model for tf.function: TF ops in place of NumPy calls, same Python logic."""
    def forward(x):
        for layer in model.layers:
            cfg = layer.config
            y = tf.matmul(x, layer.params["kernel"] * cfg.gain)
            if cfg.use_bias:
                y = y + layer.params["bias"]
            if cfg.norm:
                mean = tf.reduce_mean(y, axis=-1, keepdims=True)
                var = tf.reduce_mean((y - mean) * (y - mean), axis=-1, keepdims=True)
                y = (y - mean) / tf.sqrt(var + cfg.eps)
            if cfg.activation == "relu":
                y = tf.maximum(y, 0.0)
            elif cfg.activation == "tanh":
                y = tf.tanh(y)
            elif cfg.activation == "gelu":
                y = 0.5 * y * (1.0 + tf.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
            x = y + x if cfg.residual else y
        return x
    return forward


def _jax_forward(jnp, model):
    def forward(x):
        for layer in model.layers:
            cfg = layer.config
            y = x @ (layer.params["kernel"] * cfg.gain)
            if cfg.use_bias:
                y = y + layer.params["bias"]
            if cfg.norm:
                mean = jnp.mean(y, axis=-1, keepdims=True)
                var = jnp.mean((y - mean) * (y - mean), axis=-1, keepdims=True)
                y = (y - mean) / jnp.sqrt(var + cfg.eps)
            if cfg.activation == "relu":
                y = jnp.maximum(y, 0.0)
            elif cfg.activation == "tanh":
                y = jnp.tanh(y)
            elif cfg.activation == "gelu":
                y = 0.5 * y * (1.0 + jnp.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))
            x = y + x if cfg.residual else y
        return x
    return forward


CASES = [Case(
    "6_python_heavy", "Python-heavy forward: 16 small layers with configs", build, rtol=1e-7,
    goals=[Goal("faster than eager NumPy", "autograph", "numpy_eager", max_ratio=1.0)])]
