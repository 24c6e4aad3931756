"""`break` -> a flag that joins the loop's condition.

    while x > 0:                      break_ = False
        if x == 3:                    while not break_ and x > 0:
            break           ->            if x == 3:
        x -= 1                                break_ = True
    else:                                 if not break_:
        done = True                           x -= 1
                                      if not break_:
                                          done = True

A `for` loop gets the flag as its extra test (anno.Basic.EXTRA_LOOP_TEST: `not break_`),
which the control-flow converter turns into the loop's `extra_test` function. A loop's
`else:` block runs only when the loop did not break, so it moves after the loop under
`if not break_`.
"""

import gast

from autograph.converters import jumps
from autograph.converters.base import Transformer
from autograph.source import anno, templates


class _BreakLowering(Transformer):

    def _visit_loop(self, node):
        node = self.generic_visit(node)  # inner loops first: their breaks are their own
        if not jumps.has_jump(node.body, gast.Break, into_loops=False):
            return node
        flag = self.ctx.namer.new_symbol("break_")

        def set_flag(stmt):
            return templates.replace("flag = True", origin=stmt, flag=flag)

        node.body = jumps.lower(node.body, gast.Break, set_flag, flag) or [gast.Pass()]
        init = templates.replace("flag = False", origin=node, flag=flag)
        if isinstance(node, gast.While):
            node.test = templates.replace_as_expression("not flag and test", origin=node,
                                                        flag=flag, test=node.test)
        else:
            extra = templates.replace_as_expression("not flag", origin=node, flag=flag)
            previous = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
            if previous is not None:
                extra = templates.replace_as_expression("a and b", origin=node, a=previous, b=extra)
            anno.setanno(node, anno.Basic.EXTRA_LOOP_TEST, extra)
        after = []
        if node.orelse:
            after = jumps.guard(flag, node.orelse, origin=node.orelse[0])
            node.orelse = []
        return init + [node] + after

    visit_While = _visit_loop
    visit_For = _visit_loop


def transform(node, ctx):
    """Lower every `break` in the function (nested functions included) to a flag."""
    return _BreakLowering(ctx).visit(node)

