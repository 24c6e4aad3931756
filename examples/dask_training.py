"""Data-parallel training on a Dask array: per-chunk gradients on the workers, summed as a
tree, one SGD step at a time. The same steps in one process reach the same parameters.

    pip install -e '.[dask]'
    python examples/dask_training.py            # starts a local cluster of 2 processes

Only the traced graph (saved-model bytes) and the parameters travel to the workers; the
loss function below is never pickled (see docs/scaling.md).
"""

import numpy as np

import autograph as ag
import autograph.dask


def loss(params, x, y):
    """Logistic regression: the summed cross-entropy of a batch (a sum, so shard losses add)."""
    w, b = params
    logits = x @ w + b
    return np.sum(np.logaddexp(0.0, logits) - y * logits)


def make_data(n=20_000, features=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features))
    true_w = rng.normal(size=features)
    y = (x @ true_w + 0.3 * rng.normal(size=n) > 0).astype(np.float64)
    return x, y


def train(step_grad, params, steps=30, learning_rate=0.5, n=1):
    for _ in range(steps):
        value, grads = step_grad(params)
        params = [p - learning_rate * g / n for p, g in zip(params, grads)]
    return params, value / n


def main(n_workers=2, chunks=1_000, steps=30):
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    x, y = make_data()
    params = [np.zeros(x.shape[1]), np.float64(0.0)]
    local = ag.value_and_grad(loss)
    single, single_loss = train(lambda p: local(p, x, y), params, steps, n=len(y))

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        dx, dy = da.from_array(x, chunks=(chunks, -1)), da.from_array(y, chunks=chunks)
        print(f"{len(y)} examples in {dx.numblocks[0]} chunks on {n_workers} worker processes")
        spread, spread_loss = train(lambda p: autograph.dask.grad_sum(loss, p, dx, dy),
                                    params, steps, n=len(y))
    accuracy = np.mean(((x @ spread[0] + spread[1]) > 0) == (y > 0.5))
    gap = max(float(np.max(np.abs(a - b))) for a, b in zip(single, spread))
    print(f"loss per example: one process {single_loss:.6f}, Dask {spread_loss:.6f}")
    print(f"training accuracy {accuracy:.3f}; largest parameter difference {gap:.2e}")
    return single, spread


if __name__ == "__main__":
    main()
