"""`a if cond else b` -> `ag__.if_exp(cond, lambda: a, lambda: b)`.

Both values stay behind lambdas: Python evaluates only the chosen one, and with a tensor
condition each is traced into its own branch of a staged cond.
"""

import gast

from autograph.converters.base import Transformer
from autograph.converters.logical_expressions import deferred_reads
from autograph.source import anno, templates, traversal


class IfExpConverter(Transformer):

    def visit_IfExp(self, node):
        anno.setanno(node.test, anno.Basic.TRUTH_TEST, True)
        if any(n.__class__ is gast.NamedExpr for v in (node.body, node.orelse) for n in traversal.walk(v, leaves=False)):
            # `a if c else (x := b)`: only Python's own conditional binds x in the function
            node = self.generic_visit(node)
            node.test = templates.replace_as_expression(
                "ag__.python_operand(test, 'if ... else')", origin=node, test=templates.moved(node.test))
            return node
        node = self.generic_visit(node)
        return templates.replace_as_expression(
            "ag__.if_exp(test, lambda: body, lambda: orelse)", origin=node,
            test=templates.moved(node.test), body=templates.moved(deferred_reads(node.body)),
            orelse=templates.moved(deferred_reads(node.orelse)))


def transform(node, ctx):
    return IfExpConverter(ctx).visit(node)
