"""A saved model from a stranger: every hostile or damaged file fails with a clear error
before anything runs, and loading never unpickles, evaluates, executes or imports."""

import ast
import builtins
import gc
import hashlib
import importlib
import io
import json
import os
import pickle
import sys
import threading

import numpy as np
import pytest

import autograph as ag
from autograph.saved_model import SavedModelError, seal


@pytest.fixture
def saved(tmp_path):
    v = ag.Variable(np.arange(3.0), name="v")

    @ag.function
    def f(x):
        if np.sum(x) > 0:
            y = np.sum(x * v)
        else:
            y = np.float64(0.0)
        return y
    f(np.ones(3))
    d = str(tmp_path / "m")
    ag.saved_model.save(f, d)
    f._keep = v
    return d


def _doc(d):
    with open(os.path.join(d, "saved_model.json")) as fh:
        return json.load(fh)


def _write_doc(d, doc):
    """Write an edited description as an attacker would: its seal recomputed (a checksum
    stops accidents, not edits; the edit must be refused for what it says)."""
    files = {n: open(os.path.join(d, n), "rb").read()
             for n in ("constants.npz", "variables.npz") if os.path.exists(os.path.join(d, n))}
    text = json.dumps({k: v for k, v in doc.items() if k != "seal"},
                      separators=(",", ":")).encode()
    with open(os.path.join(d, "saved_model.json"), "wb") as fh:
        fh.write(seal.close(text, files))


def _replace_npz(d, name, data):
    with open(os.path.join(d, name), "wb") as fh:
        fh.write(data)
    doc = _doc(d)       # a matching checksum: the attack does not rely on a mismatch
    doc["checksums"][name] = "sha256:" + hashlib.sha256(data).hexdigest()
    _write_doc(d, doc)


def _nodes(doc):
    return [n for g in doc["graphs"] for n in g["nodes"]]


class Payload:
    """Unpickling this would create a file: the test checks that it never exists."""
    marker = None

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_pickled_object_array_is_refused(saved):
    buf = io.BytesIO()
    np.savez(buf, v0=np.array([{"a": 1}, None], dtype=object))
    _replace_npz(saved, "variables.npz", buf.getvalue())
    with pytest.raises(SavedModelError, match="dtype object.*never unpickled"):
        ag.saved_model.load(saved)


def test_reduce_payload_never_runs(saved, tmp_path):
    marker = tmp_path / "pwned"
    Payload.marker = str(marker)
    buf = io.BytesIO()
    np.savez(buf, v0=np.array([Payload()], dtype=object))
    _replace_npz(saved, "variables.npz", buf.getvalue())
    with pytest.raises(SavedModelError, match="refused"):
        ag.saved_model.load(saved)
    raw = pickle.dumps(Payload())           # a bare pickle as the JSON or as an archive
    with open(os.path.join(saved, "saved_model.json"), "wb") as fh:
        fh.write(raw)
    with pytest.raises(SavedModelError, match="not valid JSON"):
        ag.saved_model.load(saved)
    with pytest.raises(SavedModelError, match="not a zip archive"):
        ag.saved_model.from_bytes(raw)
    assert not marker.exists()


def test_unknown_op_is_refused(saved):
    doc = _doc(saved)
    _nodes(doc)[-1]["op"] = "os.system"
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match="unknown op 'os.system'"):
        ag.saved_model.load(saved)


def test_attribute_of_the_wrong_type_is_refused(saved):
    doc = _doc(saved)
    cond = next(n for n in _nodes(doc) if n["op"] == "cond")
    cond["attrs"]["true_graph"] = "import os"
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match="attribute 'true_graph' of op 'cond' must be "
                                              "a graph reference"):
        ag.saved_model.load(saved)


def test_a_name_a_kernel_would_look_up_must_come_from_the_fixed_set(saved):
    doc = _doc(saved)
    node = next(n for n in _nodes(doc) if n["op"] == "sum")
    node["op"], node["attrs"] = "fft", {"name": "__class__", "n": {"$tuple": [3]},
                                        "axes": {"$tuple": [0]}, "norm": "backward"}
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match="'name' of op 'fft' must be one of"):
        ag.saved_model.load(saved)


def test_unknown_attribute_tag_and_unknown_attribute_name(saved):
    doc = _doc(saved)
    node = next(n for n in _nodes(doc) if n["op"] == "sum")
    node["attrs"]["keepdims"] = {"$pickle": "gASV"}
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match="unknown attribute tag '\\$pickle'"):
        ag.saved_model.load(saved)
    node["attrs"]["keepdims"], node["attrs"]["evil"] = False, 1
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match="op 'sum' has no attribute 'evil'"):
        ag.saved_model.load(saved)


def test_a_1_gb_json_description_is_refused_before_reading(saved):
    path = os.path.join(saved, "saved_model.json")
    with open(path, "r+b") as fh:
        fh.truncate(2**30 + 1)       # sparse: no disk is used, and nothing reads it
    with pytest.raises(SavedModelError, match="1073741825 bytes, over the limit"):
        ag.saved_model.load(saved)


def test_a_shape_of_2_to_the_60_elements_is_refused(saved):
    doc = _doc(saved)
    _nodes(doc)[0]["outputs"][0][1] = [2**30, 2**30]
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match="1152921504606846976 elements, over the limit"):
        ag.saved_model.load(saved)


def test_an_npy_header_claiming_2_to_the_60_elements_is_refused_before_reading(saved):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (2**60,)})
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("v0.npy", b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + b"\0" * 64)
    _replace_npz(saved, "variables.npz", buf.getvalue())
    with pytest.raises(SavedModelError, match="elements, over the limit"):
        ag.saved_model.load(saved)


def test_versions_checksums_and_format_name(saved):
    doc = _doc(saved)
    doc["format_version"] = "2.0"
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match=r"format 2\.0, newer .*format 1\.1"):
        ag.saved_model.load(saved)
    doc["format_version"] = "1.3"             # a later 1.x: read
    _write_doc(saved, doc)
    assert ag.saved_model.load(saved)(np.ones(3)) == 3.0
    with open(os.path.join(saved, "variables.npz"), "r+b") as fh:
        fh.seek(-30, 2)
        fh.write(b"x")
    with pytest.raises(SavedModelError, match="checksum mismatch"):
        ag.saved_model.load(saved)
    doc["format"] = "tensorflow"
    _write_doc(saved, doc)
    with pytest.raises(SavedModelError, match="not an autograph saved model"):
        ag.saved_model.load(saved)


def test_loading_never_unpickles_evaluates_executes_or_imports(saved, monkeypatch):
    blob = ag.saved_model.to_bytes(ag.saved_model.load(saved))
    calls = []
    # generated code that dies while loading runs finalizers on the loading thread (CI
    # once saw them import linecache): a garbage collection below runs them on purpose
    doomed = [ag.function(lambda x: x * 2.0 + 1.0).get_concrete_function(np.ones(2))]
    doomed[0](np.ones(2))

    def sentinel(name):
        def refuse(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"loading called {name}")
        return refuse
    real_import, real_compile = builtins.__import__, builtins.compile
    # what the loader's own machinery may import: autograph, NumPy and the standard
    # modules its readers use (NumPy's .npy header reader imports ast and struct)
    allowed = {"autograph", "numpy", "ast", "struct", "zipfile", "json", "io", "hashlib",
               "os", "zlib", "binascii"}

    loader = threading.get_ident()   # (threads other tests left running may import)

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name.split(".")[0] not in allowed and \
                threading.get_ident() == loader:
            caller = sys._getframe(1)   # who imports: named in the failure
            calls.append(f"__import__({name}) at {caller.f_code.co_filename}:{caller.f_lineno}")
        return real_import(name, globals, locals, fromlist, level)

    def guarded_compile(source, filename, mode, flags=0, *args, **kwargs):
        # NumPy parses an .npy header with ast.literal_eval: a syntax tree, never code
        if not flags & ast.PyCF_ONLY_AST:
            calls.append("compile")
            raise AssertionError("loading compiled code")
        return real_compile(source, filename, mode, flags, *args, **kwargs)
    for mod, attr in [(pickle, "loads"), (pickle, "load"), (pickle, "Unpickler"),
                      (builtins, "eval"), (builtins, "exec"), (importlib, "import_module")]:
        monkeypatch.setattr(mod, attr, sentinel(f"{mod.__name__}.{attr}"))
    monkeypatch.setattr(builtins, "compile", guarded_compile)
    monkeypatch.setattr(builtins, "__import__", guarded_import)   # last: setattr imports
    try:
        doomed.clear()
        for _ in range(4):           # (garbage holding finalizers takes two passes)
            if not gc.collect():
                break
        loaded = ag.saved_model.load(saved)
        again = ag.saved_model.from_bytes(blob)
    except BaseException as e:
        error = e
    else:
        error = None
    finally:
        monkeypatch.undo()
    assert calls == [] and error is None, (calls, repr(error))
    assert loaded(np.ones(3)) == again(np.ones(3)) == 3.0


def test_compressed_members_are_refused(saved):
    buf = io.BytesIO()
    np.savez_compressed(buf, v0=np.zeros(10**6))      # 8 MB that deflate to a few KB
    _replace_npz(saved, "variables.npz", buf.getvalue())
    with pytest.raises(SavedModelError, match="compressed"):
        ag.saved_model.load(saved)


def test_an_npy_header_claiming_more_than_its_bytes_is_refused_before_allocating(saved):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (2**33,)})     # within the limit
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("v0.npy", b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + b"\0" * 64)
    _replace_npz(saved, "variables.npz", buf.getvalue())
    with pytest.raises(SavedModelError, match="more than the .* bytes of the member hold"):
        ag.saved_model.load(saved)
