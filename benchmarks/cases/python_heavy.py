"""Case 6: a Python-heavy model forward pass, where tracing should pay for itself.

A stack of small dense layers built like a framework's: every call, each layer checks its
input against an input spec, applies a dtype policy, runs its hooks, looks its parameters up
by name, reads config attributes, takes branches on them, rescales its weights and runs many
small NumPy ops. A trace does all the Python once; the graph keeps only
the array ops (the rescaled weights fold into constants, repeated subexpressions merge)."""

import functools
import math
from dataclasses import dataclass

import numpy as np

from benchmarks.cases._common import (autograph, autograph_jit_contender, blocking,
                                     jax_contender, tf_contender)
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


@dataclass(frozen=True)
class Policy:
    """A mixed-precision style dtype policy: what a layer computes in."""
    compute_dtype: np.dtype = np.dtype(np.float64)


@dataclass(frozen=True)
class InputSpec:
    ndim: int
    axes: tuple = ()        # (axis, size) pairs the input must have


class Module:
    """What a framework layer does around its math on every call: check the input against
    its spec, apply the dtype policy, run the forward hooks."""

    def __init__(self, name, policy):
        self.name = name
        self.policy = policy
        self.forward_hooks = []
        self.params = {}

    def param(self, key):
        return self.params[self.name + "/" + key]

    def check_input(self, x):
        spec = self.input_spec
        if x.ndim != spec.ndim:
            raise ValueError(self.name + ": expected rank " + str(spec.ndim))
        for axis, size in spec.axes:
            if x.shape[axis] != size:
                raise ValueError(self.name + ": wrong size on axis " + str(axis))

    def __call__(self, x):
        self.check_input(x)
        if x.dtype != self.policy.compute_dtype:
            x = x.astype(self.policy.compute_dtype)
        y = self.forward(x)
        for hook in self.forward_hooks:
            y = hook(self, x, y)
        return y


def _gelu(y):
    return 0.5 * y * (1.0 + np.tanh(0.7978845608 * (y + 0.044715 * y * y * y)))


ACTIVATIONS = {"relu": lambda y: np.maximum(y, 0.0), "tanh": np.tanh, "gelu": _gelu,
               "linear": lambda y: y}


class Dense(Module):
    def __init__(self, config, in_units, rng, name, policy):
        super().__init__(name, policy)
        self.config = config
        self.input_spec = InputSpec(2, ((-1, in_units),))
        self.params[name + "/kernel"] = (rng.standard_normal((in_units, config.units))
                                         / math.sqrt(in_units))
        self.params[name + "/bias"] = rng.standard_normal(config.units) * 0.1

    def forward(self, x):
        cfg = self.config
        kernel = self.param("kernel") * cfg.gain      # weight scaling, redone every eager call
        y = x @ kernel
        if cfg.use_bias:
            y = y + self.param("bias")
        if cfg.norm:
            mean = np.mean(y, axis=-1, keepdims=True)
            var = np.mean((y - mean) * (y - mean), axis=-1, keepdims=True)
            y = (y - mean) / np.sqrt(var + cfg.eps)
        y = ACTIVATIONS[cfg.activation](y)
        if cfg.residual:
            y = y + x
        return y


class Model(Module):
    def __init__(self, configs, in_units, rng, policy=Policy()):
        super().__init__("model", policy)
        self.input_spec = InputSpec(2, ((-1, in_units),))
        self.layers = []
        for k, cfg in enumerate(configs):
            self.layers.append(Dense(cfg, in_units, rng, f"model/dense_{k}", policy))
            in_units = cfg.units

    def forward(self, x):
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
    plan = [(l.param("kernel") * l.config.gain,
             l.param("bias") if l.config.use_bias else None,
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
                y = _gelu(y)
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
        autograph_jit_contender(lambda ag: functools.partial(
            ag.function(forward, jit_compile=True), x)),
        tf_contender(make_tf),
        jax_contender(make_jax),
    ]
    return {"depth": depth, "width": width, "batch": batch}, contenders


def _tf_forward(tf, model):
    """The same model for tf.function: TF ops in place of NumPy calls, same Python logic."""
    def forward(x):
        for layer in model.layers:
            cfg = layer.config
            y = tf.matmul(x, layer.param("kernel") * cfg.gain)
            if cfg.use_bias:
                y = y + layer.param("bias")
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
            y = x @ (layer.param("kernel") * cfg.gain)
            if cfg.use_bias:
                y = y + layer.param("bias")
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
    goals=[Goal("faster than eager NumPy", "autograph", "numpy_eager", max_ratio=1.0),
           Goal("jit_compile=True <= JAX jit", "autograph_jit", "jax", max_ratio=1.0)])]
