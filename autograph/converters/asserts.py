"""`assert cond, msg` -> `ag__.assert_stmt(cond, lambda: msg)`.

On Python values this is Python's assert (the message is built only on failure). With a
tensor condition it becomes a run-time check that raises AssertionError with the user's
message and line whenever the graph runs.
"""

from autograph.converters.base import Transformer
from autograph.source import templates


class _Asserts(Transformer):

    def visit_Assert(self, node):
        node = self.generic_visit(node)
        if node.msg is None:
            return templates.replace("ag__.assert_stmt(test)", origin=node, test=node.test)
        return templates.replace("ag__.assert_stmt(test, lambda: msg)", origin=node,
                                 test=node.test, msg=node.msg)


def transform(node, ctx):
    return _Asserts(ctx).visit(node)
