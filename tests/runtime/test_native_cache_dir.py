"""Where jit_compile's modules (and Numba's pickled machine code beside them) live: in the
disk cache only while its directory is this user's alone, else in a private folder of the
process (issue 29's rule for every cache: nothing on disk runs unless we wrote it)."""

import os
import stat

from autograph.runtime.exec.native import jit
from autograph.source import cache_auth


def _fresh():
    cache_auth.reset()


def test_a_private_cache_directory_holds_the_native_folder(cache_dir):
    _fresh()
    folder = jit.cache_dir()
    assert folder == os.path.join(str(cache_dir), "native")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_the_cache_turned_off_writes_nothing_where_the_user_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", "off")
    _fresh()
    folder = jit.cache_dir()
    assert not os.path.exists(tmp_path / "off")           # ("off" is not a folder name)
    assert not folder.startswith(str(tmp_path))
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700   # this process's own


def test_a_directory_others_may_write_is_not_used(cache_dir, monkeypatch):
    os.makedirs(cache_dir)
    os.chmod(cache_dir, 0o777)
    _fresh()
    refused = cache_auth.refused["directory"]
    folder = jit.cache_dir()
    assert not folder.startswith(str(cache_dir))
    assert not os.path.exists(cache_dir / "native")
    assert cache_auth.refused["directory"] == refused + 1


def test_a_native_folder_planted_by_someone_else_is_not_used(cache_dir):
    os.makedirs(cache_dir / "native")
    os.chmod(cache_dir, 0o700)
    os.chmod(cache_dir / "native", 0o777)     # (as if another user had made it writable)
    _fresh()
    assert not jit.cache_dir().startswith(str(cache_dir))
