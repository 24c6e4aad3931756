"""`continue` -> a flag that guards the rest of the loop body.

    for x in xs:                      for x in xs:
        if x < 0:                         continue_ = False
            continue          ->          if x < 0:
        total += x                            continue_ = True
                                          if not continue_:
                                              total += x

The flag is reset at the top of every iteration, so it never outlives one iteration and
never becomes loop state.
"""

import gast

from autograph.converters import jumps
from autograph.converters.base import Transformer
from autograph.source import templates


class _ContinueLowering(Transformer):

    def _visit_loop(self, node):
        node = self.generic_visit(node)
        if not jumps.has_jump(node.body, gast.Continue, into_loops=False):
            return node
        flag = self.ctx.namer.new_symbol("continue_")

        def set_flag(stmt):
            return templates.replace("flag = True", origin=stmt, flag=flag)

        # its `if`s are marked: a Python range loop whose continue turns out to depend on a
        # tensor stages the rest of its range (autograph.operators.for_loops._py_for)
        body = jumps.lower(node.body, gast.Continue, set_flag, flag, mark=True)
        first = body[0] if body else None
        sets_flag = (isinstance(first, gast.Assign) and len(first.targets) == 1
                     and isinstance(first.targets[0], gast.Name) and first.targets[0].id == flag)
        if not sets_flag:  # a body starting with `continue_ = <test>` needs no reset
            body = templates.replace("flag = False", origin=node.body[0], flag=flag) + body
        node.body = body
        return node

    visit_While = _visit_loop
    visit_For = _visit_loop


def transform(node, ctx):
    """Lower every `continue` in the function (nested functions included) to a flag."""
    return _ContinueLowering(ctx).visit(node)
