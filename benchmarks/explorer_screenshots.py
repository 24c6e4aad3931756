"""Screenshots of the explorer page for docs/explorer.md (docs/images/explorer_*.png).

    python -m benchmarks.explorer_screenshots            # writes docs/images/explorer_*.png
    python -m benchmarks.explorer_screenshots --out DIR  # elsewhere (and keeps the HTML)

Three pages, each rendered by headless Chromium (Debian's `chromium` package) with one line
of the user's selected by the page's URL fragment (`#line=N`):
- collatz (examples/collatz.py), the line `n = n // 2` selected;
- the gradient of the RNN below, profiled (`ag.explore(..., gradient=True, profile=True)`):
  each source line's time and the bytes it stores for the backward pass, the step line
  selected (its forward nodes and the backward loop's nodes of its rule marked);
- the training loop (examples/training_loop.py: a GradientTape inside a staged loop),
  profiled, the loss line selected.

Not a benchmark (nothing is timed to be judged): it lives here beside the other scripts
that regenerate what the docs show. The PNGs are kept small (a few hundred KB at most).
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import autograph as ag

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rnn_loss(W, xs, h):
    for t in ag.range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h)
    return np.sum(h * h)


def chromium():
    """The path of a Chromium that runs headless here, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path is None:
            continue
        try:   # (Ubuntu's chromium-browser may be a stub asking for snap)
            done = subprocess.run([path, "--version"], capture_output=True, text=True,
                                  timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0 and "chrom" in done.stdout.lower():
            return path
    return None


def _example(name):
    path = os.path.join(ROOT, "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _line(fn, text, last=False):
    """The file's line number of `fn`'s first (or last) line holding `text`."""
    import inspect
    lines, first = inspect.getsourcelines(getattr(fn, "python_function", fn))
    found = [k for k, line in enumerate(lines) if text in line]
    return first + found[-1 if last else 0]


def pages():
    """[(name, Page, line to select)] of the three pages."""
    collatz = _example("collatz").collatz
    training = _example("training_loop")
    T, B, H = 50, 8, 16
    rng = np.random.default_rng(0)
    rnn_args = (rng.standard_normal((H, H)) * 0.3, rng.standard_normal((T, B, H)),
                np.zeros((B, H)))
    x, y = training.make_data()
    train_args = (training.LinearModel(), x, y, np.int64(200), np.float64(0.1))
    return [
        ("collatz", ag.explore(collatz, np.int64(27)), _line(collatz, "n = n // 2")),
        ("rnn_gradient", ag.explore(rnn_loss, *rnn_args, gradient=True, profile=True),
         _line(rnn_loss, "h = np.tanh")),
        ("training", ag.explore(training.train, *train_args, profile=True),
         _line(training.train, "loss = np.mean((w * x + b - y) ** 2)", last=True)),
    ]


def shoot(browser, html_path, png_path, line, size=(1600, 900)):
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
             f"--screenshot={png_path}", f"file://{html_path}#line={line}"],
            capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not os.path.exists(png_path):
        raise RuntimeError(f"chromium failed on {html_path}: {done.stderr[-1000:]}")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.explorer_screenshots")
    p.add_argument("--out", default=os.path.join(ROOT, "docs", "images"))
    args = p.parse_args(argv)
    browser = chromium()
    if browser is None:
        raise SystemExit("no headless Chromium here (Debian: apt-get install chromium)")
    os.makedirs(args.out, exist_ok=True)
    keep = args.out != os.path.join(ROOT, "docs", "images")
    with tempfile.TemporaryDirectory() as tmp:
        for name, page, line in pages():
            # (the header names files relative to the repository: the same on every machine)
            page.html = page.html.replace(ROOT + os.sep, "")
            html_path = page.save(os.path.join(args.out if keep else tmp, f"{name}.html"))
            png = os.path.join(args.out, f"explorer_{name}.png")
            shoot(browser, html_path, png, line)
            print(f"{png}: {os.path.getsize(png) // 1024} KiB (line {line} selected)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
