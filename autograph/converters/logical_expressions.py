"""`and`, `or`, `not` and chained comparisons -> operator calls, lazy on tensors.

    a and b and c    ->  ag__.and_(a, lambda: b, lambda: c)
    a or b           ->  ag__.or_(a, lambda: b)
    not a            ->  ag__.not_(a)
    0 <= i < n       ->  ag__.and_(0 <= i, lambda: i < n)
    0 < x + 1 <= 8   ->  ag__.and_(0 < (chain := x + 1), lambda: chain <= 8)
    c in l           ->  ag__.in_(c, l)            (an array `l`: NumPy's any(l == c))
    c not in l       ->  ag__.not_(ag__.in_(c, l))
    if a % 2 or b:   ->  ag__.if_stmt(ag__.or_(a % 2, lambda: b, truth=True), ...)

The first operand is evaluated as written; the others stay behind lambdas so they run only
when Python would run them (and, on tensors, only in the branch of the staged cond that
needs them). A middle operand of a chained comparison that is not a name or a constant is
evaluated once, into a fresh name, as Python does. Where only the truth of `and`/`or`
matters (an if or while test, a conditional expression's test), `truth=True` lets tensor
operands of different dtypes meet as booleans.
"""

import gast

from autograph.converters.base import Transformer
from autograph.source import anno, templates, traversal


def _lambda(expr, origin):
    return templates.replace_as_expression("lambda: expr", origin=origin,
                                           expr=templates.moved(deferred_reads(expr)))


def deferred_reads(expr):
    """In a part that moves behind a lambda, `ag__.ld(x)` of a variable with no value would
    fail on the lambda's free variable first (NameError, not Python's UnboundLocalError):
    such reads become `ag__.ld(ag__.ldu(lambda: x, 'x'))`."""
    for node in traversal.walk(expr, leaves=False):
        if (node.__class__ is gast.Call and node.func.__class__ is gast.Attribute
                and node.func.attr == "ld" and node.func.value.__class__ is gast.Name
                and node.func.value.id == "ag__" and len(node.args) == 1
                and node.args[0].__class__ is gast.Name):
            var = node.args[0].id
            node.args[0] = templates.replace_as_expression(f"ag__.ldu(lambda: {var}, '{var}')")
    return expr


def _truth_only(node):
    return anno.getanno(node, anno.Basic.TRUTH_TEST, False)


def _assigns(nodes):
    """Does any of `nodes` hold an assignment expression (`x := ...`)? Behind a lambda it
    would bind `x` in the lambda, not in the function."""
    return any(n.__class__ is gast.NamedExpr for v in nodes for n in traversal.walk(v, leaves=False))


def python_operands(values, op, origin):
    """Keep Python's own operator, each operand but the last checked to be a Python value."""
    return [templates.replace_as_expression(f"ag__.python_operand(v, '{op}')", origin=origin,
                                            v=templates.moved(v)) for v in values]


class LogicalConverter(Transformer):

    def visit_BoolOp(self, node):
        if _assigns(node.values[1:]):  # `a and (x := f())`: only Python's `and` binds x
            node = self.generic_visit(node)
            op = "and" if isinstance(node.op, gast.And) else "or"
            node.values[:-1] = python_operands(node.values[:-1], op, node)
            return node
        truth = _truth_only(node)
        if truth:  # the operands' values only matter for their truth too
            for v in node.values:
                anno.setanno(v, anno.Basic.TRUTH_TEST, True)
            # comparisons, `not` and and/or give booleans already: the keyword is only
            # written where an operand may be a number or an array
            truth = not all(isinstance(v, (gast.Compare, gast.BoolOp)) or
                            (isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.Not))
                            for v in node.values)
        node = self.generic_visit(node)
        fn = "ag__.and_" if isinstance(node.op, gast.And) else "ag__.or_"
        call = templates.replace_as_expression(f"{fn}(first)", origin=node,
                                               first=templates.moved(node.values[0]))
        call.args += [_lambda(v, node) for v in node.values[1:]]
        if truth:
            call.keywords.append(gast.keyword(arg="truth", value=gast.Constant(value=True, kind=None)))
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
            return _membership(node)
        operands = [node.left] + node.comparators
        for i in range(1, len(operands) - 1):
            if not isinstance(operands[i], (gast.Name, gast.Constant)):
                # evaluated once, as Python does: `(chain := x + 1)`, then `chain` again
                tmp = self.ctx.namer.new_symbol("chain")
                operands[i] = gast.NamedExpr(
                    target=gast.Name(id=tmp, ctx=gast.Store(), annotation=None, type_comment=None),
                    value=operands[i])
                anno.copy_origin(node, [operands[i]])
                copy_of = gast.Name(id=tmp, ctx=gast.Load(), annotation=None, type_comment=None)
                operands[i] = (operands[i], copy_of)
        # a middle operand stands in two comparisons: the second gets a copy
        def left(i):
            o = operands[i]
            return o[1] if isinstance(o, tuple) else o if i == 0 else anno.copy_tree(o)

        def right(i):
            o = operands[i]
            return o[0] if isinstance(o, tuple) else o
        parts = [_membership(gast.Compare(left=left(i), ops=[op], comparators=[right(i + 1)]))
                 for i, op in enumerate(node.ops)]
        # nested, so a later part's lambda sees the names an earlier part's `:=` bound
        call = parts[-1]
        for p in reversed(parts[:-1]):
            call = templates.replace_as_expression("ag__.and_(first, later)", origin=node,
                                                   first=templates.moved(p),
                                                   later=_lambda(call, node))
        return call


def _membership(node):
    """`a in b` (a one-operator comparison) -> ag__.in_(a, b): Python's `in` calls bool() on
    its answer, which a tensor cannot give while tracing."""
    op = node.ops[0].__class__
    if op is not gast.In and op is not gast.NotIn:
        return node
    call = templates.replace_as_expression("ag__.in_(x, container)", origin=node,
                                           x=templates.moved(node.left),
                                           container=templates.moved(node.comparators[0]))
    if op is gast.NotIn:
        call = templates.replace_as_expression("ag__.not_(x)", origin=node, x=call)
    return call


def transform(node, ctx):
    return LogicalConverter(ctx).visit(node)
