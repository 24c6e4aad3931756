"""python -m benchmarks.loop_weight_gradients [--rounds N] [--json PATH] [--kept-heap] [--shapes]

Benchmark case 11's RNN (`h = tanh(h @ W + x_t)`, T = 1000, H = 64, B = 32, float64):
what storing the states costs, and what computing the weight gradient after the loop
would be worth. One process, CPU time (user + system, `resource.getrusage`), BLAS pinned
to one thread, medians of interleaved rounds; page faults per call counted
(`ru_minflt`); the load average recorded.

1. autograph: the forward pass, `value_and_grad` with its stacks in pooled contiguous
   buffers (autodiff/stack_buffers.py, the default), and the same graph with the stacks as
   lists of per-step arrays (the buffers turned off: `MIN_BYTES` raised), alternating.
2. Hand-written backward loops over the states stored in one contiguous (T + 1, B, H)
   buffer (what the stack buffers give), pricing issue 30's proposal to accumulate the
   weight gradient `sum_t h[t-1].T @ dz[t]` after the loop:
   - `per_step`: the product and the add in the loop (what autograph generates);
   - `one_matmul_after`: dz written into a (T, B, H) buffer with `out=` (no copy), the
     states buffer read as (T*B, H) without a copy, one (H, T*B) @ (T*B, H) product after
     the loop: the proposal at its cheapest;
   - `chunks_of_K`: dz into a K-step buffer that stays in cache, one (H, K*B) @ (K*B, H)
     product per K steps over the matching K states (a view of the states buffer).
3. `--shapes`: at several (T, B, H), the weight gradient's accumulation alone over factors
   already stored, per step (`acc += h[t-1].T @ dz[t]`) against one product, and
   autograph's whole value_and_grad with the weight gradient per step or deferred
   (autodiff/loop_weight_grads.py; its rule `_pays` forced off while tracing the
   per-step one). Where B is small against H the per-step form is a rank-B update of the
   whole H x H accumulator every step (memory-bound), and one product wins by far.
"""

import argparse
import json
import os
import resource

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

T, H, B = 1000, 64, 32


def _data():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((H, H)) / np.sqrt(H)
    xs = 0.5 * rng.standard_normal((T, B, H))
    return W, xs, np.zeros((B, H))


def _autograph():
    import autograph as ag
    from autograph.autodiff import stack_buffers
    from benchmarks.cases.rnn_grad import make_loss
    W, xs, h0 = _data()
    fwd, vg = ag.function(makemake_loss(ag)), ag.value_and_grad(makemake_loss(ag))
    fwd(W, xs, h0), vg(W, xs, h0)
    on = stack_buffers.MIN_BYTES

    def lists():
        stack_buffers.MIN_BYTES = 1 << 62
        try:
            return vg(W, xs, h0)
        finally:
            stack_buffers.MIN_BYTES = on
    np.testing.assert_array_equal(lists()[1], vg(W, xs, h0)[1])
    return {"forward": lambda: fwd(W, xs, h0),
            "value_and_grad (stack buffers)": lambda: vg(W, xs, h0),
            "value_and_grad (stacks as lists)": lists}


def _hand():
    W, xs, h0 = _data()
    S = np.empty((T + 1, B, H))
    S[0] = h = h0
    for t in range(T):
        m = h @ W
        h = np.tanh(np.add(m, xs[t], out=m), out=m)
        S[t + 1] = h
    WT = np.ascontiguousarray(W.T)
    dz_all = np.empty((T, B, H))

    def per_step():
        ct, acc = np.ones((B, H)), np.zeros((H, H))
        for j in range(T, 0, -1):
            g = S[j]
            m = g * g
            d = np.multiply(ct, np.subtract(1.0, m, out=m), out=m)
            ct = d @ WT
            p = S[j - 1].T @ d
            acc = np.add(acc, p, out=p)
        return acc

    def one_matmul_after():
        ct = np.ones((B, H))
        for j in range(T, 0, -1):
            g = S[j]
            m = g * g
            d = np.multiply(ct, np.subtract(1.0, m, out=m), out=dz_all[j - 1])
            ct = d @ WT
        return S[:T].reshape(-1, H).T @ dz_all.reshape(-1, H)

    def chunks(K):
        def run():
            ct, acc = np.ones((B, H)), np.zeros((H, H))
            buf = np.empty((K, B, H))
            for j in range(T, 0, -1):
                g = S[j]
                m = g * g
                k = (j - 1) % K
                d = np.multiply(ct, np.subtract(1.0, m, out=m), out=buf[k])
                ct = d @ WT
                if k == 0:          # rows j-1 ... j-1+n-1 are in slots 0 ... n-1
                    n = min(K, T - (j - 1))
                    acc += S[j - 1:j - 1 + n].reshape(-1, H).T @ buf[:n].reshape(-1, H)
            return acc
        return run
    want = per_step()
    out = {"hand backward: per_step": per_step, "hand backward: one_matmul_after":
           one_matmul_after}
    for K in (8, 32):
        out[f"hand backward: chunks_of_{K}"] = chunks(K)
    for f in out.values():
        np.testing.assert_allclose(f(), want, rtol=1e-10, atol=1e-12)
    return out


SHAPES = [(1000, 32, 64), (1000, 8, 128), (1000, 4, 128), (1000, 1, 64), (1000, 1, 256),
          (1000, 4, 256), (1000, 8, 256), (500, 1, 512)]


def _shapes(rounds):
    """Per shape: the accumulation alone (per step / one product over stored factors) and
    autograph's whole value_and_grad with the weight gradient deferred or not (the rule
    forced off while the per-step function is traced), interleaved."""
    import autograph as ag
    from autograph.autodiff import loop_weight_grads
    from benchmarks.cases.rnn_grad import make_loss
    print("T, B, H: accumulation alone (per step / one product); autograph value_and_grad "
          "per step / deferred / forward (CPU medians)")
    rows = []
    for t, b, h in SHAPES:
        rng = np.random.default_rng(0)
        S, D = np.tanh(rng.standard_normal((t + 1, b, h))), rng.standard_normal((t, b, h))

        def per_step():
            acc = np.zeros((h, h))
            for j in range(t, 0, -1):
                p = S[j - 1].T @ D[j - 1]
                acc = np.add(acc, p, out=p)
            return acc

        def one_product():
            return S[:t].reshape(-1, h).T @ D.reshape(-1, h)
        np.testing.assert_allclose(per_step(), one_product(), rtol=1e-9, atol=1e-9)
        W = rng.standard_normal((h, h)) / np.sqrt(h)
        xs, h0 = 0.5 * rng.standard_normal((t, b, h)), np.zeros((b, h))
        fwd, new = ag.function(make_loss(ag)), ag.value_and_grad(make_loss(ag))
        real = loop_weight_grads._pays
        loop_weight_grads._pays = lambda *a: False
        try:
            old = ag.value_and_grad(make_loss(ag))
            old(W, xs, h0)
        finally:
            loop_weight_grads._pays = real
        fwd(W, xs, h0), new(W, xs, h0)
        np.testing.assert_allclose(new(W, xs, h0)[1], old(W, xs, h0)[1], rtol=1e-10,
                                   atol=1e-12)
        fns = {"acc_per_step": per_step, "acc_one_product": one_product,
               "vg_per_step": lambda: old(W, xs, h0), "vg_deferred": lambda: new(W, xs, h0),
               "forward": lambda: fwd(W, xs, h0)}
        got = {k: [] for k in fns}
        for r in range(rounds):
            for k, fn in (list(fns.items()) if r % 2 == 0 else list(fns.items())[::-1]):
                got[k].append(_measure(fn)[0])
        m = {k: float(np.median(v)) for k, v in got.items()}
        deferred = bool(real(b, h, h, 8))
        print(f"  T={t} B={b} H={h}: {m['acc_per_step'] * 1e3:8.2f} / "
              f"{m['acc_one_product'] * 1e3:7.2f} ms; vg {m['vg_per_step'] * 1e3:8.2f} / "
              f"{m['vg_deferred'] * 1e3:8.2f} / {m['forward'] * 1e3:7.2f} ms "
              f"({'deferred by the rule' if deferred else 'left per step by the rule'})")
        rows.append({"T": t, "B": b, "H": h, "median_cpu_s": m, "rule_defers": deferred})
    return rows


def _measure(fn):
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    fn()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime,
            r1.ru_minflt - r0.ru_minflt)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.loop_weight_gradients")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--json", default=None)
    p.add_argument("--kept-heap", action="store_true",
                   help="first allocate and free one 8 MB array: glibc then keeps freed "
                        "heap memory (its trim threshold rises), as in `python -m "
                        "benchmarks`, where numpy_hand's buffers do the same")
    p.add_argument("--shapes", action="store_true",
                   help="only the accumulation alone at several (T, B, H)")
    args = p.parse_args(argv)
    if args.shapes:
        rows = _shapes(max(3, args.rounds // 3))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"shapes": rows, "load_average": os.getloadavg()[0],
                           "numpy": np.__version__}, f, indent=1)
        return
    if args.kept_heap:
        big = np.ones((1 << 20,))
        del big
    samples, faults = {}, {}
    load = [os.getloadavg()[0]]
    # the autograph group first, in a process that has not yet freed a large array: glibc
    # raises its trim threshold after the first free of a large (mmapped) block, after
    # which freed heap memory is kept and the per-step arrays no longer fault; a user's
    # process may or may not be in that state (the hand group's buffers put it there)
    for make in (_autograph, _hand):
        items = list(make().items())
        for name, _ in items:
            samples[name], faults[name] = [], []
        for r in range(args.rounds):
            for name, fn in (items if r % 2 == 0 else items[::-1]):
                cpu, flt = _measure(fn)
                samples[name].append(cpu)
                faults[name].append(flt)
    load.append(os.getloadavg()[0])
    med = {k: float(np.median(v)) for k, v in samples.items()}
    flt = {k: float(np.median(v)) for k, v in faults.items()}
    print(f"T={T} H={H} B={B} float64, CPU (user+sys) medians of {args.rounds} interleaved "
          f"rounds, load average {load[0]:.2f} -> {load[1]:.2f}")
    for name, m in med.items():
        print(f"  {name:40s} {m * 1e3:8.2f} ms  {flt[name]:7.0f} page faults")
    fwd = med["forward"]
    ratios = {k: med[k] / fwd for k in med if k.startswith("value_and_grad")}
    for k, v in ratios.items():
        print(f"{k} / forward: {v:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"T": T, "H": H, "B": B, "rounds": args.rounds, "load_average": load,
                       "median_cpu_s": med, "median_page_faults": flt, "ratios": ratios,
                       "samples_cpu_s": samples, "numpy": np.__version__}, f, indent=1)


if __name__ == "__main__":
    main()
