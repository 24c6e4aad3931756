"""The disk cache of converted source: a second process (here: a new code object from the
same file, with the in-memory caches bypassed) loads the conversion without parsing or
running a pass, and gets the same function, source and error locations."""

import json
import os
import sys
import traceback

import numpy as np
import pytest

import autograph as ag
from autograph import api, config
from autograph.converters import pipeline
from autograph.source import cache_auth, disk_cache
from tests.conftest import load_module

MODULE = '''
import numpy as np

SCALE = 3

def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps

def scaled(x):
    if np.sum(x) > 0:
        x = x * SCALE
    else:
        x = x[10]          # fails when traced with a short x
    return x
'''


def _module(tmp_path, text=MODULE, name="cached_mod"):
    return load_module(tmp_path, text, name)


def _no_passes(monkeypatch):
    def refuse(node, ctx):
        raise AssertionError("converted again instead of loading from the disk cache")
    monkeypatch.setattr(pipeline, "convert", refuse)


def test_second_conversion_loads_from_disk(tmp_path, cache_dir, monkeypatch):
    first = _module(tmp_path)
    code_first = ag.to_code(first.collatz)
    assert ag.function(first.collatz)(np.int64(27)) == 111
    disk_cache.flush()    # (records are written at exit, or in batches)
    files = list(cache_dir.rglob("*.agc"))
    assert len(files) == 1
    record = disk_cache.decode(disk_cache.read(str(files[0])).decode())
    assert record["source_text"] == code_first and "ag__.while_stmt" in record["module_text"]

    _no_passes(monkeypatch)
    second = _module(tmp_path)
    assert second.collatz.__code__ is not first.collatz.__code__
    assert ag.to_code(second.collatz) == code_first
    assert ag.function(second.collatz)(np.int64(27)) == 111
    assert ag.function(second.collatz)(np.int64(6)) == 8


def test_errors_from_cached_code_name_the_users_line(tmp_path, cache_dir, monkeypatch):
    x = -np.ones(3)
    with pytest.raises(Exception) as first:
        ag.function(_module(tmp_path).scaled)(x)
    disk_cache.flush()
    _no_passes(monkeypatch)
    with pytest.raises(Exception) as second:
        ag.function(_module(tmp_path).scaled)(x)
    assert type(first.value) is type(second.value)
    assert str(first.value) == str(second.value)
    shown = "".join(traceback.format_exception(second.value))
    assert "cached_mod.py" in shown and "x = x[10]" in shown, shown
    np.testing.assert_allclose(ag.function(_module(tmp_path).scaled)(np.ones(12)), 3 * np.ones(12))


def test_key_changes_with_the_file_and_with_what_names_stand_for(tmp_path, cache_dir):
    mod = _module(tmp_path)
    k = disk_cache.key(mod.collatz)
    assert k == disk_cache.key(_module(tmp_path).collatz)
    assert k != disk_cache.key(_module(tmp_path, MODULE + "\n# edited\n").collatz)
    other = _module(tmp_path)
    other.np = sys                          # `np` now names another module
    assert disk_cache.key(other.scaled) != disk_cache.key(_module(tmp_path).scaled)
    assert disk_cache.key(lambda x: x) is None


def test_an_edited_converter_changes_the_key_in_a_checkout(tmp_path, cache_dir, monkeypatch):
    """In a checkout the key names every converter file's size and time, so an edited pass
    never meets an old conversion; an installed package (site-packages) is keyed by its
    version alone (no scan of its files)."""
    from autograph import frames
    root = tmp_path / "checkout" / "autograph"
    for sub in ("converters", "analysis", "source", "runtime/numpy"):
        (root / sub).mkdir(parents=True)
        (root / sub / "a_pass.py").write_text("x = 1\n")
    (root / "operators").mkdir()
    (root / "operators" / "py_builtins.py").write_text("BUILTINS = {}\n")
    (root / "__init__.py").write_text("")
    monkeypatch.setattr(ag, "__file__", str(root / "__init__.py"))
    mod = _module(tmp_path)

    def key_now():
        monkeypatch.setattr(disk_cache, "_fingerprint", None)
        return disk_cache.key(mod.collatz)

    installed_check = disk_cache._installed
    assert not installed_check(str(root), frames)
    site = [d for d in frames.library_dirs() if "site-packages" in d or "dist-packages" in d]
    if site:
        assert installed_check(os.path.join(site[0], "autograph"), frames)
    before = key_now()
    assert before == key_now()
    (root / "converters" / "a_pass.py").write_text("x = 2  # edited\n")
    assert key_now() != before
    os.utime(root / "analysis" / "a_pass.py", ns=(1, 1))   # same size, another time
    edited = key_now()
    assert edited != before
    # the tables conversion reads: packing's CONVERTS, the builtins operators replace
    (root / "runtime" / "numpy" / "a_pass.py").write_text("CONVERTS = 2\n")
    assert key_now() != edited
    edited = key_now()
    (root / "operators" / "py_builtins.py").write_text("BUILTINS = {1: 2}\n")
    assert key_now() != edited
    edited = key_now()
    (root / "frames.py").write_text("LIBRARY = 1\n")     # a file that was missing
    assert key_now() != edited
    edited = key_now()
    # an installed autograph: its version alone, without statting its files
    monkeypatch.setattr(disk_cache, "_installed", lambda root, frames: True)
    monkeypatch.setattr(disk_cache.os, "scandir", None)    # a scan would fail here
    installed = key_now()
    assert installed not in (before, edited)
    (root / "converters" / "a_pass.py").write_text("x = 3\n")
    assert key_now() == installed


def test_off_by_config_or_environment(tmp_path, cache_dir, monkeypatch):
    config.set_disk_cache(False)
    try:
        ag.to_code(_module(tmp_path).collatz)
    finally:
        config.set_disk_cache(True)
    assert not cache_dir.exists()
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", "off")
    assert disk_cache.directory() is None
    ag.to_code(_module(tmp_path).collatz)
    assert not cache_dir.exists()


def test_unreadable_or_foreign_files_are_ignored(tmp_path, cache_dir):
    mod = _module(tmp_path)
    k = disk_cache.key(mod.collatz)
    path = cache_dir / k[:2] / f"{k}.agc"
    os.makedirs(path.parent)
    path.write_text("{not json")
    assert ag.function(mod.collatz)(np.int64(27)) == 111
    path.write_text(json.dumps({"format": 999}))
    assert ag.function(_module(tmp_path).collatz)(np.int64(27)) == 111
    disk_cache.flush()
    good = disk_cache.read(str(path)).decode()
    assert disk_cache.decode(good, k)["inner_name"] == "collatz"
    # cut short, stored under another key, another format: each is ignored, even signed
    for bad, key in ((good[:-7], k), (good, "0" * 64), (good.replace("\n2\n", "\n9\n", 1), k)):
        assert disk_cache.decode(bad, key) is None
        path.write_bytes(cache_auth.sign(path.name.encode(), bad.encode()))
        assert ag.function(_module(tmp_path).collatz)(np.int64(27)) == 111
    assert api._by_code is not None


def test_autograph_cache_0_turns_it_off(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("AUTOGRAPH_CACHE", "0")
    assert disk_cache.directory() is None
    monkeypatch.setenv("AUTOGRAPH_CACHE", "1")
    assert disk_cache.directory() == str(tmp_path)
