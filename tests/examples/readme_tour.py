"""The README's tour (and docs/generated_code.md) are executable: every ```python block runs,
in order, in one namespace, and the ```text block right after it is the output it printed.
A ```console block holds `$ autograph ...` commands, each followed by what it printed
(stdout, then stderr); they run with the current interpreter from the repository root.

    python -m tests.examples.readme_tour           # check (exit status 1 on a difference)
    python -m tests.examples.readme_tour --write   # paste fresh outputs into the files

In README.md only the tour section counts (from "## A tour" to "## Benchmarks"); in the other
files, the whole file. tests/examples/test_readme_tour.py runs the check, so the pasted output
cannot go stale: when the library's output changes on purpose, re-run with --write.
"""

import contextlib
import io
import linecache
import os
import re
import sys
import traceback
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
START, END = "## A tour", "## Benchmarks"
FILES = [README, os.path.join(ROOT, "docs", "generated_code.md"),
         os.path.join(ROOT, "docs", "limitations.md"), os.path.join(ROOT, "docs", "command_line.md"),
         os.path.join(ROOT, "docs", "tracing.md"), os.path.join(ROOT, "docs", "training.md"),
         os.path.join(ROOT, "docs", "saved_model.md")]

_BLOCK = re.compile(r"```python\n(.*?)```\n(?:\n```text\n(.*?)```\n)?", re.S)


def tour_span(text):
    """The part of the text whose blocks run: the tour section of the README, else all."""
    if START not in text:
        return 0, len(text)
    start = text.index(START)
    end = text.index(END, start)
    return start, end


def blocks(text):
    """(code, printed output or None, match) for each python block of the tour section."""
    start, end = tour_span(text)
    return [(m.group(1), m.group(2), m) for m in _BLOCK.finditer(text, start, end)]


_CONSOLE = re.compile(r"```console\n(.*?)```\n", re.S)


def console_blocks(text):
    start, end = tour_span(text)
    return [(m.group(1), m) for m in _CONSOLE.finditer(text, start, end)]


def run_console(block):
    """The block with every `$ autograph ...` command's output replaced by a fresh run.

    Commands run in this process through autograph.cli.main (as the console script does,
    from the repository root); the output is stdout, then stderr."""
    import shlex
    from autograph import cli
    out = []
    for line in block.splitlines(keepends=True):
        if not line.startswith("$ "):
            continue                       # old output: dropped, regenerated below
        out.append(line)
        argv = shlex.split(line[2:])
        assert argv[0] == "autograph", f"console blocks run autograph commands only: {line}"
        stdout, stderr = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                cli.main(argv[1:], out=stdout)
        finally:
            os.chdir(cwd)
        # paths under the checkout are shown relative to it, so any clone gives the same text
        out.append((stdout.getvalue() + stderr.getvalue()).replace(ROOT + os.sep, ""))
    return "".join(out)


def run(codes, label="README.md"):
    """Run the code blocks in one namespace; returns what each printed."""
    namespace = {"__name__": "__readme__"}
    outputs = []
    for i, code in enumerate(codes):
        filename = f"<{label} block {i + 1}>"
        # let inspect.getsource (and so ag.to_code) find the source of functions defined here
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("ignore")       # warnings go to stderr, not into the docs
            try:
                exec(compile(code, filename, "exec"), namespace)
            except Exception:
                raise RuntimeError(f"{label} block {i + 1} failed:\n{code}\n"
                                   f"{traceback.format_exc()}") from None
        outputs.append(buffer.getvalue())
    return outputs


def check(text, label="README.md"):
    """(block number, expected, got) for every block whose pasted output differs."""
    found = blocks(text)
    outputs = run([code for code, _, _ in found], label)
    diffs = []
    for i, ((code, expected, _), got) in enumerate(zip(found, outputs)):
        if (expected or "") != got:
            diffs.append((i + 1, expected, got))
    for i, (block, _) in enumerate(console_blocks(text)):
        got = run_console(block)
        if got != block:
            diffs.append((f"console {i + 1}", block, got))
    return diffs


def write(text, label="README.md"):
    """The text with every python block followed by its fresh output."""
    found = blocks(text)
    outputs = run([code for code, _, _ in found], label)
    pieces, last = [], 0
    for (code, _, m), got in zip(found, outputs):
        pieces.append(text[last:m.start()])
        pieces.append(f"```python\n{code}```\n")
        if got:
            pieces.append(f"\n```text\n{got}```\n")
        last = m.end()
    pieces.append(text[last:])
    text = "".join(pieces)
    pieces, last = [], 0
    for block, m in console_blocks(text):
        pieces.append(text[last:m.start()])
        pieces.append(f"```console\n{run_console(block)}```\n")
        last = m.end()
    pieces.append(text[last:])
    return "".join(pieces)


def main(argv):
    paths = [a for a in argv if not a.startswith("--")] or FILES
    status = 0
    for path in paths:
        with open(path) as f:
            text = f.read()
        if "--write" in argv:
            with open(path, "w") as f:
                f.write(write(text, os.path.basename(path)))
            print(f"wrote fresh outputs into {path}")
            continue
        for n, expected, got in check(text, os.path.basename(path)):
            print(f"{path} block {n}: expected\n{expected}\ngot\n{got}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
