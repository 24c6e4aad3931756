"""`a if cond else b` -> `ag__.if_exp(cond, lambda: a, lambda: b)`.

Both values stay behind lambdas: Python evaluates only the chosen one, and with a tensor
condition each is traced into its own branch of a staged cond.
"""

from autograph.converters.base import Transformer
from autograph.source import anno, templates


class IfExpConverter(Transformer):

    def visit_IfExp(self, node):
        anno.setanno(node.test, anno.Basic.TRUTH_TEST, True)
        node = self.generic_visit(node)
        return templates.replace_as_expression(
            "ag__.if_exp(test, lambda: body, lambda: orelse)", origin=node,
            test=templates.moved(node.test), body=templates.moved(node.body),
            orelse=templates.moved(node.orelse))


def transform(node, ctx):
    return IfExpConverter(ctx).visit(node)
