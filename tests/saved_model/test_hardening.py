"""Issue 29's classes of bad files, each refused at load with SavedModelError (never a raw
KeyError, IndexError or RecursionError at the first call); the seal and the key; bounded
loops; and a small sample of the mutation fuzzer (benchmarks/saved_model_fuzz.py runs
20,000)."""

import json
import os

import numpy as np
import pytest

import autograph as ag
from autograph.saved_model import Limits, LoopLimitError, SavedModelError, seal
from autograph.saved_model import show


class Net(ag.Module):
    def __init__(self):
        super().__init__()
        self.w = ag.Variable(np.arange(3.0), name="w")

    @ag.function
    def __call__(self, x, n):
        i = np.int64(0)
        while i < n:
            if np.sum(x) > 10.0:
                x = x * 0.5
            else:
                x = x + self.w
            i += 1
        return x


@pytest.fixture
def saved(tmp_path):
    net = Net()
    net(np.ones(3), np.int64(4))
    d = str(tmp_path / "m")
    ag.saved_model.save(net, d)
    return d, net


def _doc(d):
    with open(os.path.join(d, "saved_model.json"), "rb") as f:
        return json.loads(f.read())


def _write(d, doc):
    """The edited description, re-sealed as an attacker would."""
    files = {n: open(os.path.join(d, n), "rb").read()
             for n in ("constants.npz", "variables.npz") if os.path.exists(os.path.join(d, n))}
    text = json.dumps({k: v for k, v in doc.items() if k != "seal"},
                      separators=(",", ":")).encode()
    with open(os.path.join(d, "saved_model.json"), "wb") as f:
        f.write(seal.close(text, files))


def _node(doc, op):
    return next((g, n) for g in doc["graphs"] for n in g["nodes"] if n["op"] == op)


def test_the_saved_model_loads_and_computes_what_the_original_does(saved):
    d, net = saved
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ag.saved_model.load(d)(x, np.int64(4)), net(x, np.int64(4)))


def _refused(d, match):
    with pytest.raises(SavedModelError, match=match) as info:
        ag.saved_model.load(d)
    assert not getattr(info.value, "unexpected", False), info.value


def test_a_branch_graph_shared_between_nodes_is_refused(saved):
    d, _ = saved
    doc = _doc(d)
    _, cond = _node(doc, "cond")
    cond["attrs"]["true_graph"] = cond["attrs"]["false_graph"]
    _write(d, doc)
    _refused(d, "held by more than one node")
    doc = _doc(d)
    _, loop = _node(doc, "while_loop")
    loop["attrs"]["body_graph"] = {"$graph": 0}      # the function's own graph
    _write(d, doc)
    _refused(d, "held by more than one node|refers to itself")


def test_swapped_loop_body_and_test_are_refused(saved):
    d, _ = saved
    doc = _doc(d)
    _, loop = _node(doc, "while_loop")
    a = loop["attrs"]
    a["cond_graph"], a["body_graph"] = a["body_graph"], a["cond_graph"]
    _write(d, doc)
    _refused(d, "while_loop")


def test_a_placeholder_listed_twice_is_refused(saved):
    d, _ = saved
    doc = _doc(d)
    g = doc["graphs"][0]
    g["inputs"].append(g["inputs"][0])
    _write(d, doc)
    _refused(d, "listed twice")


@pytest.mark.parametrize("target", ["itself", "a Variable"])
def test_a_call_child_that_is_no_function_is_refused(saved, target):
    d, _ = saved
    doc = _doc(d)
    root = doc["objects"][doc["root"]]
    if target == "itself":
        root["children"]["__call__"] = doc["root"]
    else:
        root["children"]["__call__"] = next(i for i, o in enumerate(doc["objects"])
                                            if o["kind"] == "variable")
    _write(d, doc)
    _refused(d, "__call__ is a")


@pytest.mark.parametrize("where", ["graph", "node"])
def test_control_characters_in_names_are_refused(saved, where):
    d, _ = saved
    doc = _doc(d)
    if where == "graph":
        doc["graphs"][0]["name"] += "\x00"
    else:
        doc["graphs"][0]["nodes"][1]["name"] = "x\ny"
    _write(d, doc)
    _refused(d, "control characters")


def test_declared_output_specs_that_lie_are_refused_and_show_prints_the_truth(saved):
    d, _ = saved
    text = show.describe(d)
    assert "float64" in text
    doc = _doc(d)
    g = doc["graphs"][0]
    out_node = g["nodes"][g["outputs"][0][0]]
    out_node["outputs"][0] = ["float32", [7, 7], False]
    _write(d, doc)
    _refused(d, "declares its outputs as float32")
    doc = _doc(d)
    _, node = _node(doc, "add")
    node["outputs"][0][0] = "int64"
    _write(d, doc)
    _refused(d, "make float64")


def test_variable_nodes_must_fit_their_variable(saved):
    d, _ = saved
    doc = _doc(d)
    _, read = _node(doc, "read_variable")
    read["attrs"]["shape"] = {"$tuple": [4]}
    read["outputs"][0][1] = [4]
    _write(d, doc)
    _refused(d, "reads a Variable of float64\\[3\\]")
    doc = _doc(d)
    doc["variables"][0]["shape"] = [1, 3]
    _write(d, doc)
    _refused(d, "the value is float64")


def test_parameters_must_be_the_graphs_inputs(saved):
    d, _ = saved
    doc = _doc(d)
    g = doc["graphs"][doc["functions"][0]["graph"]]
    ph = g["nodes"][g["inputs"][0]]
    ph["outputs"][0][1] = [None]                 # the graph now says any length
    _write(d, doc)
    _refused(d, "array parameter 0 is")


def test_an_op_edit_the_shape_rule_refuses_is_refused(saved):
    d, _ = saved
    doc = _doc(d)
    _, node = _node(doc, "sum")
    node["attrs"]["axis"] = {"$tuple": [5]}     # (the rule takes axis 5 of a vector as
    _write(d, doc)                              #  no axis: its shape then differs)
    _refused(d, "do not fit the op|declares its outputs")
    doc = _doc(d)
    _, node = _node(doc, "sum")
    node["attrs"]["axis"] = "zero"
    _write(d, doc)
    _refused(d, "must be|do not fit the op")


def test_a_sparse_5_gib_member_is_refused_before_it_is_read(saved):
    d, _ = saved
    path = os.path.join(d, "constants.npz")
    with open(path, "wb") as f:
        f.truncate(5 << 30)            # sparse: no disk, and no memory if never read
    _refused(d, "over the limit")
    with pytest.raises(SavedModelError, match="over the limit"):
        ag.saved_model.load(d, limits=Limits(max_bytes=1 << 20))


def test_the_seal_covers_the_description(saved):
    d, _ = saved
    path = os.path.join(d, "saved_model.json")
    text = open(path, "rb").read()
    assert text.rstrip().endswith(b"}}") and b',"seal":{"sha256":"' in text
    edited = text.replace(b'"name":"w"', b'"name":"v"', 1)
    assert edited != text
    with open(path, "wb") as f:
        f.write(edited)
    _refused(d, "checksum mismatch")
    doc = json.loads(edited)
    doc.pop("seal")                   # a 1.1 file without a seal: edited
    with open(path, "wb") as f:
        f.write(json.dumps(doc).encode())
    _refused(d, "no seal")


def test_a_key_signs_every_file(tmp_path):
    net = Net()
    net(np.ones(3), np.int64(2))
    d = str(tmp_path / "signed")
    ag.saved_model.save(net, d, key=b"team secret")
    x = np.ones(3)
    np.testing.assert_allclose(ag.saved_model.load(d, key=b"team secret")(x, np.int64(2)),
                               net(x, np.int64(2)))
    ag.saved_model.load(d)                          # the checksums alone: accepted
    with pytest.raises(SavedModelError, match="another key"):
        ag.saved_model.load(d, key=b"other")
    # an attacker edits a Variable's values and recomputes every checksum and the seal
    import io
    buf = io.BytesIO()
    np.savez(buf, v0=np.full(3, 100.0))
    with open(os.path.join(d, "variables.npz"), "wb") as f:
        f.write(buf.getvalue())
    doc = _doc(d)
    import hashlib
    doc["checksums"]["variables.npz"] = "sha256:" + hashlib.sha256(buf.getvalue()).hexdigest()
    _write(d, doc)
    assert ag.saved_model.load(d)(x, np.int64(0)) is not None      # checksums: fooled
    with pytest.raises(SavedModelError, match="not signed|another key"):
        ag.saved_model.load(d, key=b"team secret")                 # the key: not fooled
    blob = ag.saved_model.to_bytes(net, key="k")
    ag.saved_model.from_bytes(blob, key="k")
    with pytest.raises(SavedModelError):
        ag.saved_model.from_bytes(blob, key="j")
    unsigned = ag.saved_model.to_bytes(net)
    with pytest.raises(SavedModelError, match="not signed"):
        ag.saved_model.from_bytes(unsigned, key="k")


def test_a_loop_limit_names_the_loop_and_results_stay_right(saved):
    d, net = saved
    m = ag.saved_model.load(d, limits=Limits(max_loop_iterations=50))
    x = np.ones(3)
    np.testing.assert_allclose(m(x, np.int64(50)), net(x, np.int64(50)))
    with pytest.raises(LoopLimitError, match="loop 'while_loop'.*50 iterations"):
        m(x, np.int64(51))
    traced = ag.function(lambda x: m(x, np.int64(60)))      # inlined into another trace
    with pytest.raises(LoopLimitError):
        traced(x)
    again = ag.saved_model.from_bytes(ag.saved_model.to_bytes(m))   # the bound is kept
    with pytest.raises(LoopLimitError):
        again(x, np.int64(51))


def test_a_sample_of_the_fuzzer_finds_nothing():
    """A few hundred mutants (the benchmark runs 20,000): only SavedModelError at load,
    none from the last-resort net, no raw error at call, no hang, no crash."""
    from benchmarks import saved_model_fuzz
    summary = saved_model_fuzz.run(240, seed=29, batch=240, quiet=True)
    assert summary["failure_count"] == 0, summary["failures"][:5]
    assert summary["stats"].get("refused", 0) > 100 and summary["stats"].get("loaded", 0) > 5
    assert "unexpected" not in summary["load"] and "crash" not in summary["stats"]


def test_limits_are_an_immutable_value():
    a = Limits(max_loop_iterations=5, max_bytes=10)
    assert a == Limits(max_bytes=10, max_loop_iterations=5) and hash(a) == hash(Limits(
        max_bytes=10, max_loop_iterations=5))
    assert a != Limits() and a.replace(max_bytes=1 << 32, max_loop_iterations=None) == Limits()
    assert (a.max_bytes, a.max_rank) == (10, Limits().max_rank)
    with pytest.raises(AttributeError, match="immutable"):
        a.max_bytes = 1
    assert eval(repr(a), {"Limits": Limits}) == a
