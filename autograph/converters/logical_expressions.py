"""`and`, `or`, `not` and chained comparisons -> operator calls, lazy on tensors.

    a and b and c    ->  ag__.and_(a, lambda: b, lambda: c)
    a or b           ->  ag__.or_(a, lambda: b)
    not a            ->  ag__.not_(a)
    0 <= i < n       ->  ag__.and_(0 <= i, lambda: i < n)

The first operand is evaluated as written; the others stay behind lambdas so they run only
when Python would run them (and, on tensors, only in the branch of the staged cond that
needs them). A chained comparison is split only when its middle operands are names or
constants, which are safe to evaluate twice; any other chain is left as it is.
"""

import gast

from autograph.converters.base import Transformer
from autograph.source import anno, templates


def _lambda(expr, origin):
    return templates.replace_as_expression("lambda: expr", origin=origin,
                                           expr=templates.moved(expr))


class LogicalConverter(Transformer):

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        fn = "ag__.and_" if isinstance(node.op, gast.And) else "ag__.or_"
        call = templates.replace_as_expression(f"{fn}(first)", origin=node,
                                               first=templates.moved(node.values[0]))
        call.args += [_lambda(v, node) for v in node.values[1:]]
        return call

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if not isinstance(node.op, gast.Not):
            return node
        return templates.replace_as_expression("ag__.not_(x)", origin=node,
                                               x=templates.moved(node.operand))

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) < 2:
            return node
        middle = node.comparators[:-1]
        if not all(isinstance(m, (gast.Name, gast.Constant)) for m in middle):
            return node
        operands = [node.left] + node.comparators
        # a middle operand stands in two comparisons: the second gets a copy
        parts = [gast.Compare(left=operands[i] if i == 0 else anno.copy_tree(operands[i]),
                              ops=[op], comparators=[operands[i + 1]])
                 for i, op in enumerate(node.ops)]
        call = templates.replace_as_expression("ag__.and_(first)", origin=node,
                                               first=templates.moved(parts[0]))
        call.args += [_lambda(p, node) for p in parts[1:]]
        return call


def transform(node, ctx):
    return LogicalConverter(ctx).visit(node)
