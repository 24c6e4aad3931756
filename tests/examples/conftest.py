"""Helpers for the example tests: run an example script as a user would, split its output."""

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")

FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


class Output:
    """An example's stdout, cut into sections at its `== title ==` lines."""

    def __init__(self, text):
        self.text = text
        self.sections = []          # (title, [lines])
        for line in text.splitlines():
            m = re.match(r"^== (.*) ==$", line)
            if m:
                self.sections.append((m.group(1), []))
            elif self.sections:
                self.sections[-1][1].append(line)

    def section(self, start):
        """The lines of the first section whose title starts with `start`."""
        for title, lines in self.sections:
            if title.startswith(start):
                return lines
        raise AssertionError(f"no section starting {start!r} in:\n{self.text}")

    def sections_starting(self, start):
        return [lines for title, lines in self.sections if title.startswith(start)]


def floats(line):
    return [float(x) for x in FLOAT.findall(line)]


@pytest.fixture(scope="session")
def run_example():
    cache = {}

    def run(name):
        if name not in cache:
            # the checkout's autograph first: a script's own folder (examples/) is its
            # sys.path[0], so without this an installed copy elsewhere would be imported
            path = os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
            done = subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], cwd=ROOT,
                                  capture_output=True, text=True, timeout=120,
                                  env={**os.environ, "PYTHONPATH": path})
            assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
            cache[name] = Output(done.stdout)
        return cache[name]

    return run


def load_example(name):
    """Import an example as a module (its main() does not run) to reuse its input data."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"example_{name[:-3]}", os.path.join(EXAMPLES, name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
