"""Pictures of graphs: Graphviz DOT text, and SVG/PNG/PDF rendered by Graphviz's `dot`.

`to_dot(graph)` writes the whole graph, nested graphs included, as DOT text; it needs
nothing installed. A `cond` or `while_loop` node is drawn as a cluster (a box) holding the
node itself and one nested cluster per graph it carries in its attrs (`cond_graph` and
`body_graph`, or `true_graph` and `false_graph`), so a cond inside a loop body shows as a box inside a box. Kinds of node are told
apart by shape and colour:

- arguments (placeholders of the top graph): green, `invhouse` shape, at the top;
- captures (placeholders standing for a tensor of an enclosing graph): yellow notes, with a
  dashed edge from the outer tensor they stand for;
- loop variables / branch inputs of a nested graph: plain ellipses fed by a dotted edge
  from their control-flow node;
- outputs: blue `house` shapes at the bottom, one per result;
- constants: grey, small, labelled with their value when it is short.

`render(graph, fmt)` and `write(graph, path)` turn the DOT text into SVG/PNG/PDF with the
`graphviz` Python package when it is installed, else by running the `dot` program directly.
Both need Graphviz's `dot` on PATH; without it they raise `GraphvizNotFound`, whose message
says how to install it. `repr_svg(graph)` is what a notebook's `_repr_svg_` should return:
the SVG text, or None (so the notebook falls back to text) when `dot` is missing.
"""

import os
import shutil
import subprocess

import numpy as np

# file extension -> Graphviz output format
FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf", ".dot": "dot", ".gv": "dot"}

_INSTALL_HINT = (
    "Install Graphviz (it provides `dot`): `sudo apt-get install graphviz` on Debian/Ubuntu, "
    "`brew install graphviz` on macOS, `conda install graphviz` with conda, or see "
    "https://graphviz.org/download/ ; optionally also `pip install -e '.[graph]'` from a clone "
    "for the graphviz Python package. Or write DOT text instead (a .dot or .gv file, "
    "Graph.to_dot()) and render it elsewhere.")


class GraphvizNotFound(RuntimeError):
    """Graphviz's `dot` program is needed to render an image and is not on PATH."""


# -- DOT text -------------------------------------------------------------------------------

def _quote(text):
    """A DOT double-quoted string; newlines become centred line breaks."""
    text = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\n", "\\n") + '"'


def _shape_str(shape):
    if shape is None:
        return "[?]"   # unknown rank
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _type_str(tensor):
    return f"{tensor.dtype.name}{_shape_str(tensor.shape)}"


def _const_str(value, limit=24):
    value = np.asarray(value)
    if value.size > 6:
        return f"{value.dtype.name}{list(value.shape)}"
    text = np.array2string(value, separator=",", threshold=6)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _head(node, sep="\n"):
    """The op, and the node's name when it says more than the op does."""
    return node.op if node.name == node.op else f"{node.op}{sep}{node.name}"


_HIDDEN_ATTRS = {"dtype", "shape", "weak", "value", "sep", "end", "file"}


def _attrs_str(node, limit=28):
    """Short attributes worth seeing (an axis, a permutation, what a print prints)."""
    parts = []
    for key, value in node.attrs.items():
        if key == "template" and isinstance(value, tuple):   # ag.print: text, {} per tensor
            text = " ".join("{}" if v is None else str(v) for v in value)
            parts.append(repr(text if len(text) <= limit else text[:limit - 3] + "..."))
        elif key in _HIDDEN_ATTRS or value is None:
            continue
        elif isinstance(value, (bool, int, float, str)) or (
                isinstance(value, tuple) and all(isinstance(v, (int, type(None))) for v in value)):
            text = f"{key}={value}"
            if len(text) <= limit:
                parts.append(text)
    return ", ".join(parts[:3])


def _subgraphs(node):
    """(label, graph) for each graph a node holds in its attrs (lists of graphs too)."""
    from autograph.runtime.ir.graph import Graph
    found = []
    for key, value in node.attrs.items():
        if isinstance(value, Graph):
            found.append((key, value))
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Graph) for v in value):
            found.extend((f"{key}[{i}]", v) for i, v in enumerate(value))
    return found


class _Writer:
    """Walks a graph and its nested graphs once, emitting DOT lines."""

    def __init__(self):
        self.lines = []
        # edges are emitted last, at the top level: an edge written inside a cluster would
        # pull the nodes it names into that cluster
        self.edges = []
        self.ids = {}          # id(Node) -> DOT node id
        self.clusters = 0
        self.declared = set()  # DOT ids of the nodes drawn (unused captures are not)

    def node_id(self, node):
        key = id(node)
        if key not in self.ids:
            self.ids[key] = f"n{len(self.ids)}"
        return self.ids[key]

    def emit(self, depth, text):
        self.lines.append("  " * depth + text)

    def tensor_ref(self, tensor):
        return self.node_id(tensor.node)

    def edge(self, depth, src, dst, label=None, **style):
        attrs = dict(style)
        if label:
            attrs["label"] = label
        extra = " [" + ", ".join(f"{k}={_quote(v)}" for k, v in attrs.items()) + "]" if attrs else ""
        self.edges.append(f"  {src} -> {dst}{extra};")

    def graph_body(self, graph, depth, top):
        """Nodes, edges and nested clusters of one graph."""
        captured = {id(inner): outer for outer, inner in graph.captures.values()}
        args = [t for t in graph.inputs if id(t) not in captured]
        arg_ids = {id(t.node) for t in args}
        if top:
            self.emit(depth, "{ rank=source;")
            for t in args:
                self.placeholder(depth + 1, t, kind="arg")
            self.emit(depth, "}")
        else:
            for t in args:
                self.placeholder(depth, t, kind="loopvar")

        # a branch gets a placeholder for every capture of either branch; draw only those used
        used = {id(t.node) for n in graph.nodes for t in n.inputs}
        used.update(id(t.node) for t in graph.outputs)
        used.update(id(outer.node) for n in graph.nodes for _, sub in _subgraphs(n)
                    for outer, _ in sub.captures.values())     # passed on to a nested graph
        for node in graph.nodes:
            if node.op == "Placeholder":
                if id(node) in arg_ids or (not top and id(node) not in used):
                    continue
                tensor = node.outputs[0]
                outer = captured.get(id(tensor))
                self.placeholder(depth, tensor, kind="capture")
                if outer is not None:
                    self.edge(depth, self.tensor_ref(outer), self.node_id(node),
                              style="dashed", color="#b8860b", arrowhead="empty")
                continue
            subs = _subgraphs(node)
            if subs:
                self.control_flow(depth, node, subs)
            else:
                self.simple(depth, node)
            for i, t in enumerate(node.inputs):
                label = str(i) if len(node.inputs) > 1 and not subs else None
                self.edge(depth, self.tensor_ref(t), self.node_id(node),
                          label=f"{t.index}" if t.index else label)
        self.outputs(depth, graph, top)

    def placeholder(self, depth, tensor, kind):
        node = tensor.node
        label = f"{node.name}\n{_type_str(tensor)}"
        if kind == "arg":
            style = dict(shape="invhouse", style="filled", fillcolor="#c8f0c8")
        elif kind == "capture":
            style = dict(shape="note", style="filled", fillcolor="#fff3b0")
            label = f"{node.name} (captured)\n{_type_str(tensor)}"
        else:
            style = dict(shape="ellipse", style="filled", fillcolor="#ffffff")
        self.declare(depth, node, label, style)

    def declare(self, depth, node, label, style):
        self.declared.add(self.node_id(node))
        attrs = ", ".join(f"{k}={_quote(v)}" for k, v in style.items())
        self.emit(depth, f"{self.node_id(node)} [label={_quote(label)}, {attrs}];")

    def simple(self, depth, node):
        if node.op == "Const":
            label = _const_str(node.attrs.get("value"))
            style = dict(shape="box", style="filled,rounded", fillcolor="#eeeeee",
                         fontsize="10", color="#999999")
        else:
            types = ", ".join(_type_str(t) for t in node.outputs)
            head = _head(node)
            detail = _attrs_str(node)
            if detail:
                head = f"{head}\n{detail}"
            label = f"{head}\n{types}" if types else head
            style = dict(shape="box", style="rounded")
            if node.op in ("Identity",):
                style = dict(shape="box", style="rounded", color="#888888", fontcolor="#555555")
        self.declare(depth, node, label, style)

    def control_flow(self, depth, node, subs):
        """A cond/while_loop node: a cluster holding the node and one cluster per subgraph."""
        self.clusters += 1
        self.emit(depth, f"subgraph cluster_{self.clusters} {{")
        self.emit(depth + 1, f"label={_quote(_head(node, sep=': '))}; labeljust=l;")
        self.emit(depth + 1, 'style="rounded,filled"; fillcolor="#eef4ff"; color="#5b7bd5"; penwidth=1.5;')
        types = ", ".join(_type_str(t) for t in node.outputs)
        self.declare(depth + 1, node, f"{_head(node)}\n{types}",
                     dict(shape="box3d", style="filled", fillcolor="#c9d8ff"))
        for label, sub in subs:
            self.clusters += 1
            self.emit(depth + 1, f"subgraph cluster_{self.clusters} {{")
            self.emit(depth + 2, f"label={_quote(label)}; labeljust=l;")
            self.emit(depth + 2, 'style="rounded,filled"; fillcolor="#ffffff"; color="#8fa8e8";')
            self.graph_body(sub, depth + 2, top=False)
            # loop variables / branch inputs come from the control-flow node
            captured = {id(inner) for _, inner in sub.captures.values()}
            for t in sub.inputs:
                if id(t) not in captured:
                    self.edge(depth + 2, self.node_id(node), self.node_id(t.node),
                              style="dotted", color="#5b7bd5", arrowhead="none")
            # invisible edges to the subgraph's first nodes put it below its node, so a
            # picture reads top-down: the node, then what runs inside it
            for inner in sub.nodes:
                if not inner.inputs and self.node_id(inner) in self.declared:
                    self.edge(depth + 2, self.node_id(node), self.node_id(inner), style="invis")
            self.emit(depth + 1, "}")
        self.emit(depth, "}")

    def outputs(self, depth, graph, top):
        if not graph.outputs:
            return
        out_ids = []
        for i, t in enumerate(graph.outputs):
            self.clusters += 1   # any unique number will do
            out_id = f"out{self.clusters}"
            out_ids.append(out_id)
            label = f"output {i}\n{_type_str(t)}" if top else f"return {i}"
            style = (dict(shape="house", style="filled", fillcolor="#bcdcff") if top
                     else dict(shape="plain", fontsize="10", fontcolor="#5b7bd5"))
            attrs = ", ".join(f"{k}={_quote(v)}" for k, v in style.items())
            self.emit(depth, f"{out_id} [label={_quote(label)}, {attrs}];")
            self.edge(depth, self.tensor_ref(t), out_id,
                      **({} if top else dict(color="#5b7bd5")))
        if top:
            self.emit(depth, "{ rank=sink; " + " ".join(out_ids) + " }")


def to_dot(graph, name=None):
    """The graph as Graphviz DOT text (a `digraph`), nested graphs drawn as clusters."""
    writer = _Writer()
    title = name or graph.name
    writer.emit(0, f"digraph {_quote(title)} {{")
    writer.emit(1, f"label={_quote(title)}; labelloc=t; fontsize=16; fontname=Helvetica;")
    writer.emit(1, "rankdir=TB; compound=true; newrank=true; nodesep=0.3; ranksep=0.35;")
    writer.emit(1, 'node [fontname=Helvetica, fontsize=11, margin="0.08,0.04"];')
    writer.emit(1, "edge [fontname=Helvetica, fontsize=9, arrowsize=0.7];")
    writer.graph_body(graph, 1, top=True)
    writer.lines.extend(writer.edges)
    writer.emit(0, "}")
    return "\n".join(writer.lines) + "\n"


# -- rendering ------------------------------------------------------------------------------

def _source(graph_or_dot):
    return graph_or_dot if isinstance(graph_or_dot, str) else to_dot(graph_or_dot)


def dot_available():
    """Is Graphviz's `dot` program on PATH?"""
    return shutil.which("dot") is not None


def render(graph_or_dot, fmt="svg"):
    """Render a Graph (or DOT text) with Graphviz; returns the image as bytes."""
    source = _source(graph_or_dot)
    if fmt == "dot":
        return source.encode()
    if not dot_available():
        raise GraphvizNotFound(
            f"Drawing a graph as {fmt.upper()} needs Graphviz's `dot` program, which is not on "
            f"PATH. {_INSTALL_HINT}")
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None:
        return graphviz.Source(source).pipe(format=fmt)
    done = subprocess.run(["dot", f"-T{fmt}"], input=source.encode(), capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz's dot failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def write(graph_or_dot, path):
    """Write a picture of the graph to `path`; the extension picks the format
    (.dot/.gv DOT text, .svg, .png, .pdf). Returns the path."""
    ext = os.path.splitext(str(path))[1].lower()
    fmt = FORMATS.get(ext)
    if fmt is None:
        raise ValueError(f"Cannot tell the picture format from {str(path)!r}: use one of "
                         f"{', '.join(sorted(FORMATS))} (for example graph.svg).")
    data = render(graph_or_dot, fmt)
    with open(path, "wb") as f:
        f.write(data)
    return path


def repr_svg(graph):
    """SVG text for notebooks (`_repr_svg_`), or None when Graphviz is not installed."""
    if not dot_available():
        return None
    return render(graph, "svg").decode()
