"""Case 14 (issue 30, goal 3): one training step of an MLP 784-256-256-10 (ReLU, softmax
cross-entropy), batch 128, Adam, in float32 and float64.

A step is the forward pass, the gradients of all six parameters, and Adam's update of each
(Keras's rule: `w -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)`). Contenders,
each starting from the same parameters and checked on its first step's result (the loss
and the last layer's bias after the update):

- `numpy_hand`: the floor a careful NumPy programmer writes (in-place updates with `out=`);
- `autograph`: `ag.function` of a step with `ag.GradientTape` and `ag.optimizers.Adam`;
- `autograph_jit`: the same with `jit_compile=True` (Numba; elementwise runs fused);
- `jax`: `jax.jit` of the whole step (forward, `jax.grad`, Adam written in `jnp`, as optax
  does), parameters donated so XLA updates them in place;
- `torch`, `torch_compile`: eager PyTorch and `torch.compile` of the step (forward,
  backward, `torch.optim.Adam(foreach=True)`), one thread (`torch.set_num_threads(1)`).
  torch adds eps before the bias correction of the denominator where Keras adds it after:
  the results differ in the last digits, inside the case's tolerance.

Every contender keeps its own state, so successive calls are successive steps; the step
count does not change the work. `python -m benchmarks` pins every contender to one thread
(BLAS, XLA, torch: benchmarks/threads.py).
"""

import functools

import numpy as np

from benchmarks.cases._common import autograph, jax_contender
from benchmarks.harness import Case, Contender, Goal, Unavailable

SIZES = (784, 256, 256, 10)
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-7


def _data(dtype, quick):
    rng = np.random.default_rng(0)
    sizes = (32, 16, 16, 10) if quick else SIZES
    batch = 8 if quick else 128
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(dtype))
        params.append(np.zeros(b, dtype))
    x = rng.standard_normal((batch, sizes[0])).astype(dtype)
    y = np.eye(sizes[-1], dtype=dtype)[rng.integers(0, sizes[-1], batch)]
    return params, x, y


def _result(value):
    loss, b_last = value
    return np.concatenate([np.ravel(np.asarray(loss, np.float64)),
                           np.ravel(np.asarray(b_last, np.float64))])


# -- NumPy by hand ------------------------------------------------------------------------------

def make_hand(params, x, y):
    ps = [p.copy() for p in params]
    ms = [np.zeros_like(p) for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    tmp = [np.empty_like(p) for p in ps]
    state = {"t": 0}
    dt = ps[0].dtype

    def step():
        w0, b0, w1, b1, w2, b2 = ps
        a0 = x @ w0
        a0 += b0
        h0 = np.maximum(a0, 0)
        a1 = h0 @ w1
        a1 += b1
        h1 = np.maximum(a1, 0)
        z = h1 @ w2
        z += b2
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = -np.mean(np.sum(y * (z - np.log(s)), axis=1))
        e /= s
        e -= y
        e /= dt.type(x.shape[0])                 # dL/dz
        gw2, gb2 = h1.T @ e, e.sum(axis=0)
        d1 = e @ w2.T
        d1 *= a1 > 0
        gw1, gb1 = h0.T @ d1, d1.sum(axis=0)
        d0 = d1 @ w1.T
        d0 *= a0 > 0
        gw0, gb0 = x.T @ d0, d0.sum(axis=0)
        state["t"] += 1
        t = state["t"]
        alpha = dt.type(LR * np.sqrt(1 - B2 ** t) / (1 - B1 ** t))
        for p, g, m, v, tp in zip(ps, (gw0, gb0, gw1, gb1, gw2, gb2), ms, vs, tmp):
            m *= dt.type(B1)
            m += dt.type(1 - B1) * g              # (allocates (1-b1) g once)
            np.multiply(g, g, out=g)
            g *= dt.type(1 - B2)
            v *= dt.type(B2)
            v += g
            np.sqrt(v, out=tp)
            tp += dt.type(EPS)
            np.divide(m, tp, out=tp)
            tp *= alpha
            p -= tp
        return loss, ps[-1]
    return step


# -- autograph --------------------------------------------------------------------------------

def make_autograph(ag, params, x, y, jit_compile=False):
    vars_ = [ag.Variable(p.copy(), name=f"p{i}") for i, p in enumerate(params)]
    opt = ag.optimizers.Adam(LR, beta_1=B1, beta_2=B2, epsilon=EPS)
    opt.build(vars_)

    @ag.function(jit_compile=jit_compile)
    def step(x, y):
        with ag.GradientTape() as tape:
            h = x
            for i in range(3):
                h = h @ vars_[2 * i] + vars_[2 * i + 1]
                if i < 2:
                    h = np.maximum(h, 0)
            z = h - np.max(h, axis=1, keepdims=True)
            logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
            loss = -np.mean(np.sum(y * logp, axis=1))
        grads = tape.gradient(loss, vars_)
        opt.apply_gradients(zip(grads, vars_))
        return loss, vars_[-1].read_value()
    return functools.partial(step, x, y)


# -- JAX ----------------------------------------------------------------------------------------

def make_jax(params, x, y, jax, jnp, lax):
    def loss_fn(ps, x, y):
        h = x
        for i in range(3):
            h = h @ ps[2 * i] + ps[2 * i + 1]
            if i < 2:
                h = jnp.maximum(h, 0)
        z = h - jnp.max(h, axis=1, keepdims=True)
        logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
        return -jnp.mean(jnp.sum(y * logp, axis=1))

    def step(ps, ms, vs, t, x, y):
        loss, gs = jax.value_and_grad(loss_fn)(ps, x, y)
        t = t + 1
        dt = x.dtype
        alpha = (LR * jnp.sqrt(1 - B2 ** t) / (1 - B1 ** t)).astype(dt)
        ms = [B1 * m + (1 - B1) * g for m, g in zip(ms, gs)]
        vs = [B2 * v + (1 - B2) * g * g for v, g in zip(vs, gs)]
        ps = [p - alpha * m / (jnp.sqrt(v) + EPS) for p, m, v in zip(ps, ms, vs)]
        return loss, ps, ms, vs, t

    jstep = jax.jit(step, donate_argnums=(0, 1, 2))
    dev = jax.devices("cpu")[0]
    state = {"ps": [jax.device_put(p, dev) for p in params],
             "ms": [jnp.zeros_like(p) for p in params],
             "vs": [jnp.zeros_like(p) for p in params],
             "t": jnp.asarray(0, jnp.int64)}
    jx, jy = jnp.asarray(x), jnp.asarray(y)

    def call():
        s = state
        loss, s["ps"], s["ms"], s["vs"], s["t"] = jstep(s["ps"], s["ms"], s["vs"], s["t"],
                                                        jx, jy)
        return loss.block_until_ready(), s["ps"][-1].block_until_ready()
    return call


# -- PyTorch ------------------------------------------------------------------------------------

def _torch():
    from benchmarks import frameworks
    torch, note = frameworks.torch()
    if torch is None:
        return None, note
    torch.set_num_threads(1)
    return torch, ""


def make_torch(params, x, y, compiled):
    torch, _ = _torch()
    ps = [torch.nn.Parameter(torch.from_numpy(p.copy())) for p in params]
    opt = torch.optim.Adam(ps, lr=LR, betas=(B1, B2), eps=EPS, foreach=True)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def step():
        opt.zero_grad(set_to_none=True)
        h = tx
        for i in range(3):
            h = h @ ps[2 * i] + ps[2 * i + 1]
            if i < 2:
                h = torch.relu(h)
        logp = torch.log_softmax(h, dim=1)
        loss = -(ty * logp).sum(dim=1).mean()
        loss.backward()
        opt.step()
        return loss.detach()
    fn = torch.compile(step) if compiled else step

    def call():
        loss = fn()
        return loss.numpy(), ps[-1].detach().numpy().copy()
    return call


def _torch_contender(name, params, x, y, compiled):
    torch, note = _torch()
    if torch is None:
        return Unavailable(name, note)
    return Contender(name, lambda: make_torch(params, x, y, compiled), result=_result)


def build_for(dtype):
    def build(quick):
        params, x, y = _data(dtype, quick)
        ag = autograph()
        contenders = [
            Contender("numpy_hand", lambda: make_hand(params, x, y), result=_result),
            Contender("autograph", lambda: make_autograph(ag, params, x, y), result=_result),
            Unavailable("autograph_jit", "quick mode: Numba compiles this step for a minute")
            if quick else
            _jit_contender(lambda: make_autograph(ag, params, x, y, jit_compile=True)),
            _with_result(jax_contender(functools.partial(make_jax, params, x, y))),
            _torch_contender("torch", params, x, y, compiled=False),
            _torch_contender("torch_compile", params, x, y, compiled=True),
        ]
        sizes = SIZES if not quick else (32, 16, 16, 10)
        return {"sizes": list(sizes), "batch": x.shape[0], "dtype": np.dtype(dtype).name,
                "optimizer": "Adam"}, contenders
    return build


def _jit_contender(make):
    """autograph_jit, checked after the same number of steps as the others (the harness's
    warm-up calls: its first call compiles)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return Unavailable("autograph_jit", "numba is not installed (pip install -e '.[native]')")
    return Contender("autograph_jit", make, result=_result)


def _with_result(contender):
    if isinstance(contender, Contender):
        contender.result = _result
    return contender


CASES = [
    Case("14a_mlp_adam_f32", "MLP 784-256-256-10 step, batch 128, Adam, float32",
         build_for(np.float32), reference="numpy_hand", rtol=2e-3,
         goals=[Goal("[30.3] jit_compile=True <= 1.0x jax.jit", "autograph_jit", "jax",
                     max_ratio=1.0),
                Goal("[30.3] <= 1.25x jax.jit", "autograph", "jax", max_ratio=1.25)]),
    Case("14b_mlp_adam_f64", "MLP 784-256-256-10 step, batch 128, Adam, float64",
         build_for(np.float64), reference="numpy_hand", rtol=2e-3,
         goals=[Goal("[30.3] jit_compile=True <= 1.0x torch.compile", "autograph_jit",
                     "torch_compile", max_ratio=1.0),
                Goal("[30.3] <= 1.25x torch.compile", "autograph", "torch_compile",
                     max_ratio=1.25)]),
]
