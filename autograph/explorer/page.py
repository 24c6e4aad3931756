"""The explorer page: one self-contained HTML file (no network, no CDN) showing a function's
source, its converted code (`ag.to_code`), each converter pass's change and its traced
graph, linked by the user's lines.

Every line of the source, every line of converted code and every graph node carries
`data-lines` (the user's line it stands for). Clicking any of them selects that line: the
script marks (class `hl`) every element of the page with it, so a source line lights up the
generated lines and the graph nodes it made, and a node lights up its line and its
siblings. A URL fragment `#line=7` selects line 7 on load (the browser test uses it).
"""

import html

_STYLE = """
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { padding: 10px 16px; background: #1d2330; color: #fff; }
header h1 { font-size: 16px; margin: 0; } header p { margin: 2px 0 0; color: #b8c0d0; }
main { display: grid; grid-template-columns: minmax(280px, 1fr) minmax(320px, 1.2fr)
       minmax(360px, 1.6fr); gap: 10px; padding: 10px; }
main.profiled { grid-template-columns: minmax(520px, 1.8fr) minmax(280px, 1fr)
                minmax(340px, 1.2fr); }
section { background: #fff; border: 1px solid #d9dde5; border-radius: 6px; overflow: auto;
          max-height: 78vh; }
section h2 { font-size: 13px; margin: 0; padding: 6px 10px; border-bottom: 1px solid #e4e7ee;
             background: #fafbfc; position: sticky; top: 0; left: 0; z-index: 1; }
pre { margin: 0; padding: 6px 0; font: 12px/1.5 ui-monospace, Menlo, Consolas, monospace; }
.ln { display: block; padding: 0 10px; white-space: pre; cursor: pointer; }
.ln[data-lines=""] { cursor: default; color: #7a8294; }
.ln .no { display: inline-block; width: 2.5em; color: #a0a7b5; user-select: none; }
.ln .st { display: inline-block; width: 10.5em; color: #8a5a00; user-select: none; }
.ln .sb { display: inline-block; width: 6.5em; text-align: right; margin-right: 1em;
          color: #7a3ea8; user-select: none; }
.ln .sb.some { background: linear-gradient(to left, #ecdcf7 var(--w), transparent var(--w)); }
section h2 .legend { font-weight: normal; color: #6b7385; margin-left: 0.6em; }
.ln:hover { background: #eef3ff; }
.ln.hl { background: #ffe48a; }
svg.graph text { font: 11px ui-monospace, Menlo, Consolas, monospace; text-anchor: middle;
                 fill: #1d2330; pointer-events: none; }
svg.graph text.left { text-anchor: start; } svg.graph text.sub { fill: #6b7385; }
svg.graph .edge { fill: none; stroke: #9aa3b5; stroke-width: 1.2; }
svg.graph .node { cursor: pointer; }
svg.graph .node > rect { fill: #e8eefc; stroke: #6d86c6; }
svg.graph .placeholder > rect { fill: #e5f5ea; stroke: #5c9d70; }
svg.graph .const > rect { fill: #f1f1f1; stroke: #a5a5a5; }
svg.graph .cluster > rect.frame { fill: #fbfbfd; stroke: #8e97ab; stroke-dasharray: 4 3; }
svg.graph .cluster > .header rect { fill: #dfe4ee; stroke: #8e97ab; }
svg.graph .cluster.closed > .inside { display: none; }
svg.graph .node.hl:not(.cluster) > rect, svg.graph .cluster.hl > .header rect {
  fill: #ffe48a; stroke: #c98a00; }
#passes { grid-column: 1 / -1; max-height: none; }
details { border-top: 1px solid #eef0f4; } summary { padding: 5px 10px; cursor: pointer; }
summary .count { color: #6b7385; }
.diff .add { background: #e6f6ea; } .diff .del { background: #fbe9e9; }
.diff .hunk { color: #6b7385; }
"""

_SCRIPT = """
(function () {
  function select(line, from) {
    document.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
    if (!line) return;
    document.querySelectorAll('[data-lines]').forEach(function (e) {
      if (e.getAttribute('data-lines').split(' ').indexOf(line) >= 0) e.classList.add('hl');
    });
    document.body.setAttribute('data-selected', line);
    // bring the first marked element of each other pane into view
    ['source', 'generated', 'graph'].forEach(function (pane) {
      var box = document.getElementById(pane);
      if (box === from) return;
      var first = box.querySelector('.ln.hl, .node.op.hl, .node.cluster.hl') ||
                  box.querySelector('.hl');
      if (!first) return;
      var r = first.getBoundingClientRect(), b = box.getBoundingClientRect();
      box.scrollTop += r.top - b.top - box.clientHeight / 3;
      if (pane === 'graph') box.scrollLeft += r.left - b.left - box.clientWidth / 3;
    });
  }
  document.addEventListener('click', function (event) {
    var header = event.target.closest('.cluster > .header');
    if (header) { header.parentNode.classList.toggle('closed'); return; }
    var el = event.target.closest('[data-lines]');
    if (el && el.getAttribute('data-lines'))
      select(el.getAttribute('data-lines').split(' ')[0], el.closest('section'));
  });
  function fromHash() {
    var m = /line=(\\d+)/.exec(location.hash);
    if (m) select(m[1]);
  }
  window.addEventListener('hashchange', fromHash);
  fromHash();
  window.agSelect = select;
})();
"""


def size_text(n):
    """`n` bytes, short: 0 B, 980 B, 2.5 KiB, 31.3 MiB."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _stored_column(s, most):
    """The side column of bytes a line stores for the backward pass (a bar behind it, its
    length that line's share of the most any line stores); exact bytes on hover."""
    if s is None or len(s) < 5:
        return '<span class="sb"></span>'
    share = 100 * s[4] / most if most else 0
    return (f'<span class="sb{" some" if s[4] else ""}" style="--w:{share:.0f}%" '
            f'title="stored for the backward pass: {s[4]} bytes">{size_text(s[4])}</span>')


def _code_lines(lines, user_lines, first_number=1, stats=None):
    """Numbered lines; `stats`: {user line: (seconds, runs, bytes[, backward seconds,
    stored bytes])} shown in columns (time and share; bytes stored for the backward pass
    when there was one)."""
    out = []
    total = sum(s[0] for s in stats.values()) if stats else 0.0
    backward = stats is not None and any(len(s) >= 5 and (s[3] or s[4])
                                         for s in stats.values())
    most = max((s[4] for s in stats.values()), default=0) if backward else 0
    for k, (text, line) in enumerate(zip(lines, user_lines)):
        mark = "" if line is None else str(line)
        column = ""
        if stats is not None:
            s = stats.get(line)
            back = f", {1e3 * s[3]:.3f} ms of it backward" if s is not None and backward \
                else ""
            column = '<span class="st"></span>' if s is None else (
                f'<span class="st" title="{s[1]} runs, {s[2]} bytes allocated{back}">'
                f'{1e3 * s[0]:8.3f} ms {100 * s[0] / total if total else 0:3.0f}%</span>')
            if backward:
                column += _stored_column(s, most)
        out.append(f'<span class="ln" data-lines="{mark}"><span class="no">{k + first_number}'
                   f'</span>{column}{html.escape(text)}</span>')
    return "<pre>" + "".join(out) + "</pre>"


def _diff_block(name, lines):
    rows = []
    for line in lines:
        cls = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else ""
        rows.append(f'<span class="ln {cls}" data-lines="">{html.escape(line)}</span>')
    changed = sum(1 for line in lines if line[:1] in "+-")
    count = f"{changed} lines changed" if changed else "no change"
    body = "<pre class=\"diff\">" + "".join(rows) + "</pre>" if rows else ""
    return (f'<details{" open" if changed else ""}><summary><b>{html.escape(name)}</b> '
            f'<span class="count">{count}</span></summary>{body}</details>')


def render(title, subtitle, source_lines, source_first, generated_lines, generated_user,
           pass_diffs, svg, stats=None):
    """The page's HTML text. `source_lines` start at line `source_first` of the user's file;
    `generated_user`: per generated line its user line or None; `pass_diffs`: [(pass name,
    diff lines)]; `svg`: the graph (layout.to_svg) or None; `stats`: {line: (seconds,
    runs, bytes, backward seconds, stored bytes)} of a profiled run (ag.profile), shown
    beside the source."""
    source = _code_lines(source_lines, [source_first + k for k in range(len(source_lines))],
                         source_first, stats)
    legend = ""
    if stats:
        legend = "time · share" + (" · stored for backward" if any(
            len(s) >= 5 and (s[3] or s[4]) for s in stats.values()) else "")
        legend = f'<span class="legend">{legend}</span>'
    profiled = ' class="profiled"' if stats else ""
    generated = _code_lines(generated_lines, generated_user)
    graph = svg if svg is not None else "<p style='padding:10px'>Not traced: call "\
        "ag.explore(fn, *args) with arguments (or TensorSpecs) to see its graph.</p>"
    passes = "".join(_diff_block(name, lines) for name, lines in pass_diffs)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{html.escape(subtitle)} · click a line "
        "or a node: the page marks everything made by that line of yours</p></header>"
        f"<main{profiled}>"
        f"<section id=\"source\"><h2>Your source{legend}</h2>{source}</section>"
        f"<section id=\"generated\"><h2>Converted code (ag.to_code)</h2>{generated}</section>"
        f"<section id=\"graph\"><h2>Traced graph</h2>{graph}</section>"
        f"<section id=\"passes\"><h2>What each converter pass changed</h2>{passes}</section>"
        f"</main><script>{_SCRIPT}</script></body></html>\n")
