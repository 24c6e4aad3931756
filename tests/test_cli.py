"""The command line: spec parsing, errors that say what to do, and the three commands end to end
(to-code against ag.to_code, trace/graph against the traced graph itself)."""

import io
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from autograph import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLATZ = os.path.join(ROOT, "examples", "collatz.py")


# -- specs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, dtype, shape", [
    ("int64[]", np.int64, ()),
    ("float32[None,3]", np.float32, (None, 3)),
    ("float64[?]", np.float64, (None,)),
    (" bool[2, 2] ", np.bool_, (2, 2)),
    ("float64[...]", np.float64, None),
])
def test_tensor_specs(text, dtype, shape):
    spec = cli.parse_spec(text)
    assert not spec.is_python and spec.name is None
    assert spec.dtype == np.dtype(dtype) and spec.shape == shape


def test_python_and_keyword_specs():
    assert cli.parse_spec("py:5").value == 5 and cli.parse_spec("py:5").is_python
    assert cli.parse_spec("py:'relu'").value == "relu"
    assert cli.parse_spec("py:[1, (2, 3)]").value == [1, (2, 3)]
    kw = cli.parse_spec("n=int64[]")
    assert kw.name == "n" and kw.dtype == np.int64 and kw.shape == ()
    kw = cli.parse_spec("training=py:True")
    assert kw.name == "training" and kw.value is True
    assert str(cli.parse_spec("x=float32[None,3]")) == "x=float32[None,3]"


@pytest.mark.parametrize("text, says", [
    ("int64", "For a scalar write 'int64[]'"),
    ("5", "For a Python value write 'py:5'"),
    ("int65[]", "'int65' is not a NumPy dtype"),
    ("float32[a,3]", "dimension 'a'"),
    ("py:relu", "Quote strings"),
    ("[3]", "DTYPE[DIMS]"),
])
def test_bad_specs_say_what_to_write(text, says):
    with pytest.raises(cli.CliError) as e:
        cli.parse_spec(text)
    assert says in str(e.value)
    assert "int64[]" in str(e.value)           # every message carries an example


# -- errors from main -------------------------------------------------------------------------

def run_main(*argv):
    out = io.StringIO()
    status = cli.main(list(argv), out=out)
    return status, out.getvalue()


def test_missing_file(capsys):
    status, _ = run_main("to-code", "no/such/file.py::f")
    assert status == 2
    assert "No such file: 'no/such/file.py'" in capsys.readouterr().err


def test_missing_function_lists_the_ones_there(tmp_path, capsys):
    src = tmp_path / "funcs.py"
    src.write_text("import os\n\ndef alpha(x):\n    return x\n\ndef beta(x):\n    return x\n")
    status, _ = run_main("trace", f"{src}::alpah", "--arg", "int64[]")
    err = capsys.readouterr().err
    assert status == 2
    assert "has no attribute 'alpah'" in err and "Functions in" in err
    assert "alpha, beta." in err                    # imported names (os) are not listed


def test_target_without_function(capsys):
    assert run_main("to-code", COLLATZ)[0] == 2
    assert "FILE::FUNCTION" in capsys.readouterr().err


def test_bad_spec_from_the_command_line(capsys):
    status, _ = run_main("graph", COLLATZ + "::collatz", "--arg", "int64")
    assert status == 2
    assert "For a scalar write 'int64[]'" in capsys.readouterr().err


def test_bad_output_extension(tmp_path, capsys):
    status, _ = run_main("graph", COLLATZ + "::collatz", "--arg", "int64[]",
                         "-o", str(tmp_path / "c.jpeg"))
    assert status == 2 and "-o graph.svg" in capsys.readouterr().err


def test_user_error_is_reported_without_a_traceback(tmp_path, capsys):
    src = tmp_path / "broken.py"
    src.write_text("def f(x):\n    return undefined_name + x\n")
    status, _ = run_main("trace", f"{src}::f", "--arg", "int64[]")
    err = capsys.readouterr().err
    assert status == 1 and "NameError" in err and "undefined_name" in err and "--traceback" in err


# -- highlighting -----------------------------------------------------------------------------

SOURCE = 'def f(x):\n    # a comment\n    y = ag__.ld(x) + 1.5  # more\n    return f"{y}" if y else \'s\'\n'


def test_highlight_only_adds_colour():
    coloured = cli.highlight(SOURCE)
    assert coloured != SOURCE and "\033[" in coloured
    assert re.sub(r"\033\[[0-9;]*m", "", coloured) == SOURCE
    assert "\033[1;34mdef\033[0m" in coloured and "\033[35mag__\033[0m" in coloured


def test_colour_only_on_terminals(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert cli.color_supported(Tty()) and not cli.color_supported(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cli.color_supported(Tty())


# -- the commands end to end ------------------------------------------------------------------

def test_to_code_prints_what_ag_to_code_returns():
    import autograph as ag
    from tests.examples.conftest import load_example
    status, out = run_main("to-code", COLLATZ + "::collatz")
    assert status == 0
    assert out.rstrip("\n") == ag.to_code(load_example("collatz.py").collatz).rstrip("\n")
    assert "\033[" not in out                        # a StringIO is not a terminal
    status, coloured = run_main("to-code", COLLATZ + "::collatz", "--color")
    assert re.sub(r"\033\[[0-9;]*m", "", coloured) == out


def _collatz_graph():
    import autograph as ag
    from tests.examples.conftest import load_example
    fn = load_example("collatz.py").collatz
    return fn.get_concrete_function(ag.TensorSpec([], np.int64)).graph


def test_trace_prints_signature_and_node_counts():
    status, out = run_main("trace", COLLATZ + "::collatz", "--arg", "int64[]")
    assert status == 0
    graph = _collatz_graph()
    top, total = len(graph.as_graph_def().node), sum(1 for _ in graph.walk())
    assert f"Graph: {top} nodes ({total} including nested" in out
    assert total > top
    assert "int64" in out and "Traces so far: 1" in out


def test_trace_uses_the_input_signature():
    status, out = run_main("trace", COLLATZ + "::next_collatz")
    assert status == 0 and "int64" in out and "None" in out


def _clusters(dot_text):
    from tests.test_dot import _clusters
    return _clusters(dot_text)


def test_graph_dot_has_while_with_nested_cond():
    status, out = run_main("graph", COLLATZ + "::collatz", "--arg", "int64[]")
    assert status == 0 and out.startswith("digraph")
    tree = _clusters(out)
    loops = [k for k, v in tree.items() if v["label"].startswith("while_loop")]
    assert len(loops) == 1
    body = [c for c in tree[loops[0]]["children"] if tree[c]["label"].startswith("body")]
    assert len(body) == 1
    conds = [c for c in tree[body[0]]["children"] if tree[c]["label"].startswith("cond")]
    assert len(conds) == 1 and len(tree[conds[0]]["children"]) == 2   # the two branches


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_graph_svg_from_the_console_script(tmp_path):
    """The issue's command, run as a user would: `python -m autograph graph ... -o collatz.svg`."""
    out = tmp_path / "collatz.svg"
    done = subprocess.run([sys.executable, "-m", "autograph", "graph", "examples/collatz.py::collatz",
                           "--arg", "int64[]", "-o", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    svg = out.read_text()
    assert "<svg" in svg and "while_loop" in svg and "cond" in svg
    assert svg.count('class="cluster"') >= 5        # loop, its two graphs, the cond, its branches


def test_graph_without_dot_says_how_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    status, _ = run_main("graph", COLLATZ + "::collatz", "--arg", "int64[]",
                         "-o", str(tmp_path / "c.svg"))
    assert status == 2 and "apt-get install graphviz" in capsys.readouterr().err
    assert not (tmp_path / "c.svg").exists()


def test_dot_on_stdout_is_not_mixed_with_trace_prints(capsys):
    fizzbuzz = os.path.join(ROOT, "examples", "fizzbuzz.py")
    status, out = run_main("graph", fizzbuzz + "::fizzbuzz", "--arg", "int64[]")
    assert status == 0 and out.startswith("digraph") and "Tracing" not in out
    assert "Tracing fizz branch" in capsys.readouterr().err     # still shown, on stderr


def test_console_script_and_module_entry_points():
    from importlib.metadata import entry_points
    scripts = [e for e in entry_points(group="console_scripts") if e.name == "autograph"]
    assert scripts and scripts[0].load() is cli.main          # pip installs `autograph`
    done = subprocess.run([sys.executable, "-m", "autograph", "--help"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0
    for command in ("to-code", "trace", "graph"):
        assert command in done.stdout
    bad = subprocess.run([sys.executable, "-m", "autograph", "trace", "nowhere.py::f"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "No such file" in bad.stderr


def test_optimized_graph_and_counts():
    from autograph.runtime.exec.optimize import optimize
    graph = optimize(_collatz_graph())
    status, out = run_main("trace", COLLATZ + "::collatz", "--arg", "int64[]")
    top, total = len(graph.as_graph_def().node), sum(1 for _ in graph.walk())
    assert f"Optimized (what runs): {top} nodes ({total} including nested)" in out
    status, text = run_main("graph", COLLATZ + "::collatz", "--arg", "int64[]", "--optimized")
    assert status == 0
    declared = re.findall(r"^\s*n\d+ \[", text, re.M)
    assert len(declared) < sum(1 for _ in _collatz_graph().walk())    # dead nodes are gone
    assert text == graph.to_dot()


def test_graph_with_several_specs_and_a_keyword(tmp_path):
    src = tmp_path / "model.py"
    src.write_text(
        "import numpy as np\n\n"
        "def step(n, x, scale=1.0, act='relu'):\n"
        "    for i in range(n):\n"
        "        x = x * scale\n"
        "    return np.maximum(x, 0) if act == 'relu' else x\n")
    status, text = run_main("graph", f"{src}::step", "--arg", "int64[]", "--arg", "float32[None,3]",
                            "--arg", "scale=float32[]", "--arg", "act=py:'relu'")
    assert status == 0
    placeholders = re.findall(r'label="(\w+)\\n(\w+\[[^\]]*\])", shape="invhouse"', text)
    assert placeholders == [("n", "int64[]"), ("x", "float32[?,3]"), ("scale", "float32[]")]
    assert "maximum" in text and "while_loop" in text


def test_a_file_named_like_a_loaded_module_does_not_replace_it(tmp_path):
    import json
    src = tmp_path / "json.py"
    src.write_text("def loads(x):\n    return x + 1\n")
    status, out = run_main("trace", f"{src}::loads", "--arg", "int64[]")
    assert status == 0 and "Traces so far: 1" in out
    assert sys.modules["json"] is json and json.loads("[1]") == [1]


def test_trace_lists_nodes_like_the_seed():
    status, out = run_main("trace", COLLATZ + "::collatz", "--arg", "int64[]", "--nodes")
    assert status == 0
    listing = out.split("nested graphs indented:\n")[1].splitlines()
    graph = _collatz_graph()
    node_lines = [l for l in listing if "->" in l]
    assert len(node_lines) == sum(1 for _ in graph.walk())       # every node, nested ones too
    top = [l for l in node_lines if not l.startswith("    ")]
    assert top == [f"  {n.input} -> {n.name}: {n.op}" for n in graph.as_graph_def().node]
    assert "    body_graph:" in listing and "        true_graph:" in listing
