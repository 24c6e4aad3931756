"""The pass pipeline: the passes in order, and `convert`, which runs them (see the package's
docstring). Imported on the first conversion only: a process that finds every function's
conversion in the disk cache (autograph.source.disk_cache) never loads the passes."""

from autograph.converters import (asserts, break_statements, call_trees,  # noqa: F401
                                  conditional_expressions, continue_statements, control_flow,
                                  declarations, formatting, item_updates, lists, locals_calls,
                                  logical_expressions, return_statements, static_dims,
                                  variables)
import gast

from autograph.converters import base
from autograph.converters.base import Context


class _Expressions(conditional_expressions.IfExpConverter, logical_expressions.LogicalConverter):
    """conditional_expressions and logical_expressions in one walk of the tree: each
    rewrites its nodes after their children, so the result is what the two passes give
    one after the other, for half the visits."""


def _expressions(node, ctx):
    """Only the subtrees that hold something to rewrite are visited: a plain walk finds
    their roots (the outermost IfExp, BoolOp, `not` or chained comparison), which costs a
    fraction of a transformer's visit of every node."""
    base.rewrite_outermost(node, _rewrites_expression, _Expressions(ctx).visit)
    return node


def _rewrites_expression(node):
    cls = node.__class__
    return (cls is gast.IfExp or cls is gast.BoolOp or
            (cls is gast.UnaryOp and node.op.__class__ is gast.Not) or
            (cls is gast.Compare and (len(node.ops) > 1 or
                                      node.ops[0].__class__ in (gast.In, gast.NotIn))))


PIPELINE = (
    declarations.transform,
    locals_calls.transform,
    asserts.transform,
    return_statements.transform,
    break_statements.transform,
    continue_statements.transform,
    static_dims.transform,
    item_updates.transform,
    lists.transform,
    formatting.transform,
    call_trees.transform,
    control_flow.transform,
    _expressions,   # conditional_expressions + logical_expressions
)


# passes that rewrite one kind of statement and leave a function without it unchanged
_ONLY_FOR = {declarations.transform: (gast.Global, gast.Nonlocal), asserts.transform: gast.Assert,
             break_statements.transform: gast.Break, continue_statements.transform: gast.Continue,
             item_updates.transform: (gast.Assign, gast.AugAssign, gast.Expr),
             lists.transform: (gast.Expr, gast.Assign, gast.AugAssign)}


def convert(node, ctx):
    """Run every pass over `node` (a gast FunctionDef or Lambda) and return it. A pass that
    only rewrites a kind of statement the function does not have is not run at all."""
    kinds = base.statement_kinds(node)
    if (gast.FunctionDef in kinds or gast.AsyncFunctionDef in kinds) and (
            base.may_contain(ctx, "yield") or base.may_contain(ctx, "await")):
        base.skip_generators(node)   # only nested generator functions are marked
    variables.record_locals(node)   # before the jump passes drop code after a jump
    for transform in PIPELINE:
        needed = _ONLY_FOR.get(transform)
        if needed is None or (any(k in kinds for k in needed) if isinstance(needed, tuple)
                              else needed in kinds):
            node = transform(node, ctx)
    return node


