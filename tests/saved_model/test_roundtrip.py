"""Save, then load (in this process and in a fresh one that lacks the defining code) and
compare outputs bitwise with the original: the runtime samples (cond, while_loop,
TensorArray, print), the examples, a stateful object with Variables, and programs of the
differential generator; the fresh process runs each on the CPU and on the strict
array-API device."""

import contextlib
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import autograph as ag
from autograph.saved_model.save import _plain_json
from tests.saved_model import cases

CASES = None


def all_cases():
    global CASES
    if CASES is None:
        CASES = cases.all_cases()
        for c in CASES:      # the first call traces (and moves any state on)
            with contextlib.redirect_stdout(io.StringIO()):
                c.call(c.obj)
    return CASES


def test_the_case_set_is_broad():
    names = [c.name for c in all_cases()]
    assert sum(n.startswith("sample_") for n in names) == 14
    assert sum(n.startswith("example_") for n in names) >= 14
    assert sum(n.startswith("differential_") for n in names) >= 15
    assert "state_counter" in names


def _saved(tmp_path, c):
    d = str(tmp_path / c.name)
    ag.saved_model.save(c.obj, d)
    return d


def test_load_in_process_is_bitwise_equal(tmp_path):
    for c in all_cases():
        d = _saved(tmp_path, c)
        loaded = ag.saved_model.load(d)
        with contextlib.redirect_stdout(io.StringIO()) as want_out:
            want = c.call(c.obj)
        with contextlib.redirect_stdout(io.StringIO()) as got_out:
            got = c.call(loaded, loaded=True)
        assert cases.same(got, want), c.name
        assert got_out.getvalue() == want_out.getvalue(), c.name   # ag.print runs the same


# -- a fresh process without the defining modules ------------------------------------------------

FRESH = r'''
import json, sys, contextlib, io
import numpy as np
try:
    import tests            # the defining code must not be importable here
    raise SystemExit("tests is importable")
except ModuleNotFoundError:
    pass
import autograph as ag
from autograph.runtime import devices
from autograph.runtime.ir import nest
spec = json.load(open("cases.json"))
arrays = np.load("args.npz", allow_pickle=False)
from autograph.saved_model.format import DEFAULT_LIMITS, decode
def arg(a):
    if "npy" in a:
        return arrays[a["npy"]][()] if a["scalar"] else arrays[a["npy"]]
    return decode(a["py"], "argument", DEFAULT_LIMITS)   # (tuples kept)
results, out = {}, {}
for c in spec:
    args = [arg(a) for a in c["args"]]
    for device in c["devices"]:
        with ag.device(device):
            obj = ag.saved_model.load(c["dir"])
            fn = getattr(obj, c["attr"]) if c["attr"] else obj
            with contextlib.redirect_stdout(io.StringIO()):
                r = fn(*args)
        leaves = nest.flatten(r) if nest.is_nested(r) else [r]
        dev = devices.get_device(device)
        meta = []
        for i, leaf in enumerate(leaves):
            if type(leaf) in (bool, int, float, str, type(None)):
                meta.append({"py": leaf})
            else:
                key = f"{c['name']}:{device}:{i}"
                out[key] = np.asarray(dev.to_host(leaf))
                meta.append({"npy": key})
        results[f"{c['name']}:{device}"] = meta
np.savez("results.npz", **out)
json.dump(results, open("results.json", "w"))
'''


def _encode_args(args, name, store):
    out = []
    for i, a in enumerate(args):
        if isinstance(a, (np.ndarray, np.generic)):
            key = f"{name}:{i}"
            store[key] = np.asarray(a)
            out.append({"npy": key, "scalar": isinstance(a, np.generic)})
        else:
            out.append({"py": _plain_json(a)})
    return out


def test_fresh_process_without_the_source_cpu_and_strict(tmp_path):
    pytest.importorskip("array_api_strict")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    os.symlink(os.path.join(root, "autograph"), pkg / "autograph")
    work = tmp_path / "work"
    work.mkdir()
    spec, store, want = [], {}, {}
    for c in all_cases():
        d = _saved(work, c)
        with contextlib.redirect_stdout(io.StringIO()):
            want[c.name] = c.call(c.obj)     # the state the saved model starts from
        args = c.args if c.loaded_args is None else c.loaded_args
        spec.append({"name": c.name, "dir": d, "attr": c.attr, "devices": list(c.devices),
                     "args": _encode_args(args, c.name, store)})
    np.savez(work / "args.npz", **store)
    (work / "cases.json").write_text(json.dumps(spec))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(pkg)
    proc = subprocess.run([sys.executable, "-s", "-c", FRESH], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((work / "results.json").read_text())
    arrays = np.load(work / "results.npz", allow_pickle=False)
    assert sum("strict" in c.devices for c in all_cases()) >= 50
    for c in all_cases():
        for device in c.devices:
            got = [arrays[m["npy"]] if "npy" in m else m["py"]
                   for m in results[f"{c.name}:{device}"]]
            expected = cases.leaves(want[c.name])
            assert len(got) == len(expected), (c.name, device)
            for g, e in zip(got, expected):
                if isinstance(e, (np.ndarray, np.generic)):
                    e = np.asarray(e)
                    assert g.dtype == e.dtype and g.shape == e.shape and \
                        g.tobytes() == e.tobytes(), (c.name, device, g, e)
                else:
                    assert type(g) is type(e) and g == e, (c.name, device, g, e)


def test_loaded_functions_inside_a_new_function_are_bitwise_equal(tmp_path):
    """Inlined into a caller's trace (its nodes copied into the caller's graph), every
    loaded function gives what it gives eagerly (two loads: each starts from the saved
    state)."""
    for c in all_cases():
        d = _saved(tmp_path, c)
        inside, eager = ag.saved_model.load(d), ag.saved_model.load(d)
        args = c.args if c.loaded_args is None else c.loaded_args
        fn = getattr(inside, c.attr) if c.attr else inside

        def caller(*a):
            return fn(*a)
        wrapped = ag.function(caller)
        with contextlib.redirect_stdout(io.StringIO()) as got_out:
            got = wrapped(*args)
        with contextlib.redirect_stdout(io.StringIO()) as want_out:
            want = c.call(eager, loaded=True)
        assert cases.same(got, want), c.name
        assert got_out.getvalue() == want_out.getvalue(), c.name
