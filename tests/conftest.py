"""The suite converts and traces every function afresh: the disk caches (of converted
source, autograph.source.disk_cache, and of traces, autograph.function.trace_cache) are off,
so no run depends on an earlier one and nothing is written into the user's cache directory.
tests/source/test_disk_cache.py and tests/function/test_trace_cache.py turn them on in a
temporary directory.

`AUTOGRAPH_TEST_CACHE_DIR=dir` runs the suite with both caches on in `dir` instead: run it
twice and the second run loads what the first stored (the check that a loaded trace
behaves like a traced one, across the whole suite)."""

import importlib.util
import os

import pytest

os.environ["AUTOGRAPH_CACHE_DIR"] = os.environ.get("AUTOGRAPH_TEST_CACHE_DIR", "off")
# generated code's fused chains (runtime/exec/fused_chains.py) compile a Numba kernel per
# new structure on a function's third call: seconds per test file with the caches off.
# tests/runtime/test_fused_chains.py turns them on (AUTOGRAPH_TEST_FUSE=1: everywhere).
os.environ["AUTOGRAPH_FUSE"] = os.environ.get("AUTOGRAPH_TEST_FUSE", "0")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """The disk caches on, in a folder of the test's own (and the per-user key that signs
    their entries outside it, not in the home folder: issue 29)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(folder))
    monkeypatch.setenv("AUTOGRAPH_CACHE_KEY", str(tmp_path / "key" / "cache-key"))
    return folder


def load_module(tmp_path, text, name):
    """Module `name` with source `text`, from a file in `tmp_path`: a new code object every
    time, so autograph's in-memory caches miss, as in another process."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
