"""Lowering jumps (break, continue, return) to flag variables, shared by three converters.

A jump leaves the rest of a block unexecuted. Graph control flow has no jumps, so each one
becomes an assignment to a flag (`break_ = True`), and every statement that could run after
a jump is guarded by the flag (`if not break_: ...`). Statements after the jump in its own
block are dead and dropped. Only blocks that may jump get a guard, so straight-line code
stays as the user wrote it.
"""

import gast

from autograph.converters.base import SCOPE_NODES, Conv
from autograph.source import anno, templates

LOOPS = (gast.For, gast.While, gast.AsyncFor)


def blocks_of(node, into_loops):
    """The statement-list fields of a compound statement that a jump search enters.

    Loop bodies are entered only `into_loops` (a `break` in a nested loop's body is that
    loop's own); a loop's `else:` block belongs to the enclosing one."""
    if isinstance(node, gast.If):
        return ["body", "orelse"]
    if isinstance(node, LOOPS):
        return ["body", "orelse"] if into_loops else ["orelse"]
    if isinstance(node, (gast.With, gast.AsyncWith)):
        return ["body"]
    if isinstance(node, gast.Try):
        return ["body", "orelse", "finalbody"]
    return []


_MATCH = getattr(gast, "Match", ())   # `match` statements exist from Python 3.10


def clauses(node):
    """The handlers of a `try` and the cases of a `match`: nodes that each hold a body."""
    if isinstance(node, gast.Try):
        return node.handlers
    if isinstance(node, _MATCH):
        return node.cases
    return []


def _inner_blocks(node, into_loops):
    return ([getattr(node, f) for f in blocks_of(node, into_loops)]
            + [clause.body for clause in clauses(node)])


def has_jump(stmts, kinds, into_loops):
    """True when a statement of `kinds` is in `stmts`, searching compound statements (not
    nested functions; nested loop bodies only `into_loops`)."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, SCOPE_NODES):
            continue
        for block in _inner_blocks(s, into_loops):
            if has_jump(block, kinds, into_loops):
                return True
    return False


def guard(flag, stmts, origin, jump=False):
    """`if not flag: stmts`. `jump`: the flag is a jump of the loop the guard is in (not
    a loop's `else:` after it), so the `if` is marked Conv.JUMP_IF."""
    out = templates.replace("if not flag:\n    pass", origin=origin, flag=flag)
    out[0].body = list(stmts)  # moved, not copied
    if jump:
        mark_jump(out[0])
    return out


def mark_jump(node):
    """Mark an `if` that a loop's own jump decides (Conv.JUMP_IF)."""
    if isinstance(node, gast.If):
        anno.setanno(node, Conv.JUMP_IF, True)


def lower(stmts, kinds, replace_jump, flag, into_loops=False, after_loop=None, mark=False):
    """Rewrite a block: jumps of `kinds` become `replace_jump(stmt)` (a list), what may run
    after one is guarded by `if not flag`. `after_loop(loop)` may add statements after a
    nested loop that contained a jump (e.g. `if do_return: break`). `mark`: the `if`s that
    hold a jump and the guards are marked Conv.JUMP_IF (a `continue`'s: the loop has no
    other way to learn that they depend on a tensor; a break's or return's flag is seen by
    the loop's extra test)."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, kinds):
            out.extend(replace_jump(s))
            return out  # the rest of the block is dead
        flag_set = _conditional_flag(s, kinds, replace_jump, flag)
        if flag_set is not None:
            # `if c: break` -> `break_ = c`: the flag is still False wherever this runs
            # (the loop test and the guards see to it), so one line says it all
            out.extend(flag_set)
            rest = stmts[i + 1:]
            if rest:
                out.extend(guard(flag, lower(rest, kinds, replace_jump, flag, into_loops,
                                             after_loop, mark), origin=rest[0], jump=mark))
            return out
        if isinstance(s, SCOPE_NODES) or not has_jump([s], kinds, into_loops):
            out.append(s)
            continue
        for field in blocks_of(s, into_loops):
            new = lower(getattr(s, field), kinds, replace_jump, flag, into_loops, after_loop, mark)
            setattr(s, field, new or (_pass() if field == "body" else []))
        for clause in clauses(s):
            clause.body = (lower(clause.body, kinds, replace_jump, flag, into_loops, after_loop,
                                 mark) or _pass())
        if mark:
            mark_jump(s)   # an `if` holding a jump (`if c: continue` with an `else:`, ...)
        out.append(s)
        if isinstance(s, LOOPS) and after_loop is not None:
            out.extend(after_loop(s))
        rest = stmts[i + 1:]
        if rest:
            out.extend(guard(flag, lower(rest, kinds, replace_jump, flag, into_loops, after_loop,
                                         mark), origin=rest[0], jump=mark))
        return out
    return out


def _is_boolean(expr):
    if isinstance(expr, gast.Compare) or (isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.Not)):
        return True
    return isinstance(expr, gast.BoolOp) and all(_is_boolean(v) for v in expr.values)


def _conditional_flag(stmt, kinds, replace_jump, flag):
    """`flag = test` for an `if test: <jump>` whose jump only sets the flag, else None."""
    if not (isinstance(stmt, gast.If) and not stmt.orelse and len(stmt.body) == 1
            and isinstance(stmt.body[0], kinds)):
        return None
    replacement = replace_jump(stmt.body[0])
    if not (len(replacement) == 1 and isinstance(replacement[0], gast.Assign)
            and isinstance(replacement[0].value, gast.Constant) and replacement[0].value.value is True):
        return None
    template = "flag = test" if _is_boolean(stmt.test) else "flag = ag__.bool(test)"
    return templates.replace(template, origin=stmt, flag=flag, test=stmt.test)


def _pass():
    return [gast.Pass()]
