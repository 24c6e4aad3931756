"""`ag.optimizers`: SGD (with momentum, Nesterov) and Adam, with Keras's update rules.

`opt.apply_gradients(zip(grads, variables))` updates each Variable from its gradient. The
same code runs eagerly (the Variables change now, on NumPy) and inside an `ag.function`
(each update is staged: reads, arithmetic, and `assign`/`update_variable` nodes, which run
in the order they were staged, every time the graph runs).

An optimizer has state: an iteration counter (`opt.iterations`, an int64 Variable) and, per
Variable, *slots* (SGD's momentum accumulator, Adam's first and second moments), all
Variables with `trainable=False`. They are created on the first `apply_gradients` that sees
a Variable, as in TensorFlow/Keras, or ahead of time with `opt.build(variables)`. Inside an
`ag.function` that means creation happens while tracing, which is allowed in the function's
first trace only: the seeds' story of one train step traced for two optimizers (the second
trace would create the second optimizer's Variables) raises autograph's ValueError that
names the Variable and says what to do. Fixes: `opt.build(model.trainable_variables)` for
each optimizer before the first call, or one Function per optimizer.

Update rules, with g the gradient, lr the learning rate, t = iterations + 1 (1 on the first
step):
- SGD, momentum 0:       w -= lr * g
- SGD, momentum mu:      m = mu * m - lr * g;  w += m
- SGD, Nesterov:         m = mu * m - lr * g;  w += mu * m - lr * g
- Adam:                  m = b1 * m + (1 - b1) * g;  v = b2 * v + (1 - b2) * g**2;
                         w -= lr * sqrt(1 - b2**t) / (1 - b1**t) * m / (sqrt(v) + eps)
(eps is added to sqrt(v) after bias correction of the step size, as Keras does.)

`learning_rate` may be a number, an `ag.Variable` (read when the update runs, so changing it
needs no retrace) or a callable of no arguments (called at each `apply_gradients`: while
tracing, its result is fixed in the graph unless it reads Variables).
"""

import warnings

import numpy as np

from autograph.module import Module
from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.variables import Variable

__all__ = ["Optimizer", "SGD", "Adam"]


def _cast(x, dtype):
    """`x` in `dtype`: tensors stage a cast, anything else becomes a NumPy array."""
    if isinstance(x, Variable):
        x = x.read_value()
    if isinstance(x, Tensor):
        return x if x.dtype == dtype else x.astype(dtype)
    return np.asarray(x, dtype=dtype)


def _number(value, what):
    if isinstance(value, (Variable, Tensor)) or callable(value):
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, an ag.Variable or a callable, "
                        f"got {value!r}") from None


class Optimizer(Module):
    """What SGD and Adam share: hyperparameters, the iteration counter, slots, and the
    loop of `apply_gradients`. A subclass names its slots and writes `_update`.

    An optimizer is an `ag.Module`: its `variables` (the counter, then each trained
    Variable's slots in the order first seen, plus a learning rate that is a Variable) are
    found by the Module walk, so a model that holds its optimizer lists them too, and a
    saver writes them with the model."""

    _SLOTS = ()   # slot names, one zero-initialised Variable each per trained Variable
    _ag_ignored_attributes = frozenset({"_slots"})   # an index into _slot_variables

    def __init__(self, learning_rate, name):
        super().__init__(name=name)
        self.learning_rate = _number(learning_rate, "learning_rate")
        self._iterations = None
        self._slot_variables = []   # per trained Variable, in build order: {slot name: slot}
        self._slots = {}            # id(trained Variable) -> (it, its dict above)

    # -- state -----------------------------------------------------------------------------

    @property
    def iterations(self):
        """How many times `apply_gradients` ran: an int64 Variable (created on first use)."""
        if self._iterations is None:
            self._iterations = self._make(np.int64(0), f"{self.name}/iterations")
        return self._iterations

    def _make(self, value, name):
        try:
            return Variable(value, name=name, trainable=False)
        except ValueError as e:   # refused: an ag.function tracing again (autograph.function)
            raise ValueError(
                f"{e}\n{self.name} creates its state (iteration counter and slots) on the "
                f"first apply_gradients that sees a Variable. Create it before the function "
                "runs: call `optimizer.build(variables)` outside the function, or "
                "give each optimizer a Function of its own.") from None

    def get_slot(self, variable, slot_name):
        """The slot Variable `slot_name` (e.g. "m", "v", "momentum") of `variable`."""
        try:
            return self._slots[id(variable)][1][slot_name]
        except KeyError:
            raise KeyError(f"{self.name} has no slot {slot_name!r} for Variable "
                           f"{getattr(variable, 'name', variable)!r}; slots: "
                           f"{list(self._SLOTS)}") from None

    def build(self, var_list):
        """Create the counter and the slots of every Variable in `var_list` now (what the
        first `apply_gradients` would do). Call it outside an `ag.function` to keep Variable
        creation out of tracing."""
        _ = self.iterations
        for var in var_list:
            if not isinstance(var, Variable):
                raise TypeError(f"{self.name} optimizes ag.Variables; got {var!r}")
            if id(var) in self._slots:
                continue
            base = var.name.split(":")[0]
            slots = {name: self._make(np.zeros(var.shape, var.dtype), f"{base}/{name}")
                     for name in self._SLOTS}
            self._slot_variables.append(slots)
            self._slots[id(var)] = (var, slots)

    # -- updating --------------------------------------------------------------------------

    def _lr(self):
        lr = self.learning_rate
        if callable(lr) and not isinstance(lr, (Variable, Tensor)):
            lr = lr()
        return lr.read_value() if isinstance(lr, Variable) else lr

    def apply_gradients(self, grads_and_vars):
        """Update each Variable from its gradient; pairs with a None gradient are skipped
        (with a warning, as TensorFlow warns). Returns the iteration counter."""
        pairs = list(grads_and_vars)
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"{self.name}.apply_gradients takes (gradient, variable) "
                                f"pairs, e.g. zip(grads, variables); got {pair!r}")
            if not isinstance(pair[1], Variable):
                raise TypeError(f"{self.name}.apply_gradients: {pair[1]!r} is not an "
                                "ag.Variable (only Variables can be updated)")
        missing = [v.name for g, v in pairs if g is None]
        pairs = [(g, v) for g, v in pairs if g is not None]
        if not pairs:
            raise ValueError(f"{self.name}: no gradients provided for any variable "
                             f"({', '.join(missing) or 'the list was empty'})")
        if missing:
            warnings.warn(f"{self.name}: gradients do not exist for variables {missing} "
                          "when minimizing the loss; they are left unchanged.", stacklevel=2)
        self.build([v for _, v in pairs])
        lr = self._lr()
        step = self.iterations.read_value() + 1   # t, read before the counter moves
        for grad, var in pairs:
            grad = _cast(grad, var.dtype)
            self._update(var, grad, self._slots[id(var)][1], lr, step)
        self.iterations.assign_add(1)
        return self.iterations

    def _update(self, var, grad, slots, lr, step):
        raise NotImplementedError

    def __repr__(self):
        return f"<ag.optimizers.{type(self).__name__} {self.name!r}>"


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum: Keras's `SGD`."""

    _ag_ignored_attributes = Optimizer._ag_ignored_attributes | {"_SLOTS"}

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD"):
        super().__init__(learning_rate, name)
        momentum = _number(momentum, "momentum")
        if isinstance(momentum, float) and not 0 <= momentum <= 1:
            raise ValueError(f"SGD momentum must be between 0 and 1, got {momentum}")
        self.momentum = momentum
        self.nesterov = bool(nesterov)
        # a momentum slot only when there is momentum, as in Keras
        self._SLOTS = ("momentum",) if (momentum != 0 or nesterov) else ()

    def _update(self, var, grad, slots, lr, step):
        lr = _cast(lr, var.dtype)
        if not self._SLOTS:
            var.assign_sub(lr * grad)
            return
        mu = _cast(self.momentum, var.dtype)
        accum = slots["momentum"]
        new = mu * accum.read_value() - lr * grad
        accum.assign(new)
        var.assign_add(mu * new - lr * grad if self.nesterov else new)


class Adam(Optimizer):
    """Adam (Kingma & Ba) with Keras's defaults and its epsilon placement."""

    _SLOTS = ("m", "v")

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="Adam"):
        super().__init__(learning_rate, name)
        self.beta_1 = _number(beta_1, "beta_1")
        self.beta_2 = _number(beta_2, "beta_2")
        self.epsilon = float(epsilon)

    def _update(self, var, grad, slots, lr, step):
        dtype = var.dtype
        b1, b2 = _cast(self.beta_1, dtype), _cast(self.beta_2, dtype)
        t = _cast(step, dtype)
        one = np.asarray(1, dtype)
        alpha = _cast(lr, dtype) * np.sqrt(one - b2 ** t) / (one - b1 ** t)
        m, v = slots["m"], slots["v"]
        m_new = b1 * m.read_value() + (one - b1) * grad
        v_new = b2 * v.read_value() + (one - b2) * (grad * grad)
        m.assign(m_new)
        v.assign(v_new)
        var.assign_sub(alpha * m_new / (np.sqrt(v_new) + _cast(self.epsilon, dtype)))
