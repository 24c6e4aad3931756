"""autograph._bundle: one file of bytecode for the modules a first call imports (issue 16).

Each test runs fresh processes on a copy of the package, so the copy's __pycache__ is the
test's own. What must hold: the modules come from the file once it is written, the answer
is the same, a module whose source changed is imported from its source (never stale
bytecode), a damaged file is ignored, and Python's rules for writing bytecode are kept."""

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from benchmarks.programs import COLLATZ

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent('''
    import json, sys, inspect
    import numpy as np
    import autograph as ag
    from autograph import _bundle
    from collatz_mod import collatz
    result = int(ag.function(collatz)(np.int64(27)))
    control_flow = sys.modules["autograph.runtime.control_flow"]
    print(json.dumps({
        "result": result,
        "served": sorted(_bundle._served),
        "loaded": sorted(m for m, mod in list(sys.modules.items())
                         if m.startswith("autograph.") and mod.__name__ == m),
        # a module under a second name stays one module (never made again from the file)
        "one_trace_type": sys.modules["autograph.function.trace_type"]
                          is sys.modules["autograph.runtime.trace_type"],
        "probe": getattr(control_flow, "BUNDLE_PROBE", None),
        "file": control_flow.__file__,
        "loader": type(control_flow.__spec__.loader).__name__,
        "source": inspect.getsource(control_flow.while_loop).splitlines()[0],
        "bundle": _bundle.path(),
    }))
''')



@pytest.fixture
def package(tmp_path):
    """A copy of autograph without bytecode, with the collatz script beside it."""
    shutil.copytree(os.path.join(ROOT, "autograph"), tmp_path / "autograph",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "script.py").write_text(SCRIPT)
    (tmp_path / "collatz_mod.py").write_text(COLLATZ)
    return tmp_path


def _run(folder, **env_changes):
    # (the trace cache off: every process traces, as a first call of a new function does)
    env = dict(os.environ, PYTHONPATH=str(folder), AUTOGRAPH_CACHE_DIR=str(folder / "cache"),
               AUTOGRAPH_TRACE_CACHE="0")
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "AUTOGRAPH_BUNDLE"):
        env.pop(name, None)
    env.update(env_changes)
    out = subprocess.run([sys.executable, str(folder / "script.py")], env=env, cwd=folder,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_second_process_imports_from_the_bundle(package):
    first = _run(package)
    assert first["result"] == 111 and first["served"] == []
    assert os.path.isfile(first["bundle"])
    assert first["bundle"].startswith(str(package / "autograph" / "__pycache__"))
    second = _run(package)
    assert second["result"] == 111
    assert first["one_trace_type"] and second["one_trace_type"]
    # every module the first call loaded beyond the two that read the file
    expected = set(second["loaded"]) - {"autograph._bundle"}
    assert set(second["served"]) == expected and len(expected) >= 25
    # the module is the real file's: its path, a source loader, inspect reads its source
    assert second["file"] == str(package / "autograph" / "runtime" / "control_flow.py")
    assert second["loader"] == "_Loader"
    assert second["source"].startswith("def while_loop(")


def test_a_changed_module_is_imported_from_its_source(package):
    _run(package)
    target = package / "autograph" / "runtime" / "control_flow.py"
    target.write_text(target.read_text() + "\nBUNDLE_PROBE = 7\n")
    changed = _run(package)
    assert changed["probe"] == 7 and changed["result"] == 111
    assert "autograph.runtime.control_flow" not in changed["served"]
    assert len(changed["served"]) >= 25             # the others still came from the file
    again = _run(package)                            # written again with the new code
    assert again["probe"] == 7
    assert "autograph.runtime.control_flow" in again["served"]


def test_same_size_edit_with_an_older_time_is_seen(package):
    """Size and time to the nanosecond: an edit that keeps the size and sets the old
    time back by one nanosecond still differs."""
    _run(package)
    target = package / "autograph" / "runtime" / "control_flow.py"
    st = os.stat(target)
    text = target.read_text()
    target.write_text(text.replace("def while_loop(", "def while_loop(", 1))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns - 1))
    out = _run(package)
    assert "autograph.runtime.control_flow" not in out["served"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other-python"])
def test_a_damaged_bundle_is_ignored(package, damage):
    path = _run(package)["bundle"]
    data = open(path, "rb").read()
    if damage == "garbage":
        data = b"\x00" * 64
    elif damage == "truncated":
        data = data[:len(data) // 2]
    else:   # another interpreter's magic number
        at = len(b"autograph-bundle\n")
        data = data[:at] + bytes(b ^ 0xFF for b in data[at:at + 4]) + data[at + 4:]
    with open(path, "wb") as f:
        f.write(data)
    out = _run(package)
    assert out["result"] == 111
    if damage != "truncated":   # a cut file still holds the modules before the cut
        assert out["served"] == []
    assert len(_run(package)["served"]) >= 25   # and it was written again


def test_no_bundle_is_written_without_bytecode(package):
    out = _run(package, PYTHONDONTWRITEBYTECODE="1")
    assert out["result"] == 111 and not os.path.exists(out["bundle"])


def test_pycache_prefix_holds_the_bundle(package, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    out = _run(package, PYTHONPYCACHEPREFIX=str(prefix))
    assert out["bundle"].startswith(str(prefix)) and os.path.isfile(out["bundle"])
    assert not os.path.exists(package / "autograph" / "__pycache__" / os.path.basename(out["bundle"]))
    assert len(_run(package, PYTHONPYCACHEPREFIX=str(prefix))["served"]) >= 25


def test_switched_off(package):
    _run(package)
    out = _run(package, AUTOGRAPH_BUNDLE="0")
    assert out["result"] == 111 and out["served"] == []


def test_a_symlink_planted_at_the_temporary_name_is_never_written_through(tmp_path,
                                                                         monkeypatch):
    """The file is written to a new temporary name (O_EXCL|O_NOFOLLOW): a symlink another
    user planted there makes the write fail (a cache: nothing written), never follows it."""
    from autograph import _bundle
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    bundle = tmp_path / "pycache" / "first-call.bundle"
    bundle.parent.mkdir()
    monkeypatch.setattr(_bundle, "path", lambda: str(bundle))
    monkeypatch.setattr(_bundle, "_served", set())     # (as if imported the normal way)
    monkeypatch.setattr(_bundle.os, "urandom", lambda n: b"\x01" * n)
    planted = f"{bundle}.{'01' * 6}.tmp"
    os.symlink(victim, planted)
    with pytest.raises(FileExistsError):
        _bundle._write()
    assert victim.read_text() == "precious" and not bundle.exists()
    os.unlink(planted)
    _bundle._write()                         # the name free: written, renamed into place
    assert bundle.read_bytes().startswith(b"autograph-bundle\n")
    assert not list(bundle.parent.glob("*.tmp"))
