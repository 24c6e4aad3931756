"""Nothing in the disk caches runs unless this user's autograph wrote it (issue 29): forged
conversions (.agc) and traces (.agt) are never executed, symlinks at an entry's name or at
any temporary name are never followed, a cache directory others may write or another user
owns is not used, and the per-user key must be this user's alone. In every case the
function still computes what plain Python does."""

import builtins
import hmac
import marshal
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

import autograph as ag
from autograph.function import trace_cache
from autograph.source import cache_auth, disk_cache
from tests.conftest import load_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = '''
import numpy as np

def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps
'''
# what a forger's code does when it runs: leaves a mark
MARK = "import builtins\nbuiltins.AG_FORGED = True\n"


@pytest.fixture(autouse=True)
def fresh_auth(tmp_path, monkeypatch):
    """Each test gets its own key file and checks its directories anew."""
    monkeypatch.setenv("AUTOGRAPH_CACHE_KEY", str(tmp_path / "keydir" / "cache-key"))
    cache_auth.reset()
    yield
    cache_auth.reset()
    disk_cache._pending.clear()
    if hasattr(builtins, "AG_FORGED"):
        del builtins.AG_FORGED


def _mod(tmp_path):
    return load_module(tmp_path, MODULE, "secure_mod")


def _entries(cache_dir):
    disk_cache.flush()
    return {p.suffix: p for p in cache_dir.rglob("*.ag?")}


def _sign_with_another_key(name, data):
    return hmac.new(os.urandom(32), name + b"\0" + data, "sha256").digest() + data


def test_the_tag_is_hmac_sha256_of_name_and_data():
    key = cache_auth.load_key()
    assert len(key) == 32
    for name, data in ((b"ab.agc", b""), (b"x" * 70, os.urandom(1000))):
        assert cache_auth.tag(name, data) == hmac.new(key, name + b"\0" + data,
                                                      "sha256").digest()
    st = os.stat(cache_auth.key_path())
    assert st.st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(cache_auth.key_path())).st_mode & 0o777 == 0o700


def test_forged_entries_never_execute(tmp_path, cache_dir, monkeypatch):
    """A conversion and a trace with a forger's code in them: unsigned, signed with
    another user's key, or signed correctly and then changed. None runs; the function
    is right; each is counted. Signed with this user's key the same code would run:
    the signature is what keeps it out."""
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    files = _entries(cache_dir)
    agc, agt = files[".agc"], files[".agt"]
    conversion = disk_cache.read(str(agc)).decode()
    trace = marshal.loads(disk_cache.read(str(agt)))
    forged_trace = dict(trace, source=MARK + trace["source"],
                        code=trace_cache._module_code(MARK + trace["source"]))
    record = disk_cache.decode(conversion)
    forged_conversion = conversion.replace(
        record["module_text"], MARK + record["module_text"]).replace(
        f"\n{len(record['module_text'])}\n", f"\n{len(MARK + record['module_text'])}\n", 1)
    assert disk_cache.decode(forged_conversion)["module_text"].startswith(MARK)
    payloads = {agc: forged_conversion.encode(), agt: marshal.dumps(forged_trace)}
    forgeries = [
        lambda p, d: d,                                                   # unsigned
        lambda p, d: _sign_with_another_key(p.name.encode(), d),          # another user
        lambda p, d: cache_auth.sign(p.name.encode(), d)[:-1] + b"\0",    # changed since
        lambda p, d: cache_auth.sign(b"other" + p.name.encode(), d),      # another entry's
    ]
    for forge in forgeries:
        for path in (agc, agt):
            # (a loaded trace needs no conversion: the .agc is read with the .agt off)
            monkeypatch.setenv("AUTOGRAPH_TRACE_CACHE", "0" if path is agc else "1")
            before = cache_auth.refused["entry"]
            path.write_bytes(forge(path, payloads[path]))
            cache_auth.reset()
            assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
            assert not hasattr(builtins, "AG_FORGED")
            assert cache_auth.refused["entry"] > before
            disk_cache.flush()           # the re-trace writes a good entry again
    # the control: the same bytes signed with this user's key are loaded and run
    disk_cache.flush()
    agt.write_bytes(cache_auth.sign(agt.name.encode(), payloads[agt]))
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    assert getattr(builtins, "AG_FORGED", False)


def test_a_forged_trace_never_runs_in_a_fresh_process(tmp_path):
    """The issue's reproducer: an edited .agt between two processes changed 111 to 42."""
    script = tmp_path / "fresh.py"
    script.write_text(MODULE + "import autograph as ag\nprint(ag.function(collatz)(np.int64(27)))\n")
    env = dict(os.environ, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"),
               AUTOGRAPH_CACHE_KEY=str(tmp_path / "keydir" / "cache-key"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run():
        return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                              text=True, check=True).stdout.split()

    assert run() == ["111"]
    (agt,) = (tmp_path / "cache").rglob("*.agt")
    blob = agt.read_bytes()
    entry = marshal.loads(blob[cache_auth.TAG_BYTES:])
    assert "return" in entry["source"]
    lines = entry["source"].splitlines()
    ret = max(i for i, line in enumerate(lines) if line.strip().startswith("return"))
    indent = lines[ret][:len(lines[ret]) - len(lines[ret].lstrip())]
    lines[ret] = indent + "return np.int64(42)"
    source = "\n".join(lines) + "\n"
    forged = marshal.dumps(dict(entry, source=source, code=trace_cache._module_code(source)))
    for data in (forged, blob[:cache_auth.TAG_BYTES] + forged):   # unsigned; old tag
        agt.write_bytes(data)
        assert run() == ["111"]


def test_symlinks_at_the_entry_or_any_temporary_name_are_never_followed(tmp_path, cache_dir,
                                                                         monkeypatch):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    files = _entries(cache_dir)
    # the temporary names: the old scheme's (<entry>.<pid>.tmp) and every name the new one
    # will try: each is a planted symlink to the victim
    names = iter(range(10_000))
    monkeypatch.setattr(cache_auth, "temp_name", lambda path: f"{path}.{next(names)}.tmp")
    for path in files.values():
        for pid in range(os.getpid() - 5, os.getpid() + 50):
            os.symlink(victim, f"{path}.{pid}.tmp")
        for i in range(12):
            os.symlink(victim, f"{path}.{i}.tmp")
    planted = {p for p in cache_dir.rglob("*.tmp")}
    # the entries themselves become symlinks to a good copy: not read (no following)
    for path in files.values():
        good = tmp_path / ("good" + path.suffix)
        good.write_bytes(path.read_bytes())
        path.unlink()
        os.symlink(good, path)
    before = cache_auth.refused["entry"]
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    assert cache_auth.refused["entry"] >= before + 1
    disk_cache.flush()      # writes both entries again, past the planted names
    assert victim.read_text() == "precious"
    for path in files.values():
        assert not path.is_symlink() and disk_cache.read(str(path)) is not None
        assert {p for p in cache_dir.rglob("*.tmp")} >= {p for p in planted
                                                         if p.name.startswith(path.name)}
    # and with every name taken, nothing is written (no fallback that follows a link)
    names = iter([0] * 100)
    with pytest.raises(FileExistsError):
        cache_auth.write_new(str(files[".agt"]), b"data")
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("how", ["group-writable", "world-writable", "another owner",
                                 "a symlink's target is another's"])
def test_a_directory_others_may_write_is_not_used(tmp_path, cache_dir, monkeypatch, caplog,
                                                  how):
    ag.function(_mod(tmp_path).collatz)(np.int64(27))
    files = _entries(cache_dir)
    assert files
    agt = files[".agt"]
    entry = marshal.loads(disk_cache.read(str(agt)))
    signed_forgery = cache_auth.sign(agt.name.encode(), marshal.dumps(
        dict(entry, source=MARK + entry["source"])))
    agt.write_bytes(signed_forgery)   # what a planter could not sign: here, the best case
    if how == "group-writable":
        os.chmod(cache_dir, 0o770)
    elif how == "world-writable":
        os.chmod(cache_dir, 0o1777)
    else:
        real_uid = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: real_uid + 4242)
        monkeypatch.setenv("AUTOGRAPH_CACHE_KEY", str(tmp_path / "other-key" / "k"))
        if how.startswith("a symlink"):
            link = tmp_path / "link"
            os.symlink(cache_dir, link)
            monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(link))
    cache_auth.reset()
    before = cache_auth.refused["directory"]
    ag.set_verbosity(1)
    try:
        with caplog.at_level("INFO", logger="autograph"):
            assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    finally:
        ag.set_verbosity(0)
    assert not hasattr(builtins, "AG_FORGED")
    assert cache_auth.refused["directory"] == before + 1
    assert any("is refused" in r.getMessage() for r in caplog.records)
    mtimes = {p: p.stat().st_mtime_ns for p in cache_dir.rglob("*")}
    disk_cache.flush()
    assert {p: p.stat().st_mtime_ns for p in cache_dir.rglob("*")} == mtimes   # not written


def test_a_new_cache_directory_is_private(tmp_path, monkeypatch):
    folder = tmp_path / "new" / "cache"
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(folder))
    ag.function(_mod(tmp_path).collatz)(np.int64(27))
    disk_cache.flush()
    assert folder.stat().st_mode & 0o777 == 0o700
    for p in folder.rglob("*"):
        assert p.stat().st_mode & 0o077 == 0, p


@pytest.mark.parametrize("damage", ["readable by others", "a symlink", "short", "a folder"])
def test_an_unsafe_key_turns_the_caches_off(tmp_path, cache_dir, damage):
    path = cache_auth.key_path()
    assert cache_auth.load_key() is not None
    if damage == "readable by others":
        os.chmod(path, 0o644)
    elif damage == "a symlink":
        other = tmp_path / "other-key"
        other.write_bytes(os.urandom(32))
        os.chmod(other, 0o600)
        os.unlink(path)
        os.symlink(other, path)
    elif damage == "short":
        with open(path, "wb") as f:
            f.write(b"123")
    else:
        os.unlink(path)
        os.mkdir(path)
    cache_auth.reset()
    before = cache_auth.refused["key"]
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    disk_cache.flush()
    assert cache_auth.refused["key"] > before
    assert not list(cache_dir.rglob("*.ag?"))


def test_two_processes_making_the_key_agree(tmp_path):
    """The key is created under a temporary name and linked into place: whoever links
    second reads the first one's key."""
    path = cache_auth.key_path()
    first = cache_auth.load_key()
    cache_auth._make_key(path)          # a racing process's attempt: no clobbering
    assert cache_auth.load_key() == first
    assert not [p for p in os.listdir(os.path.dirname(path)) if p.endswith(".tmp")]


# -- entries written here are known by their identity, others by their tag ------------------

def _counting_tags(monkeypatch):
    calls = []
    real = cache_auth.tag
    monkeypatch.setattr(cache_auth, "tag", lambda name, data: calls.append(name) or
                        real(name, data))
    return calls


def test_an_entry_written_here_is_read_without_its_tag(tmp_path, cache_dir, monkeypatch):
    """The writer lists the entry's identity beside the key; a reader (here: a new
    'process', everything forgotten) finds it there and needs no HMAC (no SHA-256)."""
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    files = _entries(cache_dir)
    listed = os.path.join(os.path.dirname(cache_auth.key_path()), "cache-written")
    assert os.stat(listed).st_mode & 0o777 == 0o600
    assert os.path.getsize(listed) == 2 * cache_auth._IDENTITY_BYTES
    cache_auth.reset()
    calls = _counting_tags(monkeypatch)
    for path in files.values():
        assert disk_cache.read(str(path)) is not None
    assert calls == []
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111


@pytest.mark.parametrize("how", ["rewritten in place", "copied back", "time set back",
                                 "renamed from elsewhere"])
def test_an_entry_changed_or_restored_is_checked_by_its_tag(tmp_path, cache_dir, monkeypatch,
                                                              how):
    """Whatever touched the file since it was written (even with the same bytes, its old
    modification time, or through a rename) gives it a new identity: it is read only if
    its tag verifies, and a forger's bytes are refused."""
    import shutil
    import time
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    agt = _entries(cache_dir)[".agt"]
    good = agt.read_bytes()
    forged = good[:-1] + bytes([good[-1] ^ 1])            # same size, one bit changed
    st = agt.stat()
    time.sleep(0.002)
    for data, accepted in ((good, True), (forged, False)):
        if how == "rewritten in place":
            agt.write_bytes(data)
        elif how == "copied back":                          # a restored cache (cp -p)
            copy = tmp_path / "restored.agt"
            copy.write_bytes(data)
            shutil.copy2(copy, agt)
        elif how == "time set back":
            agt.write_bytes(data)
            os.utime(agt, ns=(st.st_atime_ns, st.st_mtime_ns))
        else:
            other = agt.with_name("elsewhere.tmp")
            other.write_bytes(data)
            os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
            os.replace(other, agt)
        cache_auth.reset()
        calls = _counting_tags(monkeypatch)
        before = cache_auth.refused["entry"]
        got = disk_cache.read(str(agt))
        assert calls, "read without its tag"
        assert (got is not None) == accepted
        assert cache_auth.refused["entry"] == before + (not accepted)


@pytest.mark.parametrize("damage", ["writable by others", "a symlink", "another user's"])
def test_an_unsafe_written_list_is_ignored(tmp_path, cache_dir, monkeypatch, damage):
    assert ag.function(_mod(tmp_path).collatz)(np.int64(27)) == 111
    agt = _entries(cache_dir)[".agt"]
    listed = os.path.join(os.path.dirname(cache_auth.key_path()), "cache-written")
    if damage == "writable by others":
        os.chmod(listed, 0o622)
    elif damage == "a symlink":
        other = tmp_path / "planted-list"
        other.write_bytes(open(listed, "rb").read())
        os.chmod(other, 0o600)
        os.unlink(listed)
        os.symlink(other, listed)
    else:   # the list alone seen as another uid's (the key stays this user's)
        real_read = cache_auth._read_entry

        def read_as_foreign(path, count=True):
            got = real_read(path, count)
            if got is None or path != listed:
                return got
            fields = list(got[1])
            fields[stat.ST_UID] += 4242
            return got[0], os.stat_result(fields)
        monkeypatch.setattr(cache_auth, "_read_entry", read_as_foreign)
    cache_auth.reset()
    calls = _counting_tags(monkeypatch)
    assert disk_cache.read(str(agt)) is not None       # its tag still verifies
    assert calls
    assert cache_auth._read_written() == b""


def test_the_written_list_starts_again_when_full(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(cache_auth, "_WRITTEN_MAX", 3 * cache_auth._IDENTITY_BYTES)
    for i in range(4):
        path = cache_dir / "ab" / f"ab{i}.agt"
        disk_cache.later(str(path), lambda: b"x" * 10)
        disk_cache.flush()
    listed = os.path.join(os.path.dirname(cache_auth.key_path()), "cache-written")
    assert os.path.getsize(listed) == cache_auth._IDENTITY_BYTES      # 3 kept, then anew
    cache_auth.reset()
    assert disk_cache.read(str(cache_dir / "ab" / "ab3.agt")) == b"x" * 10
    assert disk_cache.read(str(cache_dir / "ab" / "ab0.agt")) == b"x" * 10   # by its tag


def test_a_warm_fresh_process_loads_no_sha256(tmp_path):
    """The point of the list: a fresh process that loads its trace from the cache reads
    entries its user's autograph wrote, so it needs no SHA-256 extension."""
    script = tmp_path / "fresh.py"
    script.write_text(MODULE + "import sys\nimport autograph as ag\n"
                      "print(ag.function(collatz)(np.int64(27)), "
                      "any(m in sys.modules for m in ('_sha256', '_sha2', '_hashlib')))\n")
    env = dict(os.environ, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"),
               AUTOGRAPH_CACHE_KEY=str(tmp_path / "keydir" / "cache-key"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run():
        return subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                              text=True, check=True).stdout.split()

    assert run() == ["111", "False"]      # traced (signed at exit, after the print)
    assert run() == ["111", "False"]      # loaded: the entries are on the list
    (tmp_path / "keydir" / "cache-written").unlink()
    assert run() == ["111", "True"]       # not on it: read by their tags
