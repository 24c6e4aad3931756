"""A traced graph as SVG, laid out in pure Python (no Graphviz): the explorer's picture.

Nodes are placed in layers, top to bottom: a node's layer is one below the lowest of the
nodes it reads (placeholders on top), nodes of one layer side by side in graph order. An
edge is a curve from the producer's bottom to the consumer's top. A `cond` or `while_loop`
node is a cluster: a box holding its graphs (then/else, test/body), each laid out the same
way, side by side; its header toggles the cluster closed and open (the page's script).

Every node's group carries `data-lines` (the user's line that made it, from node.origin)
and a `<title>` (name, op, dtype and shape): the page highlights nodes by line.
"""

import html

NODE_H = 30
GAP_X, GAP_Y = 14, 34
PAD, HEADER = 10, 22
CHAR_W = 6.6          # average width of a character of the 11px label font


def user_line(node, user_lines):
    """The line of the user's function that made `node`, or None (`user_lines`: (file,
    first line, last line) of the function's source; a node made elsewhere, e.g. an output
    made at the caller's line, names none)."""
    from autograph import errors
    loc = errors.origin_location(node.origin)
    if loc is None or user_lines is None or loc[0] != user_lines[0] or \
            not user_lines[1] <= loc[1] <= user_lines[2]:
        return None
    return loc[1]


class _Box:
    """A laid-out node (or cluster): its size, and the SVG it draws at an offset."""
    __slots__ = ("node", "w", "h", "x", "y", "inner")

    def __init__(self, node, w, h, inner=()):
        self.node, self.w, self.h, self.inner = node, w, h, inner
        self.x = self.y = 0.0


def _label(node):
    if node.op == "Placeholder":
        return node.name
    if node.op == "Const":
        value = node.attrs.get("value")
        text = repr(value.item()) if getattr(value, "ndim", 1) == 0 else f"const {value.shape}"
        return text if len(text) <= 16 else text[:15] + "…"
    return node.op if node.name.startswith(node.op) else f"{node.op} {node.name}"


def _tensor_text(t):
    shape = "?" if t.shape is None else "[" + ", ".join(
        "?" if d is None else str(d) for d in t.shape) + "]"
    return f"{t.dtype.name}{shape}" if t.dtype != object else "handle"


class _Layout:
    def __init__(self, user_lines):
        self.user_lines = user_lines
        self.ids = {}         # id(node) -> svg element id
        self.parts = []

    def node_id(self, node):
        return self.ids.setdefault(id(node), f"n{len(self.ids)}")

    # -- sizes ------------------------------------------------------------------------------

    def graph(self, graph):
        """(boxes per layer, width, height) of `graph`'s nodes laid out in layers."""
        layer_of, layers = {}, []
        producers = {}
        for node in graph.nodes:
            for t in node.outputs:
                producers[id(t)] = node
        for node in graph.nodes:
            depth = 0
            for t in node.inputs:
                p = producers.get(id(t))
                if p is not None:
                    depth = max(depth, layer_of[id(p)] + 1)
            layer_of[id(node)] = depth
            while len(layers) <= depth:
                layers.append([])
            layers[depth].append(self.box(graph, node))
        width = max([sum(b.w for b in row) + GAP_X * (len(row) - 1) for row in layers] or [60])
        y = 0.0
        for row in layers:   # (left-aligned: a wide graph starts where its pane does)
            x = 0.0
            height = max(b.h for b in row)
            for b in row:
                b.x, b.y = x, y
                x += b.w + GAP_X
            y += height + GAP_Y
        return layers, width, max(y - GAP_Y, NODE_H), producers

    def box(self, graph, node):
        subs = graph.subgraphs(node)
        if not subs:
            return _Box(node, max(56.0, CHAR_W * len(_label(node)) + 18), NODE_H)
        inner, x, h = [], PAD, 0.0
        for key, sub in subs.items():
            layers, w, gh, producers = self.graph(sub)
            w = max(w, CHAR_W * len(key) + 8)
            inner.append((key, sub, layers, producers, x, w))
            x += w + PAD * 2
            h = max(h, gh)
        return _Box(node, x - PAD, HEADER + 16 + h + PAD, inner)

    # -- drawing -----------------------------------------------------------------------------

    def draw_graph(self, layers, producers, ox, oy):
        boxes = {id(b.node): b for row in layers for b in row}
        for row in layers:   # edges first: nodes are drawn over them
            for b in row:
                for t in b.node.inputs:
                    p = producers.get(id(t))
                    if p is None or id(p) not in boxes:
                        continue
                    s = boxes[id(p)]
                    x1, y1 = ox + s.x + s.w / 2, oy + s.y + s.h
                    x2, y2 = ox + b.x + b.w / 2, oy + b.y
                    mid = (y1 + y2) / 2
                    self.parts.append(
                        f'<path class="edge" d="M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} '
                        f'{x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}"/>')
        for row in layers:
            for b in row:
                self.draw_box(b, ox + b.x, oy + b.y)

    def draw_box(self, b, x, y):
        node = b.node
        # (a branch's or body's inputs are the values passed in, made by no line)
        line = None if node.op == "Placeholder" else user_line(node, self.user_lines)
        lines = "" if line is None else str(line)
        outs = ", ".join(_tensor_text(t) for t in node.outputs)
        where = "" if line is None else f" (line {line})"
        title = html.escape(f"{node.name}: {node.op} -> {outs}{where}")
        kind = "placeholder" if node.op == "Placeholder" else "const" if node.op == "Const" \
            else "cluster" if b.inner else "op"
        self.parts.append(f'<g class="node {kind}" id="{self.node_id(node)}" '
                          f'data-lines="{lines}" data-op="{html.escape(node.op)}" '
                          f'data-name="{html.escape(node.name)}"><title>{title}</title>')
        if not b.inner:
            self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{b.w:.1f}" height="{b.h}" '
                              f'rx="6"/><text x="{x + b.w / 2:.1f}" y="{y + b.h / 2 + 4:.1f}">'
                              f'{html.escape(_label(node))}</text></g>')
            return
        self.parts.append(f'<rect class="frame" x="{x:.1f}" y="{y:.1f}" width="{b.w:.1f}" '
                          f'height="{b.h:.1f}" rx="8"/><g class="header">'
                          f'<rect x="{x:.1f}" y="{y:.1f}" width="{b.w:.1f}" height="{HEADER}" '
                          f'rx="8"/><text x="{x + 8:.1f}" y="{y + 15:.1f}" class="left">'
                          f'▾ {html.escape(node.op)} {html.escape(node.name)}</text></g>'
                          f'<g class="inside">')
        for key, sub, layers, producers, sx, w in b.inner:
            self.parts.append(f'<text x="{x + sx:.1f}" y="{y + HEADER + 12:.1f}" '
                              f'class="left sub">{html.escape(key)}</text>')
            self.draw_graph(layers, producers, x + sx, y + HEADER + 16)
        self.parts.append("</g></g>")


def to_svg(graph, user_lines=None):
    """SVG text of `graph` (see the module's docstring); `user_lines`: (file, first line,
    last line) of the user's function, whose lines the nodes' `data-lines` name."""
    layout = _Layout(user_lines)
    layers, width, height, producers = layout.graph(graph)
    layout.draw_graph(layers, producers, PAD, PAD)
    w, h = width + 2 * PAD, height + 2 * PAD
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{w:.0f}" '
            f'height="{h:.0f}" viewBox="0 0 {w:.0f} {h:.0f}">' + "".join(layout.parts) +
            "</svg>")
