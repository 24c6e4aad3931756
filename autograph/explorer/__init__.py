"""The explorer: a function's source, converted code, converter passes and traced graph on
one page, linked by the user's lines (`ag.explore(fn, *args)`, `autograph explore`).

    page = ag.explore(collatz, np.int64(27))     # or TensorSpecs instead of values
    page.save("collatz.html")                    # one self-contained file, no network
    page                                         # in Jupyter: shown in place

passes.py reruns the converter pipeline one pass at a time; layout.py draws the graph as
SVG in pure Python; page.py writes the HTML (and its small script: clicking a line or a
node marks everything made by that line of the user's). Loaded only when asked for.
"""

import html
import inspect

__all__ = ["explore", "Page"]


class Page:
    """An explorer page: `.html` (the text), `.save(path)`, and `_repr_html_` for notebooks
    (the page in an iframe, so its style and script stay its own)."""

    def __init__(self, text, title):
        self.html, self.title = text, title

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)
        return path

    def _repr_html_(self):
        return (f'<iframe title="{html.escape(self.title)}" style="width:100%;height:720px;'
                f'border:1px solid #ccd" srcdoc="{html.escape(self.html, quote=True)}"></iframe>')

    def __repr__(self):
        return f"<autograph explorer page: {self.title} ({len(self.html)} characters)>"


def _python_function(fn):
    inner = getattr(fn, "python_function", None)
    return inner if inner is not None else fn


def _generated_user_lines(fn, generated_lines):
    """Per line of `ag.to_code(fn)`, the user's line it came from (or None)."""
    import linecache
    from autograph import api
    from autograph.source import origin
    converted = api._convert_code(fn)
    module = linecache.getlines(converted.filename)
    first = generated_lines[0].strip() if generated_lines else ""
    offset = next((k for k, line in enumerate(module) if line.strip() == first), 0)
    user_file = inspect.getsourcefile(fn)
    found = []
    for k in range(len(generated_lines)):
        loc = origin.lookup(converted.filename, k + 1 + offset)
        found.append(loc.lineno if loc is not None and loc.filename == user_file else None)
    return found


def page_for(fn, graph=None, signature="", stats=None):
    """The Page of `fn` (a plain function) and, when given, its traced `graph` and the
    per-line `stats` of a profiled run."""
    from autograph import api
    from autograph.explorer import layout, page, passes
    source_lines, first = inspect.getsourcelines(fn)
    source_lines = [line.rstrip("\n") for line in source_lines]
    generated = api.to_code(fn).rstrip("\n").split("\n")
    generated_user = _generated_user_lines(fn, generated)
    diffs = [(name, passes.diff(before, after)) for name, before, after in passes.changes(fn)]
    user_file = inspect.getsourcefile(fn)
    span = (user_file, first, first + len(source_lines) - 1)
    svg = layout.to_svg(graph, span) if graph is not None else None
    title = f"{fn.__qualname__} — autograph explorer"
    where = f"{user_file}:{first}" + (f" · traced for {signature}" if signature else "")
    return Page(page.render(title, where, source_lines, first, generated, generated_user,
                            diffs, svg, stats), title)


def explore(fn, *args, gradient=False, profile=False, **kwargs):
    """The explorer Page of `fn` (a function or an `ag.function` Function) traced for
    `args` (values or `ag.TensorSpec`s; none: the source, converted code and passes only).
    `gradient=True` shows the graph of `ag.grad(fn)` instead (the forward pass and the
    backward pass, whose nodes name the forward lines they differentiate). `profile=True`
    (with values) runs it under `ag.profile` and shows each line's time beside the source
    (and, for a gradient, the bytes each line stores for the backward pass)."""
    import autograph as ag
    plain = _python_function(fn)
    graph, signature = None, ""
    if gradient:
        function = ag.function(ag.grad(plain))
    else:
        function = fn if isinstance(fn, ag.Function) else ag.function(plain)
    if args or kwargs:
        concrete = function.get_concrete_function(*args, **kwargs)
        graph, signature = concrete.graph, concrete._signature_line()
        if gradient:
            signature = f"the gradient, {signature}"
    stats = None
    if profile and (args or kwargs):
        from autograph.explorer.profile import profile as profiler
        table = profiler(plain, gradient=gradient)(*args, **kwargs)
        stats = {r.line: (r.seconds, r.runs, r.bytes, r.backward, r.stored)
                 for r in table.rows}
    return page_for(plain, graph, signature, stats)


def page_of_function(function):
    """`Function._repr_html_`: the page of an ag.function with its latest trace, if any."""
    concretes = list(function._traces.values())
    concrete = concretes[-1] if concretes else None
    return page_for(function.python_function,
                    None if concrete is None else concrete.graph,
                    "" if concrete is None else concrete._signature_line())
