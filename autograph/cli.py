"""The `autograph` command line (also `python -m autograph`).

    autograph to-code examples/collatz.py::collatz [--color]
    autograph trace   examples/collatz.py::collatz --arg 'int64[]'
    autograph graph   examples/collatz.py::collatz --arg 'int64[]' -o collatz.svg

`to-code` prints the converted source of a function, as `ag.to_code` returns it. `trace`
traces it once for the given argument specs and prints the concrete signature and the node
counts. `graph` traces it and writes a picture of the graph: DOT text, or SVG/PNG/PDF
(picked by the extension of -o; images need Graphviz's `dot`); `--optimized` draws the graph
after `runtime.optimize`, which is what actually runs.

The target is `path/to/file.py::name` (`name` may be dotted: `Model.step`). The file is
imported as a module named after it, so code under `if __name__ == "__main__":` does not run.
Each `--arg` is one positional argument (or `name=SPEC` for a keyword argument):

    int64[]            a scalar int64 tensor
    float32[None,3]    a float32 matrix with 3 columns and any number of rows (? = None)
    float64[...]       a float64 tensor of unknown rank
    py:5  py:'relu'    a Python value (any literal: numbers, strings, True, None, lists)

Without `--arg`, a function with an `input_signature` is traced with that signature.
"""

import argparse
import ast
import contextlib
import importlib.util
import io
import keyword
import os
import re
import sys
import tokenize
from dataclasses import dataclass

SPEC_HELP = ("Write a tensor as DTYPE[DIMS]: 'int64[]' (a scalar), 'float32[None,3]' "
             "(None or ? is an unknown dimension), 'float64[...]' (unknown rank); "
             "or a Python value as py:LITERAL: 'py:5', \"py:'relu'\", 'py:True'.")


class CliError(Exception):
    """A mistake in the command line: the message says what to write instead."""


# -- argument specs -------------------------------------------------------------------------

@dataclass(frozen=True)
class ArgSpec:
    """One parsed --arg: a tensor spec (dtype, shape) or a Python value."""
    name: object = None          # keyword name, or None for a positional argument
    dtype: object = None         # numpy dtype for a tensor
    shape: object = ()           # tuple of int/None, or None for an unknown rank
    value: object = None         # the Python value when is_python
    is_python: bool = False

    def to_argument(self):
        """What get_concrete_function receives: an ag.TensorSpec or the Python value."""
        if self.is_python:
            return self.value
        from autograph.function.trace_type import TensorSpec
        return TensorSpec(self.shape, self.dtype)

    def __str__(self):
        if self.is_python:
            text = f"py:{self.value!r}"
        else:
            dims = "..." if self.shape is None else ",".join(
                "None" if d is None else str(d) for d in self.shape)
            text = f"{self.dtype.name}[{dims}]"
        return text if self.name is None else f"{self.name}={text}"


_TENSOR_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[(.*)\]\s*$")
_KW_RE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)(.*)$", re.S)


def parse_spec(text):
    """Parse one --arg value into an ArgSpec; raise CliError with an example if it is bad."""
    import numpy as np

    name = None
    m = _KW_RE.match(text)
    if m and not text.lstrip().startswith("py:"):
        name, text = m.group(1), m.group(2)
    body = text.strip()
    if body.startswith("py:"):
        literal = body[3:].strip()
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            raise CliError(f"Bad argument spec {text!r}: {literal!r} is not a Python literal. "
                           "Quote strings inside the spec, e.g. \"py:'relu'\". " + SPEC_HELP) from None
        return ArgSpec(name=name, value=value, is_python=True)
    m = _TENSOR_RE.match(body)
    if not m:
        hint = ""
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", body):
            hint = f" For a scalar write '{body}[]'."
        elif re.fullmatch(r"-?[0-9.e+-]+|True|False|None|'.*'|\".*\"", body):
            hint = f" For a Python value write 'py:{body}'."
        raise CliError(f"Bad argument spec {text!r}.{hint} {SPEC_HELP}")
    dtype_name, dims = m.group(1), m.group(2).strip()
    try:
        dtype = np.dtype(dtype_name)
    except TypeError:
        raise CliError(f"Bad argument spec {text!r}: {dtype_name!r} is not a NumPy dtype "
                       "(try int64, int32, float64, float32, bool). " + SPEC_HELP) from None
    if dims in ("...", "*"):
        return ArgSpec(name=name, dtype=dtype, shape=None)
    shape = []
    for dim in (d.strip() for d in dims.split(",")) if dims else ():
        if dim in ("None", "?"):
            shape.append(None)
        elif dim.isdigit():
            shape.append(int(dim))
        else:
            raise CliError(f"Bad argument spec {text!r}: dimension {dim!r} must be a "
                           "non-negative integer, None or ?. " + SPEC_HELP)
    return ArgSpec(name=name, dtype=dtype, shape=tuple(shape))


# -- finding the function -------------------------------------------------------------------

def load_target(target):
    """Import `path/to/file.py::name` and return (the object named, the module)."""
    if "::" not in target:
        raise CliError(f"Name the function as FILE::FUNCTION, e.g. "
                       f"'{target if target.endswith('.py') else 'examples/collatz.py'}::collatz' "
                       f"(got {target!r}).")
    path, qualname = target.rsplit("::", 1)
    if not os.path.isfile(path):
        where = os.path.abspath(path)
        raise CliError(f"No such file: {path!r} (looked for {where}). Give a path to a Python "
                       "file, relative to the current directory or absolute.")
    module = _import_file(path)
    obj = module
    for i, part in enumerate(qualname.split(".")):
        if not hasattr(obj, part):
            prefix = ".".join(qualname.split(".")[:i]) or os.path.basename(path)
            raise CliError(f"{prefix} has no attribute {part!r}. "
                           f"Functions in {path}: {', '.join(_functions_in(module)) or '(none)'}.")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CliError(f"{qualname!r} in {path} is a {type(obj).__name__}, not a function.")
    return obj, module


def _import_file(path):
    """Import a file as a module (its folder goes on sys.path so its own imports work)."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) != path:
        name = f"autograph_cli_target_{name}"     # never shadow a module already loaded (json.py)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module      # inspect.getsource and dataclasses look modules up here
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise CliError(f"{path} does not parse: {e.msg} (line {e.lineno}).") from None
    return module


def _functions_in(module):
    names = []
    for key, value in vars(module).items():
        if key.startswith("_"):
            continue
        own = getattr(value, "__module__", None) == module.__name__
        if hasattr(value, "get_concrete_function") or (callable(value) and own and not isinstance(value, type)):
            names.append(key)
    return names


def as_function(obj):
    """An ag.Function for `obj` (a Function already, or a plain function to wrap)."""
    from autograph.function import Function, function
    return obj if isinstance(obj, Function) else function(obj)


def concrete_for(fn, specs):
    """Trace `fn` for the parsed specs (or its input_signature when there are none)."""
    args = [s.to_argument() for s in specs if s.name is None]
    kwargs = {s.name: s.to_argument() for s in specs if s.name is not None}
    return fn.get_concrete_function(*args, **kwargs)


def node_counts(graph):
    """(nodes in the top graph, nodes including every nested branch/body graph)."""
    return len(graph.as_graph_def().node), sum(1 for _ in graph.walk())


# -- highlighting ---------------------------------------------------------------------------

_COLORS = {"keyword": "\033[1;34m", "string": "\033[32m", "comment": "\033[90m",
           "number": "\033[36m", "ag": "\033[35m", "def": "\033[1;33m"}
_RESET = "\033[0m"


def color_supported(stream):
    """Colour only for a real terminal that is not 'dumb', and never when NO_COLOR is set."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def highlight(source):
    """ANSI-colour Python source: keywords, strings, numbers, comments, and ag__ calls.
    Only escape codes are added: stripping them gives back `source` exactly."""
    starts, pos = [], 0            # offset of each line's first character
    for line in source.splitlines(keepends=True):
        starts.append(pos)
        pos += len(line)
    starts.append(pos)

    def offset(row_col):
        row, col = row_col
        return starts[min(row - 1, len(starts) - 1)] + col

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    out, done, prev = [], 0, None
    for tok in tokens:
        kind = None
        if tok.type == tokenize.NAME and keyword.iskeyword(tok.string):
            kind = "keyword"
        elif tok.type == tokenize.NAME and tok.string.startswith("ag__"):
            kind = "ag"
        elif tok.type == tokenize.NAME and prev is not None and prev.string in ("def", "class"):
            kind = "def"
        elif tok.type == tokenize.STRING or tok.type in _fstring_types():
            kind = "string"
        elif tok.type == tokenize.COMMENT:
            kind = "comment"
        elif tok.type == tokenize.NUMBER:
            kind = "number"
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
            prev = tok
        if kind is None:
            continue
        a, b = offset(tok.start), offset(tok.end)
        out.append(source[done:a] + _COLORS[kind] + source[a:b] + _RESET)
        done = b
    out.append(source[done:])
    return "".join(out)


def _fstring_types():
    return {getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
            if hasattr(tokenize, n)}


# -- commands -------------------------------------------------------------------------------

def cmd_to_code(args, out):
    import autograph
    obj, _ = load_target(args.target)
    code = autograph.to_code(obj)
    use_color = args.color == "always" or (args.color == "auto" and color_supported(out))
    out.write(highlight(code) if use_color else code)
    if not code.endswith("\n"):
        out.write("\n")


def cmd_trace(args, out):
    specs = [parse_spec(s) for s in args.arg]
    obj, _ = load_target(args.target)
    fn = as_function(obj)
    conc = concrete_for(fn, specs)
    from autograph.runtime.exec.optimize import optimize
    top, total = node_counts(conc.graph)
    opt_top, opt_total = node_counts(optimize(conc.graph))
    out.write(f"{conc}\n")
    out.write(f"Graph: {top} nodes ({total} including nested cond/while_loop graphs)\n")
    out.write(f"Optimized (what runs): {opt_top} nodes ({opt_total} including nested)\n")
    out.write(f"Traces so far: {fn.experimental_get_tracing_count()}\n")
    if args.nodes:
        out.write("Nodes (inputs -> name: op), nested graphs indented:\n")
        out.write(node_listing(optimize(conc.graph) if args.optimized else conc.graph))


def node_listing(graph, indent="  "):
    """The seed's `for node in graph.as_graph_def().node: print(node.input, '->', node.name)`,
    with each cond/while_loop node's graphs listed under it, indented."""
    lines = []

    def walk(g, depth):
        for node, node_def in zip(g.nodes, g.as_graph_def().node):
            lines.append(f"{indent * depth}{node_def.input} -> {node.name}: {node.op}")
            for key, sub in g.subgraphs(node).items():
                lines.append(f"{indent * (depth + 1)}{key}:")
                walk(sub, depth + 2)

    walk(graph, 1)
    return "\n".join(lines) + "\n"


def cmd_graph(args, out):
    from autograph.runtime.exec import dot
    specs = [parse_spec(s) for s in args.arg]
    to_file = args.output not in (None, "-")
    if to_file:
        ext = os.path.splitext(args.output)[1].lower()
        if ext not in dot.FORMATS:
            raise CliError(f"Cannot tell the picture format from {args.output!r}: end it with "
                           f"{', '.join(sorted(dot.FORMATS))} (e.g. -o graph.svg), or leave -o "
                           "out to print DOT text.")
        if dot.FORMATS[ext] != "dot" and not dot.dot_available():
            raise dot.GraphvizNotFound(
                f"Writing {args.output} needs Graphviz's `dot` program, which is not on PATH. "
                f"{dot._INSTALL_HINT}")
    obj, _ = load_target(args.target)
    fn = as_function(obj)
    if to_file:
        graph = concrete_for(fn, specs).graph
    else:
        # the DOT text owns stdout: what the function prints while tracing goes to stderr
        with contextlib.redirect_stdout(sys.stderr):
            graph = concrete_for(fn, specs).graph
    if args.optimized:
        from autograph.runtime.exec.optimize import optimize
        graph = optimize(graph)
    if not to_file:
        out.write(dot.to_dot(graph))
        return
    dot.write(graph, args.output)
    top, total = node_counts(graph)
    out.write(f"wrote {args.output} ({top} nodes, {total} with nested graphs)\n")


def cmd_explore(args, out):
    from autograph.explorer import explore   # (lazily: only this command needs it)
    specs = [parse_spec(s) for s in args.arg]
    obj, _ = load_target(args.target)
    fn = as_function(obj)
    with contextlib.redirect_stdout(sys.stderr):   # what the function prints while tracing
        page = explore(fn, *[s.to_argument() for s in specs if s.name is None],
                       **{s.name: s.to_argument() for s in specs if s.name is not None})
    path = args.output or f"{fn.__name__}.html"
    page.save(path)
    out.write(f"wrote {path} (open it in a browser: no network needed)\n")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="autograph",
        description="Look at what autograph makes of a Python function: its converted "
                    "code, its traced signatures, a picture of its graph.",
        epilog="Argument specs: " + SPEC_HELP)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbosity", type=int, default=None,
                        help="log conversions and traces (like AUTOGRAPH_VERBOSITY)")
    common.add_argument("--traceback", action="store_true",
                        help="show the full traceback when the user's function fails")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("to-code", parents=[common],
                       help="print the converted source of FILE::FUNCTION")
    p.add_argument("target", metavar="FILE::FUNCTION")
    p.add_argument("--color", nargs="?", const="always", default="auto",
                   choices=["auto", "always", "never"],
                   help="highlight the code (auto: when the terminal supports it; "
                        "a bare --color means always)")
    p.set_defaults(run=cmd_to_code)

    for name, run, text in (
            ("trace", cmd_trace, "trace FILE::FUNCTION for the given specs; print the "
                                 "concrete signature and the node counts"),
            ("graph", cmd_graph, "trace FILE::FUNCTION and write its graph (DOT, SVG, PNG, PDF)"),
            ("explore", cmd_explore, "write the explorer page of FILE::FUNCTION: source, "
                                     "converted code, passes and graph, linked by line")):
        p = sub.add_parser(name, parents=[common], help=text,
                           epilog="Argument specs: " + SPEC_HELP)
        p.add_argument("target", metavar="FILE::FUNCTION")
        p.add_argument("--arg", action="append", default=[], metavar="SPEC",
                       help="one argument, in order (NAME=SPEC for a keyword argument)")
        if name == "trace":
            p.add_argument("--nodes", action="store_true",
                           help="also list the nodes (inputs -> name: op), nested graphs indented")
            p.add_argument("--optimized", action="store_true",
                           help="list the nodes of the optimized graph (what actually runs)")
        if name == "explore":
            p.add_argument("-o", "--output", default=None, metavar="PATH",
                           help="the HTML file to write (default: FUNCTION.html)")
        if name == "graph":
            p.add_argument("-o", "--output", default=None, metavar="PATH",
                           help="where to write: .svg, .png, .pdf or .dot/.gv "
                                "(default: DOT text on stdout)")
            p.add_argument("--optimized", action="store_true",
                           help="draw the graph after constant folding, CSE and dead-node "
                                "removal (what actually runs)")
        p.set_defaults(run=run)

    p = sub.add_parser("saved-model", parents=[common],
                       help="look into a saved model (ag.saved_model.save)")
    p.add_argument("action", choices=["show"],
                   help="show: the object tree, signatures and Variables")
    p.add_argument("target", metavar="DIR")
    p.set_defaults(run=cmd_saved_model)
    return parser


def cmd_saved_model(args, out):
    from autograph.saved_model import show   # (lazily: only this command needs it)
    print(show.describe(args.target), file=out)


def main(argv=None, out=None):
    """Run the command line; returns the exit status (0 ok, 1 the function failed, 2 usage)."""
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbosity is not None:
        from autograph.log import set_verbosity
        set_verbosity(args.verbosity)
    try:
        args.run(args, out)
    except CliError as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:   # the user's function (or its tracing) failed: say so plainly
        from autograph.runtime.exec.dot import GraphvizNotFound
        if isinstance(e, GraphvizNotFound):
            print(f"autograph: error: {e}", file=sys.stderr)
            return 2
        if args.traceback:
            raise
        print(f"autograph: {args.command} {args.target} failed: {type(e).__name__}: {e}\n"
              "(run with --traceback to see where)", file=sys.stderr)
        return 1
    return 0

