"""What each converter pass changed in a function: the pipeline run again, one pass at a
time, with the source unparsed after each (the explorer page shows these as diffs).

The passes are the ones `ag.to_code` runs (converters.pipeline.PIPELINE), in its order and
with its rule for skipping a pass that rewrites a statement the function does not have, so
the last text is what `to_code` shows.
"""

import difflib

# a readable name per pass (the module the transform function lives in)
_NAMES = {"_expressions": "conditional_expressions + logical_expressions"}


def pass_name(transform):
    name = transform.__name__
    if name in _NAMES:
        return _NAMES[name]
    return transform.__module__.rsplit(".", 1)[-1]


def changes(fn):
    """[(pass name, text before, text after)] for every pass run over `fn` (a plain
    function), in order; a pass that changed nothing has equal texts."""
    import gast
    from autograph.converters import base, pipeline, variables
    from autograph.source import parser
    node, text, info = parser.parse_entity(fn)
    ctx = pipeline.Context(fn, node, info, source=text)
    kinds = base.statement_kinds(node)
    if (gast.FunctionDef in kinds or gast.AsyncFunctionDef in kinds) and (
            base.may_contain(ctx, "yield") or base.may_contain(ctx, "await")):
        base.skip_generators(node)
    variables.record_locals(node)
    steps = []
    before = parser.unparse(node)
    for transform in pipeline.PIPELINE:
        needed = pipeline._ONLY_FOR.get(transform)
        if needed is not None and not (any(k in kinds for k in needed)
                                       if isinstance(needed, tuple) else needed in kinds):
            continue
        node = transform(node, ctx)
        after = parser.unparse(node)
        steps.append((pass_name(transform), before, after))
        before = after
    return steps


def diff(before, after):
    """A unified diff of two texts, as lines (no file headers)."""
    return list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="",
                                     n=2))[2:]
