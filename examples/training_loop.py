"""training_loop: a whole optimisation loop inside one traced function.

What it teaches:
- the loop over `ag.range(steps)` with a tensor `steps` is one while_loop node: the number
  of steps is an argument, so 100 or 10_000 steps use the same single trace;
- the model's parameters are loop variables, updated by gradient descent; the gradients of
  the mean squared error of the linear model y = w * x + b come from an `ag.GradientTape`
  inside the loop body (`tape.watch` the loop variables, `tape.gradient(loss, [w, b])`), so
  the backward pass is staged into the same while_loop as the forward pass;
- an `if` on the step counter inside the loop logs the loss with ag.print every 50 steps;
- the trained values are written back to Variables, which keep them between calls.

Run it: python examples/training_loop.py
"""

import numpy as np

import autograph as ag

TRUE_W, TRUE_B = 3.0, 2.0


def make_data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = np.linspace(-1.0, 1.0, n)
    y = TRUE_W * x + TRUE_B + 0.1 * rng.standard_normal(n)
    return x, y


class LinearModel:
    def __init__(self):
        self.w = ag.Variable(0.0)
        self.b = ag.Variable(0.0)


@ag.function
def train(model, x, y, steps, learning_rate):
    w = model.w.read_value()
    b = model.b.read_value()
    loss = np.mean((w * x + b - y) ** 2)
    for step in ag.range(steps):
        with ag.GradientTape() as tape:
            tape.watch([w, b])
            loss = np.mean((w * x + b - y) ** 2)
        dw, db = tape.gradient(loss, [w, b])
        if step % 50 == 0:
            ag.print("step", step, "loss", loss)
        w = w - learning_rate * dw
        b = b - learning_rate * db
    model.w.assign(w)
    model.b.assign(b)
    return loss


def main():
    x, y = make_data()
    model = LinearModel()
    print("== 200 steps in one call ==")
    loss = train(model, x, y, np.int64(200), np.float64(0.1))
    print(f"w = {float(model.w.read_value()):.6f}, b = {float(model.b.read_value()):.6f}, "
          f"loss = {float(loss):.6f}")
    print("== 100 more steps: same signature, no new trace, the Variables carry on ==")
    loss = train(model, x, y, np.int64(100), np.float64(0.1))
    print(f"w = {float(model.w.read_value()):.6f}, b = {float(model.b.read_value()):.6f}, "
          f"loss = {float(loss):.6f}")
    print(f"true: w = {TRUE_W}, b = {TRUE_B}")
    print(f"traces: {train.experimental_get_tracing_count()}")


if __name__ == "__main__":
    main()
