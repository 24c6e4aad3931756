"""Every example runs as a script and prints what it claims; references are computed here
with plain Python/NumPy, never pasted."""

import re

import numpy as np

from tests.examples.conftest import floats, load_example


def traces(lines):
    found = [int(l.split(":")[1]) for l in lines if l.startswith("traces:")]
    assert found, lines
    return found[-1]


# -- fizzbuzz ---------------------------------------------------------------------------------

def fizzbuzz_ref(n):
    out = []
    for i in range(1, n + 1):
        out.append("fizzbuzz" if i % 15 == 0 else "fizz" if i % 3 == 0
                   else "buzz" if i % 5 == 0 else str(i))
    return out


BRANCH_TRACES = ["Tracing for loop", "Tracing fizzbuzz branch", "Tracing fizz branch",
                 "Tracing buzz branch", "Tracing default branch"]


def test_fizzbuzz(run_example):
    out = run_example("fizzbuzz.py")
    code = "\n".join(out.section("the converted code"))
    assert "def " in code and "ag__." in code
    first = out.section("fizzbuzz(5)")
    tracing = [l for l in first if l.startswith("Tracing")]
    # Python prints run once per branch while tracing: each exactly once, before any output
    assert sorted(tracing) == sorted(BRANCH_TRACES)
    assert first[:len(tracing)] == tracing
    assert first[len(tracing):] == fizzbuzz_ref(5)
    second = out.section("fizzbuzz(20)")
    assert second == fizzbuzz_ref(20)             # no tracing lines: the graph is reused
    graph = out.section("the graph")
    top, total = (int(x) for x in re.findall(r"(\d+) nodes? at the top level, (\d+)", graph[0])[0])
    assert 0 < top < total < 60
    assert traces(graph) == 1
    assert graph[-1].startswith("draw it: autograph graph examples/fizzbuzz.py::fizzbuzz")


# -- collatz ----------------------------------------------------------------------------------

def collatz_ref(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_collatz(run_example):
    out = run_example("collatz.py")
    lines = out.section("steps to reach 1")
    results = dict(re.fullmatch(r"collatz\((\d+)\) = (\d+)", l).groups()
                   for l in lines if l.startswith("collatz("))
    assert {int(k): int(v) for k, v in results.items()} == {n: collatz_ref(n) for n in list(range(1, 31)) + [27]}
    assert collatz_ref(27) == 111
    assert traces(lines) == 1                      # one trace for every starting value

    vec = out.section("next_collatz")
    x = np.arange(1, 8)
    steps = [l for l in vec if l.startswith("next:")]
    assert len(steps) == 3
    for line in steps:
        x = np.where(x % 2 == 0, x // 2, 3 * x + 1)
        assert [int(v) for v in line.split()[1:]] == x.tolist()
    rejected = [l for l in vec if l.startswith("rejected")]
    assert [l.split(":")[0] for l in rejected] == ["rejected int64 (2, 2)", "rejected float64 (2,)"]
    assert traces(vec) == 1


# -- square_if_positive -------------------------------------------------------------------------

def test_square_if_positive(run_example):
    out = run_example("square_if_positive.py")
    lines = out.section("tensor arguments")
    pairs = [re.fullmatch(r"square_if_positive\(np\.int64\((-?\d+)\)\) = (-?\d+)", l).groups()
             for l in lines if l.startswith("square")]
    assert [(int(a), int(b)) for a, b in pairs] == [(v, v * v if v > 0 else 0) for v in (3, -2, 0, 7)]
    assert traces(lines) == 1
    floats_section = out.section("float32 arguments")
    assert floats(floats_section[0])[-1] == 1.5 * 1.5
    assert traces(floats_section) == 2
    python_ints = out.section("Python ints")
    pairs = [re.fullmatch(r"square_if_positive\((-?\d+)\) = (-?\d+)", l).groups()
             for l in python_ints if l.startswith("square")]
    assert [(int(a), int(b)) for a, b in pairs] == [(v, v * v if v > 0 else 0) for v in (4, -4, 4)]
    assert traces(python_ints) == 4                  # 4 and -4 each traced once
    code = "\n".join(out.section("the converted code"))
    assert "if_stmt" in code and "x * x" in code


# -- tanh_loop --------------------------------------------------------------------------------

def test_tanh_loop(run_example):
    out = run_example("tanh_loop.py")
    x = np.random.default_rng(0).uniform(size=5).astype(np.float32)
    seen = []
    while np.sum(x) > 1:
        seen.append(x)
        x = np.tanh(x)
    printed = [floats(l) for l in out.section("the loop prints")]
    assert len(printed) == len(seen) > 1             # ag.print ran once per iteration
    for got, want in zip(printed, seen):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    result = out.section("result")
    np.testing.assert_allclose(floats(result[0]), x, atol=1e-6)          # printed with 6 decimals
    np.testing.assert_allclose(floats(result[1]), [np.sum(x)], atol=1e-6)


# -- dynamic_rnn ------------------------------------------------------------------------------

def test_dynamic_rnn(run_example):
    out = run_example("dynamic_rnn.py")
    data = np.random.default_rng(0).uniform(size=(2, 3, 4)).astype(np.float32)
    want = np.cumsum(data, axis=1)                   # state_t = inp_t + state_{t-1}, state_-1 = 0
    title = [t for t, _ in out.sections if t.startswith("states")][0]
    assert title == "states: shape (2, 3, 4), dtype float32"
    rows = [l for l in out.section("states") if l.startswith("batch")]
    for line in rows:
        b, t = (int(v) for v in re.match(r"batch (\d+) time (\d+):", line).groups())
        np.testing.assert_allclose(floats(line.split(":")[1]), want[b, t], atol=1e-6)  # 6 decimals
    assert len(rows) == 6


# -- retracing --------------------------------------------------------------------------------

def test_retracing(run_example):
    out = run_example("retracing.py")
    keyed = out.section("arrays are keyed")
    assert len([l for l in keyed if l.startswith("Tracing with")]) == 3
    values = [l for l in keyed if not l.startswith(("Tracing", "traces"))]
    assert values[0] == "2" and float(values[1]) == 2.2 and values[2] == "[2 4 6]" and values[3] == "10"
    assert traces(keyed) == 3
    signatures = "\n".join(out.section("the concrete signatures"))
    assert signatures.count("double(a)") == 3 and "int64" in signatures and "float64" in signatures

    python_values = out.section("Python values")
    assert [l for l in python_values if l.startswith("Tracing")] == [
        "Tracing with num_steps = 10", "Tracing with num_steps = 20"]
    assert [l for l in python_values if l.startswith("Executing")] == [
        "Executing with num_steps = 10", "Executing with num_steps = 20"]
    assert traces(python_values) == 2
    arrays = out.section("arrays reuse")
    assert len([l for l in arrays if l.startswith("Tracing")]) == 1
    assert [l for l in arrays if l.startswith("Executing")] == [
        "Executing with num_steps = 10", "Executing with num_steps = 20"]
    assert traces(arrays) == 3

    sig = out.section("input_signature")
    assert len([l for l in sig if l.startswith("Tracing")]) == 1
    assert "[1 2 3]" in sig and "[1 2 3 4 5]" in sig
    relaxed = out.section("reduce_retracing")
    assert [float(l) for l in relaxed if not l.startswith(("Tracing", "traces"))] == [1, 3, 6, 10]
    assert traces(relaxed) == 2
    separate = out.section("separate Function")
    assert separate == ["Tracing!", "Executing", "Tracing!", "Executing"]


# -- python_vs_tensor_loops ---------------------------------------------------------------------

def test_python_vs_tensor_loops(run_example):
    out = run_example("python_vs_tensor_loops.py")

    def parse(lines):
        rows = []
        for l in lines:
            m = re.search(r"(\d+) nodes \((\d+) with nested\), loss = (-?\d+)", l)
            rows.append(tuple(int(v) for v in m.groups()))
        return rows

    def loss_ref(n):
        return sum(abs((2 * i + 1) - i) for i in range(n))

    listed = parse(out.section("a Python list"))
    tensor = parse(out.section("an array"))
    assert [r[2] for r in listed] == [loss_ref(3), loss_ref(10)]
    assert [r[2] for r in tensor] == [loss_ref(3), loss_ref(10)]
    (small, _, _), (big, _, _) = listed
    assert big > small                               # unrolled: grows with the data
    assert (big - small) % 7 == 0                    # by the same amount per element
    assert tensor[0][:2] == tensor[1][:2]            # one while_loop: same size for 3 or 10
    assert tensor[1][0] < big


# -- variables --------------------------------------------------------------------------------

def test_variables(run_example):
    out = run_example("variables.py")
    assert [floats(l)[0] for l in out.section("a counter module")] == [1, 2, 3]
    simple = out.section("plain attributes")
    assert floats(simple[0]) == [20.0] and floats(simple[1])[:2] == [5.0, 20.0]
    better = out.section("Variables are read")
    assert floats(better[0]) == [20.0] and floats(better[1]) == [5.0, 25.0]
    created = out.section("a Variable may only")
    assert floats(created[0]) == [2.0]                # the new Variable (1.0) + x (1.0)
    assert created[1].startswith("second trace: ValueError:")


# -- training_loop ----------------------------------------------------------------------------

def test_training_loop(run_example):
    out = run_example("training_loop.py")
    x, y = load_example("training_loop.py").make_data()
    w = b = 0.0
    logged = []

    def run(steps, w, b):
        loss = None
        for step in range(steps):
            err = w * x + b - y
            loss = np.mean(err ** 2)
            if step % 50 == 0:
                logged.append((step, loss))
            w, b = w - 0.1 * 2.0 * np.mean(err * x), b - 0.1 * 2.0 * np.mean(err)
        return w, b, loss

    for title, steps in (("200 steps", 200), ("100 more steps", 100)):
        logged.clear()
        w, b, loss = run(steps, w, b)
        lines = out.section(title)
        steps_logged = [floats(l) for l in lines if l.startswith("step")]
        assert [int(s) for s, _ in steps_logged] == [s for s, _ in logged]
        np.testing.assert_allclose([l for _, l in steps_logged], [l for _, l in logged], rtol=1e-5)
        summary = [l for l in lines if l.startswith("w =")][0]
        np.testing.assert_allclose(floats(summary), [w, b, loss], rtol=1e-5, atol=1e-6)
    assert abs(w - 3.0) < 0.1 and abs(b - 2.0) < 0.1
    assert traces(out.section("100 more steps")) == 1


# -- logging ----------------------------------------------------------------------------------

def test_verbosity_logs_conversions_and_traces():
    import os
    import subprocess
    import sys
    from tests.examples.conftest import EXAMPLES, ROOT, Output
    # (the disk caches off: a conversion or trace loaded from them logs differently)
    env = dict(os.environ, AUTOGRAPH_VERBOSITY="1", AUTOGRAPH_CACHE_DIR="off")
    done = subprocess.run([sys.executable, os.path.join(EXAMPLES, "square_if_positive.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    log = [l for l in done.stderr.splitlines() if l.startswith("autograph:")]
    converted = [l for l in log if "converted square_if_positive" in l]
    traced = [l for l in log if "traced square_if_positive" in l]
    assert len(converted) == 1 and "square_if_positive.py:" in converted[0]
    # one log line per trace, as many as the example itself counts
    assert len(traced) == traces(Output(done.stdout).section("Python ints")) == 4
    assert "int64" in traced[0] and "float32" in traced[1]
    assert "4" in traced[2] and "-4" in traced[3]
    # silent by default
    quiet = subprocess.run([sys.executable, os.path.join(EXAMPLES, "square_if_positive.py")],
                           cwd=ROOT, env=dict(os.environ, AUTOGRAPH_VERBOSITY="0"),
                           capture_output=True, text=True, timeout=120)
    assert "autograph:" not in quiet.stderr


# -- train_classifier -------------------------------------------------------------------------

def _classifier_reference(example, steps):
    """The example's training written out in NumPy: its data and initial weights, the
    backward pass by hand, Adam's update rule. Returns (loss, accuracy) per step."""
    x, labels = example.make_spirals()
    onehot = np.eye(2)[labels]
    model = example.MLP([2, example.HIDDEN, example.HIDDEN, 2])
    params = [p.numpy().copy() for layer in model.layers for p in (layer.w, layer.b)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    curve = []
    for t in range(1, steps + 1):
        acts = [x]
        for i in range(0, len(params), 2):
            z = acts[-1] @ params[i] + params[i + 1]
            acts.append(z if i == len(params) - 2 else np.tanh(z))
        logits = acts[-1]
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        curve.append((-np.mean(np.sum(onehot * log_probs, axis=1)),
                      np.mean(logits.argmax(axis=1) == labels)))
        delta = (np.exp(log_probs) - onehot) / len(x)
        grads = [None] * len(params)
        for i in range(len(params) - 2, -1, -2):
            grads[i], grads[i + 1] = acts[i // 2].T @ delta, delta.sum(axis=0)
            if i:
                delta = (delta @ params[i].T) * (1 - acts[i // 2] ** 2)
        for k, g in enumerate(grads):
            m[k] = 0.9 * m[k] + 0.1 * g
            v[k] = 0.999 * v[k] + 0.001 * g * g
            params[k] = params[k] - 0.02 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * \
                m[k] / (np.sqrt(v[k]) + 1e-7)
    return curve


def test_train_classifier(run_example):
    out = run_example("train_classifier.py")
    example = load_example("train_classifier.py")
    reference = _classifier_reference(example, example.STEPS)
    logged_steps = sorted({*range(0, example.STEPS, example.LOG_EVERY), example.STEPS - 1})
    for title in ("traced", "the same under"):
        lines = [floats(l) for l in out.section(title) if l.startswith("step")]
        assert [int(s) for s, _, _ in lines] == logged_steps
        np.testing.assert_allclose([(loss, acc) for _, loss, acc in lines],
                                   [reference[s] for s in logged_steps], rtol=1e-8, atol=1e-12)
    traced = out.section("traced")
    assert traces(traced) == 1
    assert [l for l in traced if l.startswith("parameters:")] == [
        "parameters: dense_0/b, dense_0/w, dense_1/b, dense_1/w, dense_2/b, dense_2/w"]
    summary = out.section("the same under")
    assert floats([l for l in summary if l.startswith("largest loss difference")][0])[0] < 1e-9
    final = floats([l for l in summary if l.startswith("final training accuracy")][0])[0]
    assert final >= 0.95 and reference[-1][1] >= 0.95
    assert reference[-1][0] < 0.1 * reference[0][0]     # it learned: the loss fell tenfold


def test_train_classifier_curves_agree_in_process():
    # the two modes, run here (not from printed text): the same numbers step by step
    example = load_example("train_classifier.py")
    traced, step, _ = example.train(steps=40, log=lambda _: None)
    eager, _, _ = example.train(steps=40, eagerly=True, log=lambda _: None)
    np.testing.assert_allclose(traced, eager, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(traced, _classifier_reference(example, 40), rtol=1e-8)
    assert step.experimental_get_tracing_count() == 1
