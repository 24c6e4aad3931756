"""`return` anywhere -> code where every return is at the end.

Two forms, the more readable first:

1. Early returns become if/else. When one branch of an `if` always returns, the statements
   after the `if` move into the other branch (a tail of at most three simple statements
   may also be copied into both branches):

       if x < 0:                       if x < 0:
           return -x          ->           return -x
       y = x * 2                       else:
       return y                            y = x * 2
                                           return y

   An `if` at the end whose branches all end in `return` is marked (Conv.RETURN_IF); the
   control-flow converter turns it into `return ag__.if_stmt(...)`, whose branch functions
   return the function's value.

2. Otherwise (a return inside a loop, or returns the first form cannot place), a flag:
   `retval_ = value; do_return = True` at each return (the value first: if it raises, nothing
   returned), the statements that may run after a
   return guarded by `if not do_return:`, `not do_return` added to the test of every loop
   the return is in, and one `return retval_` at the end. `retval_` starts as ag__.UndefinedReturnValue(), so a path
   that returns nothing gives None, as in Python.
"""

import copy

import gast

from autograph.converters import finally_jumps, jumps
from autograph.converters.base import SCOPE_NODES, Conv, Transformer
from autograph.source import anno, templates


def _contains_return(stmts):
    return jumps.has_jump(stmts, gast.Return, into_loops=True)


def always_returns(stmts):
    """True when every path through `stmts` ends in a return or raise."""
    for s in stmts:
        if isinstance(s, (gast.Return, gast.Raise)):
            return True
        if isinstance(s, gast.If) and always_returns(s.body) and always_returns(s.orelse):
            return True
    return False


def _small(stmts, limit=3):
    """A short tail of simple statements, cheap to copy into both branches of an `if`."""
    simple = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return, gast.Expr, gast.Pass,
              gast.Raise)
    return len(stmts) <= limit and all(isinstance(s, simple) for s in stmts)


def _canonicalize(stmts):
    """Move the statements after an `if` that returns on one side into its other side."""
    out = []
    for i, s in enumerate(stmts):
        out.append(s)
        if isinstance(s, gast.Return):
            return out  # what follows is dead
        if not (isinstance(s, gast.If) and _contains_return([s])):
            continue
        rest = stmts[i + 1:]
        body_ar, else_ar = always_returns(s.body), always_returns(s.orelse)
        moved = False
        if body_ar and else_ar:
            moved = True  # the rest is dead
        elif rest and body_ar:
            s.orelse = s.orelse + rest
            moved = True
        elif rest and else_ar:
            s.body = s.body + rest
            moved = True
        elif rest and _small(rest):
            # neither side always returns: a short tail is copied into both sides, which
            # reads better than flags
            s.body = s.body + copy.deepcopy(rest)
            s.orelse = s.orelse + rest
            moved = True
        s.body = _canonicalize(s.body)
        s.orelse = _canonicalize(s.orelse)
        if moved:
            return out
    return out


def _tail_form(stmts):
    """True when all returns in `stmts` are last statements of tail-position blocks."""
    for s in stmts[:-1]:
        if _contains_return([s]):
            return False
    if not stmts:
        return True
    last = stmts[-1]
    if isinstance(last, gast.If):
        return _tail_form(last.body) and _tail_form(last.orelse)
    return isinstance(last, gast.Return) or not _contains_return([last])


def _mark_tail_ifs(stmts):
    """Give each tail `if` that returns an explicit return on every branch; mark it."""
    if not stmts:
        return [gast.Return(value=None)]
    last = stmts[-1]
    if isinstance(last, gast.If) and _contains_return([last]):
        last.body = _mark_tail_ifs(last.body)
        last.orelse = _mark_tail_ifs(last.orelse)
        anno.setanno(last, Conv.RETURN_IF, True)
        return stmts
    if isinstance(last, (gast.Return, gast.Raise)):
        return stmts
    ret = gast.Return(value=None)
    anno.copyanno(last, ret, anno.Basic.ORIGIN)
    return stmts + [ret]


class _FlagLowering:
    """Form 2: do_return / retval_ flags."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.do_return = ctx.namer.new_symbol("do_return")
        self.retval = ctx.namer.new_symbol("retval_")

    def _assign(self, stmt):
        value = stmt.value if stmt.value is not None else gast.Constant(value=None, kind=None)
        # the value first: if computing it raises, the function has not returned (an
        # `except` or a `with` that suppresses the error goes on as in Python)
        return templates.replace("retval_ = value\ndo_return = True", origin=stmt,
                                 do_return=self.do_return, retval_=self.retval, value=value)

    def lower(self, stmts):
        """Returns set the flag; whatever may run after one is guarded by it."""
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.Return):
                out.extend(self._assign(s))
                return out
            if isinstance(s, SCOPE_NODES) or not _contains_return([s]):
                out.append(s)
                continue
            self._lower_children(s)
            if isinstance(s, jumps.LOOPS):
                self._stop_loop(s)
            out.append(s)
            rest = stmts[i + 1:]
            if rest:
                out.extend(jumps.guard(self.do_return, self.lower(rest), origin=rest[0]))
            return out
        return out

    def _lower_children(self, s):
        # None: not a try whose body returns
        skips_else = bool(s.orelse) if isinstance(s, gast.Try) and _contains_return(s.body) else None
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if not block:
                continue
            if field == "finalbody" and finally_jumps.jumps_out(block):
                setattr(s, field, self._lower_jumping_finally(block))
                continue
            setattr(s, field, self.lower(block) or ([gast.Pass()] if field == "body" else []))
        for clause in jumps.clauses(s):   # except handlers, match cases
            clause.body = self.lower(clause.body) or [gast.Pass()]
            if skips_else is not None:
                # an exception that reaches a handler ended any return of the body (it
                # was raised by a `finally:` or a `with` exit after the return)
                clause.body = self._forget_return(clause) + clause.body
        if skips_else:
            # a `try` body that returned skips its `else:` (it left the statement)
            s.orelse = jumps.guard(self.do_return, s.orelse, origin=s.orelse[0])

    def _forget_return(self, origin):
        return templates.replace("do_return = False\nretval_ = ag__.UndefinedReturnValue()",
                                 origin=origin, do_return=self.do_return, retval_=self.retval)

    def _lower_jumping_finally(self, block):
        """A `finally:` that returns, breaks or continues replaces the return pending from
        its `try` (if any): the pending return is set aside while the block runs (so its own
        loops and guards do not stop at it) and comes back only if the block ends normally;
        a break or continue there drops it (Python returns nothing then, or returns later)."""
        pending = self.ctx.namer.new_symbol("pending_return")
        finally_jumps.before_outward_loop_jumps(block, self._forget_return)
        start = templates.replace("pending = do_return\ndo_return = False", origin=block[0],
                                  pending=pending, do_return=self.do_return)
        end = templates.replace("do_return = do_return or pending", origin=block[-1],
                                pending=pending, do_return=self.do_return)
        return start + self.lower(block + end)

    def _stop_loop(self, loop):
        """A loop that may return stops when it does: `not do_return` joins its test, and
        its `else:` (which a return skips, as a break does) runs only if it did not."""
        stop = templates.replace_as_expression("not do_return", origin=loop,
                                               do_return=self.do_return)
        if isinstance(loop, gast.While):
            loop.test = templates.replace_as_expression("stop and test", origin=loop,
                                                        stop=stop, test=loop.test)
        else:
            previous = anno.getanno(loop, anno.Basic.EXTRA_LOOP_TEST, None)
            if previous is not None:
                stop = templates.replace_as_expression("a and b", origin=loop, a=previous, b=stop)
            anno.setanno(loop, anno.Basic.EXTRA_LOOP_TEST, stop)
        if loop.orelse:
            loop.orelse = jumps.guard(self.do_return, loop.orelse, origin=loop.orelse[0])

    def run(self, fn_node):
        falls_off = not always_returns(fn_node.body)
        origin = fn_node.body[0]
        init = templates.replace("do_return = False\nretval_ = ag__.UndefinedReturnValue()",
                                 origin=origin, do_return=self.do_return, retval_=self.retval)
        body = self.lower(fn_node.body)
        end = templates.replace("return ag__.retval(retval_)" if falls_off else "return retval_",
                                origin=fn_node.body[-1], retval_=self.retval)
        fn_node.body = init + body + end
        return fn_node


def _convert_function(node, ctx):
    node.body = finally_jumps.rewrite(node.body, ctx)
    if not _contains_return(node.body):
        return node
    body = _canonicalize(node.body)
    if _tail_form(body):
        node.body = _mark_tail_ifs(body) if isinstance(body[-1], gast.If) else body
        return node
    node.body = body
    return _FlagLowering(ctx).run(node)


class _Functions(Transformer):
    def visit_FunctionDef(self, node):
        node = self.generic_visit(node)  # nested functions first: their returns are theirs
        return _convert_function(node, self.ctx)


def transform(node, ctx):
    """Rewrite the returns of the function and of every function nested in it."""
    if isinstance(node, gast.Lambda):
        return node
    return _Functions(ctx).visit(node)
