"""A mutation fuzzer of the saved-model loader (issue 29): mutants of real models, each
loaded and called in a child process with a memory limit and a timeout.

The seeds are real models: a Module with children, Variables and a Python `training`
switch; a tensor while loop with a cond inside; a Module whose loop updates a Variable;
a function with a constant array (an archive member) and np.where. Each mutant is one of:
byte flips (anywhere, or inside one file with the archive rebuilt), op / attribute /
dtype / shape edits, huge and negative dimensions, graph cycles and graphs shared between
nodes, swapped loop body and test, duplicate names and placeholders, object-tree edits
(a self-referencing or Variable `__call__`), NUL in names, zip members renamed,
duplicated, given `../` paths, npz members with object dtype, Fortran order, truncated,
huge sparse sizes, and checksum mismatches. Most edits of the description re-seal it, as
an attacker would (the checksums stop accidents, not edits), so the checks behind the seal
are what is fuzzed.

What counts (the promise): at load only SavedModelError (and of those, how many only the
last-resort net caught: `unexpected`); at call no raw Python error (KeyError, IndexError,
RecursionError, AttributeError, NameError, AssertionError, SystemError, MemoryError, ...);
no MemoryError; no hang (loops bounded by `Limits(max_loop_iterations=...)`). Errors at
call that are the model's arithmetic (NumPy's ValueError, LoopLimitError, TypeError for
arguments no trace fits) are counted by type, not as failures.

    python -m benchmarks.saved_model_fuzz -n 20000 [--seed 0] [--batch 400]

tests/saved_model/test_fuzz.py runs a few hundred mutants in CI.
"""

import argparse
import collections
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RAW = {"KeyError", "IndexError", "RecursionError", "AttributeError", "NameError",
       "UnboundLocalError", "AssertionError", "SystemError", "MemoryError",
       "NotImplementedError", "UnicodeError", "UnicodeEncodeError", "UnicodeDecodeError",
       "ZeroDivisionError", "StopIteration", "ReferenceError"}
MEMBERS = ("saved_model.json", "constants.npz", "variables.npz")


# -- seeds -------------------------------------------------------------------------------------

def seeds():
    """[(name, bytes, calls)]: real models as to_bytes gives them; `calls`: (attribute path,
    args, kwargs) to run on the loaded object."""
    import numpy as np
    import autograph as ag

    class Dense(ag.Module):
        def __init__(self, n, m, seed, name=None):
            super().__init__(name=name)
            rng = np.random.default_rng(seed)
            self.w = ag.Variable(rng.normal(size=(n, m)), name="w")
            self.b = ag.Variable(np.zeros(m), name="b")

        @ag.function
        def __call__(self, x):
            return np.tanh(x @ self.w + self.b)

    class Model(ag.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Dense(3, 4, 0, name="encoder")
            self.head = Dense(4, 1, 1, name="head")

        @ag.function
        def __call__(self, x, training=False):
            h = self.encoder(x)
            if training:
                h = h * 0.9
            return self.head(h)

    class Counter(ag.Module):
        def __init__(self):
            super().__init__()
            self.total = ag.Variable(np.float64(0.0), name="total")

        @ag.function
        def __call__(self, x, n):
            i = np.int64(0)
            while i < n:
                self.total.assign_add(np.sum(x))
                i += 1
            return self.total.read_value()

    @ag.function
    def loop(x, n):
        i = np.int64(0)
        while i < n:
            if np.sum(x) > 10.0:
                x = x * 0.5
            else:
                x = x + 1.0
            i += 1
        return x, i

    table = np.linspace(0.0, 1.0, 100)

    @ag.function
    def lookup(x):
        return np.where(x > 0.5, table[:x.shape[0]] * x, x - table[:x.shape[0]])

    x3 = np.ones((2, 3))
    model = Model()
    model(x3)
    model(x3, training=True)
    model.encoder(x3)
    model.head(np.ones((2, 4)))
    counter = Counter()
    counter(np.ones(3), np.int64(3))
    loop(np.ones(4), np.int64(5))
    lookup(np.linspace(0, 1, 7))
    return [
        ("model", ag.saved_model.to_bytes(model), [("", (x3,), {}), ("", (x3,), {"training": True}),
                                                    ("encoder", (x3,), {})]),
        ("counter", ag.saved_model.to_bytes(counter), [("", (np.ones(3), np.int64(3)), {})]),
        ("loop", ag.saved_model.to_bytes(loop), [("", (np.ones(4), np.int64(5)), {})]),
        ("lookup", ag.saved_model.to_bytes(lookup), [("", (np.linspace(0, 1, 7),), {})]),
    ]


# -- mutations ---------------------------------------------------------------------------------

def unzip(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def rezip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, blob in members:
            z.writestr(zipfile.ZipInfo(name), blob)
    return buf.getvalue()


def reseal(members):
    """Checksums and seal recomputed over the members as they are now (an attacker's)."""
    import hashlib
    from autograph.saved_model import seal
    files = dict(members)
    doc = json.loads(files["saved_model.json"])
    doc.pop("seal", None)
    for name in ("constants.npz", "variables.npz"):
        if name in files and isinstance(doc.get("checksums"), dict):
            doc["checksums"][name] = "sha256:" + hashlib.sha256(files[name]).hexdigest()
    text = json.dumps(doc, separators=(",", ":")).encode()
    files["saved_model.json"] = seal.close(text, files)
    return [(n, files[n]) for n, _ in members]


DTYPES = ["float64", "float32", "int64", "bool", "complex128", "uint8", "float16", "O", "U5",
          "V3", "<M8[s]", "S2", "f8,i4", "(2,)f8", "\x00", "é", "float128", "x" * 40, "",
          "int", "object", "|b1", ">f8", "<i2"]
HUGE = [2**31, 2**40, 2**63, -1, -2**40, 0, 10**30, 7]


def _value(rng, depth=0):
    kind = rng.randrange(14)
    if kind == 0:
        return rng.choice(HUGE)
    if kind == 1:
        return rng.choice(["", "x", "\x00", "../x", "a" * 300, "float64", "__class__"])
    if kind == 2:
        return None
    if kind == 3:
        return rng.random() * 1e300
    if kind == 4 and depth < 3:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 5 and depth < 3:
        return {"$tuple": [_value(rng, depth + 1) for _ in range(rng.randrange(4))]}
    if kind == 6:
        return {"$graph": rng.randrange(-1, 8)}
    if kind == 7:
        return {"$variable": rng.randrange(-1, 6)}
    if kind == 8:
        return {"$dtype": rng.choice(DTYPES)}
    if kind == 9:
        return {"$array": rng.choice(["c0", "c1", "v0", "", "../c0"])}
    if kind == 10:
        return {"$ndarray": [rng.choice(DTYPES), [rng.choice(HUGE)], [1, 2]]}
    if kind == 11:
        return {"$dict": [["a", 1], ["a", {}]]} if rng.random() < 0.5 else {"x": 1, "y": 2}
    if kind == 12:
        return True
    return {"$slot": rng.choice(["print", "random", "text", "nope"])}


def _nodes(doc):
    return [(gi, n) for gi, g in enumerate(doc.get("graphs", [])) for n in g.get("nodes", [])]


def mutate_doc(rng, doc):
    """One structural edit of the parsed description; returns its name."""
    graphs = doc["graphs"]
    nodes = _nodes(doc)
    gi, node = rng.choice(nodes)
    kind = rng.randrange(22)
    if kind == 0:
        from autograph.runtime.ir import primitives
        node["op"] = rng.choice(sorted(primitives.PRIMITIVES))
        return "op"
    if kind == 1 and node["attrs"]:
        node["attrs"][rng.choice(sorted(node["attrs"]))] = _value(rng)
        return "attr"
    if kind == 2:
        node["attrs"][rng.choice(["axis", "dtype", "shape", "name", "x", "value"])] = _value(rng)
        return "attr-added"
    if kind == 3 and node["outputs"]:
        node["outputs"][0][0] = rng.choice(DTYPES)
        return "dtype"
    if kind == 4 and node["outputs"]:
        node["outputs"][0][1] = [rng.choice(HUGE) for _ in range(rng.randrange(4))]
        return "shape"
    if kind == 5 and node["outputs"]:
        node["outputs"][0][1] = rng.choice([None, [None], [None, None, None], [7, 7]])
        return "shape-relaxed"
    if kind == 6:
        refs = [(k, v) for k, v in node["attrs"].items() if isinstance(v, dict) and "$graph" in v]
        if refs:
            k, _ = rng.choice(refs)
            node["attrs"][k] = {"$graph": rng.choice([gi, 0, rng.randrange(len(graphs))])}
            return "graph-cycle-or-shared"
    if kind == 7 and node["op"] == "while_loop":
        a = node["attrs"]
        a["cond_graph"], a["body_graph"] = a["body_graph"], a["cond_graph"]
        return "swap-while"
    if kind == 8 and node["op"] == "cond":
        a = node["attrs"]
        a["true_graph"] = a["false_graph"]
        return "cond-same-branch"
    if kind == 9:
        g = graphs[gi]
        if g["inputs"]:
            g["inputs"].append(g["inputs"][0])
            return "duplicate-placeholder"
    if kind == 10:
        other = rng.choice(nodes)[1]
        node["name"] = other["name"]
        return "duplicate-name"
    if kind == 11:
        node["name"] = node["name"] + rng.choice(["\x00", "\n", "\r", "\x7f"])
        return "nul-name"
    if kind == 12:
        graphs[gi]["name"] = "g\x00" + graphs[gi]["name"]
        return "nul-graph-name"
    if kind == 13 and node["inputs"]:
        node["inputs"][0] = [rng.randrange(-2, len(graphs[gi]["nodes"]) + 2), rng.randrange(-1, 3)]
        return "input-ref"
    if kind == 14:
        objs = doc["objects"]
        rec = rng.choice(objs)
        if rec.get("kind") == "object":
            target = rng.choice([objs.index(rec), 0] + [i for i, r in enumerate(objs)
                                                        if r.get("kind") == "variable"])
            rec["children"]["__call__"] = target
            return "call-child"
    if kind == 15:
        rec = rng.choice(doc["objects"])
        rec[rng.choice(["kind", "children", "concrete", "items", "variable"])] = _value(rng)
        return "object-edit"
    if kind == 16 and doc["functions"]:
        f = rng.choice(doc["functions"])
        key = rng.choice(["graph", "params", "outputs", "name"])
        f[key] = _value(rng) if key != "graph" else rng.randrange(-1, len(graphs) + 1)
        return "function-edit"
    if kind == 17 and doc["functions"]:
        f = rng.choice(doc["functions"])
        if f.get("params"):
            p = rng.choice(f["params"])
            p["key"] = rng.choice([{"literal": _value(rng)}, {"spec": [rng.choice(DTYPES),
                                   [rng.choice(HUGE)]]}, {"structure": "dict", "children": []},
                                   _value(rng)])
            return "param-key"
    if kind == 18 and doc["variables"]:
        v = rng.choice(doc["variables"])
        v[rng.choice(["dtype", "shape", "key", "name", "trainable"])] = _value(rng)
        return "variable-edit"
    if kind == 19:
        g = graphs[gi]
        g["outputs"] = [[rng.randrange(-1, len(g["nodes"]) + 1), rng.randrange(-1, 3)]]
        return "graph-outputs"
    if kind == 20 and node["outputs"]:
        node["outputs"].append(list(node["outputs"][0]))
        return "extra-output"
    if kind == 21:
        doc[rng.choice(["format_version", "root", "signatures", "graphs", "checksums"])] = \
            _value(rng)
        return "top-level"
    return mutate_doc(rng, doc)


def _npy(rng):
    import numpy as np
    kind = rng.randrange(6)
    buf = io.BytesIO()
    if kind == 0:
        np.lib.format.write_array(buf, np.array([{"a": 1}, None], dtype=object),
                                  allow_pickle=True)
        return "npz-object", buf.getvalue()
    if kind == 1:
        np.lib.format.write_array(buf, np.asfortranarray(np.arange(12.0).reshape(3, 4)))
        return "npz-fortran", buf.getvalue()
    if kind == 2:
        np.lib.format.write_array(buf, np.arange(10.0))
        return "npz-truncated", buf.getvalue()[:rng.randrange(5, 100)]
    if kind == 3:
        np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False,
                                                   "shape": (rng.choice([2**40, 2**31, 5 << 30]),)})
        return "npz-huge-header", buf.getvalue()
    if kind == 4:
        header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), " + \
            rng.choice([b"'x': [[[", b"1/0", b"\xff\xfe", b"(" * 200]) + b"}"
        return "npz-bad-header", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
    np.lib.format.write_array(buf, np.arange(4, dtype=rng.choice(["<U3", "V8", "M8[s]"])
                                             ) if False else np.zeros(3, dtype="V8"))
    return "npz-void", buf.getvalue()


def mutate(rng, data):
    """(kind, bytes) of one mutant of saved model `data` (to_bytes form)."""
    members = unzip(data)
    family = rng.random()
    if family < 0.12:                      # raw byte flips of the archive
        b = bytearray(data)
        for _ in range(rng.choice([1, 1, 2, 8])):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return "flip-archive", bytes(b)
    if family < 0.22:                      # byte flips inside one member, archive rebuilt
        i = rng.randrange(len(members))
        name, blob = members[i]
        b = bytearray(blob)
        if b:
            for _ in range(rng.choice([1, 2, 8])):
                b[rng.randrange(len(b))] = rng.randrange(256)
        members[i] = (name, bytes(b))
        if rng.random() < 0.5:
            try:
                members = reseal(members)
            except Exception:
                pass
        return f"flip-{name.split('.')[0]}", rezip(members)
    if family < 0.32:                      # zip members
        kind = rng.randrange(5)
        i = rng.randrange(len(members))
        name, blob = members[i]
        if kind == 0:
            members[i] = (rng.choice(["../" + name, "/" + name, name.upper(), "x.npz"]), blob)
        elif kind == 1:
            members.append((name, blob))
        elif kind == 2:
            members.append(("../../etc/evil", b"x"))
        elif kind == 3:
            del members[i]
        else:
            members[i] = (name, blob[:rng.randrange(len(blob) + 1)])
        return f"zip-{['rename', 'duplicate', 'dotdot', 'missing', 'truncate'][kind]}", \
            rezip(members)
    if family < 0.45:                      # npz members
        files = dict(members)
        target = rng.choice([n for n in ("constants.npz", "variables.npz") if n in files]
                            or ["variables.npz"])
        old = (unzip(files[target]) if files.get(target) else []) or [("c0.npy", b"")]
        kind, npy = _npy(rng)
        j = rng.randrange(len(old))
        if rng.random() < 0.2:
            old.append((old[j][0], npy))        # a duplicate member name
            kind += "-dup"
        else:
            old[j] = (old[j][0], npy)
        files[target] = rezip(old)
        members = [(n, files.get(n, b"")) for n, _ in members] if target in dict(members) \
            else members + [(target, files[target])]
        if rng.random() < 0.85:
            try:
                members = reseal(members)
            except (AttributeError, TypeError, KeyError, ValueError):
                pass
        return kind, rezip(members)
    if family < 0.5:                       # checksums and seal
        files = dict(members)
        doc = json.loads(files["saved_model.json"])
        kind = rng.randrange(3)
        if kind == 0 and doc.get("checksums"):
            k = rng.choice(sorted(doc["checksums"]))
            doc["checksums"][k] = "sha256:" + "0" * 64
            text = json.dumps(doc, separators=(",", ":")).encode()
        elif kind == 1:
            text = files["saved_model.json"].replace(b'"sha256":"', b'"sha256":"0', 1)
        else:                           # an edited constant, the seal left as it was
            text = files["saved_model.json"].replace(b"1.0", b"2.0", 1)
        files["saved_model.json"] = text
        return f"checksum-{kind}", rezip([(n, files[n]) for n, _ in members])
    files = dict(members)
    doc = json.loads(files["saved_model.json"])
    kinds = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        try:
            kinds.append(mutate_doc(rng, doc))
        except (AttributeError, TypeError, KeyError, IndexError, ValueError):
            break            # an earlier edit left nothing this one can edit
    kinds = kinds or ["none"]
    doc.pop("seal", None)
    files["saved_model.json"] = json.dumps(doc, separators=(",", ":")).encode()
    members = [(n, files[n]) for n, _ in members]
    if rng.random() < 0.95:
        try:
            members = reseal(members)
        except (AttributeError, TypeError, KeyError, ValueError):
            pass
    return "+".join(kinds), rezip(members)


# -- the child ---------------------------------------------------------------------------------

CHILD = r'''
import json, resource, signal, sys, os
resource.setrlimit(resource.RLIMIT_AS, (MEM, MEM))
import numpy as np
import autograph as ag
from autograph.saved_model import Limits, SavedModelError
limits = Limits(max_loop_iterations=10_000, max_bytes=1 << 28)
calls = json.loads(open(sys.argv[2]).read())

class Hang(BaseException):
    pass

def alarm(*_):
    raise Hang()
signal.signal(signal.SIGALRM, alarm)

def args_of(spec):
    return [np.asarray(a[0], dtype=a[1]).reshape(a[2]) for a in spec]

for line in open(sys.argv[1]):
    i, seed, path = line.split()
    data = open(path, "rb").read()
    result = {"i": int(i)}
    signal.alarm(TIMEOUT)
    try:
        try:
            obj = ag.saved_model.from_bytes(data, limits=limits)
            result["load"] = "ok"
        except SavedModelError as e:
            result["load"] = "unexpected" if getattr(e, "unexpected", False) else "refused"
            result["why"] = str(e)[:300]
            obj = None
        except MemoryError:
            result["load"] = "MemoryError"
        except Exception as e:
            result["load"] = type(e).__name__
            result["why"] = str(e)[:300]
        if obj is not None:
            outcomes = []
            for attr, args, kwargs in calls[seed]:
                try:
                    fn = obj
                    for part in filter(None, attr.split(".")):
                        fn = getattr(fn, part)
                    fn(*args_of(args), **kwargs)
                    outcomes.append("ok")
                except Hang:
                    raise
                except MemoryError:
                    outcomes.append("MemoryError")
                except Exception as e:
                    outcomes.append(type(e).__name__)
                    result.setdefault("call_errors", []).append(
                        f"{type(e).__name__}: {str(e)[:160]}")
            result["call"] = outcomes
    except Hang:
        result["hang"] = True
    finally:
        signal.alarm(0)
    print(json.dumps(result), flush=True)
'''


def run(n, seed=0, batch=400, timeout=10, memory=3 << 30, quiet=False):
    """Make `n` mutants and run them; returns the summary dict."""
    import warnings
    warnings.simplefilter("ignore")
    sys.path.insert(0, ROOT)
    rng = random.Random(seed)
    models = seeds()
    calls = {name: [(attr, [(a.tolist() if hasattr(a, "tolist") else a,
                             str(getattr(a, "dtype", type(a).__name__)), list(getattr(a, "shape", ())))
                            for a in args], kwargs) for attr, args, kwargs in c]
             for name, _, c in models}
    work = tempfile.mkdtemp(prefix="ag_fuzz_")
    with open(os.path.join(work, "calls.json"), "w") as f:
        json.dump(calls, f)
    child = os.path.join(work, "child.py")
    with open(child, "w") as f:
        f.write(CHILD.replace("MEM", str(memory)).replace("TIMEOUT", str(timeout))
                .replace("RAW", repr(RAW)))
    kinds = {}
    stats = collections.Counter()
    load = collections.Counter()
    call = collections.Counter()
    failures = []
    call_errors = []
    started = time.time()
    for start in range(0, n, batch):
        todo = []
        for i in range(start, min(n, start + batch)):
            name, data, _ = models[i % len(models)]
            kind, mutant = mutate(rng, data)
            kinds[i] = (name, kind)
            path = os.path.join(work, f"m{i}.bin")
            with open(path, "wb") as f:
                f.write(mutant)
            todo.append(f"{i} {name} {path}")
        while todo:
            listing = os.path.join(work, "batch.txt")
            with open(listing, "w") as f:
                f.write("\n".join(todo) + "\n")
            env = dict(os.environ, PYTHONPATH=ROOT, AUTOGRAPH_CACHE="0")
            try:
                proc = subprocess.run([sys.executable, child, listing,
                                       os.path.join(work, "calls.json")],
                                      env=env, capture_output=True, text=True,
                                      timeout=timeout * len(todo) + 60)
                out, crashed = proc.stdout, proc.returncode != 0
            except subprocess.TimeoutExpired as e:
                out, crashed = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) \
                    else (e.stdout or ""), True
            done = set()
            for line in out.splitlines():
                r = json.loads(line)
                done.add(r["i"])
                _count(r, kinds[r["i"]], stats, load, call, failures)
                call_errors.extend(e.split(":")[0] + ":" + e.split(":", 1)[1][:70]
                                   for e in r.get("call_errors", ()))
            rest = [t for t in todo if int(t.split()[0]) not in done]
            if crashed and rest:       # the mutant in progress killed the child
                i = int(rest[0].split()[0])
                stats["crash"] += 1
                failures.append({"i": i, "kind": kinds[i], "crash": True})
                rest = rest[1:]
            todo = rest
        for i in range(start, min(n, start + batch)):
            try:
                os.unlink(os.path.join(work, f"m{i}.bin"))
            except OSError:
                pass
        if not quiet:
            print(f"{min(n, start + batch)} mutants, {time.time() - started:.0f} s: "
                  f"{dict(stats)}", flush=True)
    summary = {"mutants": n, "seconds": round(time.time() - started, 1), "stats": dict(stats),
               "load": dict(load), "call": dict(call), "failures": failures[:50],
               "failure_count": len(failures),
               "call_errors": dict(collections.Counter(call_errors).most_common(20))}
    return summary


def _count(r, kind, stats, load, call, failures):
    load[r["load"]] += 1
    bad = r["load"] not in ("ok", "refused") or r.get("hang")
    for c in r.get("call", ()):
        call[c] += 1
        if c in RAW:
            bad = True
    stats["loaded" if r["load"] == "ok" else "refused" if r["load"] == "refused" else
          "bad-load"] += 1
    if r.get("hang"):
        stats["hang"] += 1
    if bad:
        stats["failures"] += 1
        failures.append({**r, "kind": kind})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=400)
    parser.add_argument("--json", help="write the summary here")
    args = parser.parse_args()
    summary = run(args.n, args.seed, args.batch)
    print(json.dumps({k: v for k, v in summary.items() if k != "failures"}, indent=1))
    for f in summary["failures"][:30]:
        print(f)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
