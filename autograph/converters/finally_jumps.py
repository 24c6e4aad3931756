"""A `finally:` that jumps out (return, break, continue) drops the exception in flight.

In Python, a `return`, `break` or `continue` that leaves a `finally:` block ends the
propagation of the exception its `try` raised (and replaces a pending return). Once the
jumps become flags (return_statements, break_statements, continue_statements) nothing jumps
any more, so the exception would go on. Before the flags are made, such a `try` catches the
exception itself and raises it again at the end of its `finally:`, where the flags' guards
skip the raise exactly when the block jumped:

    try:                                finally_exc = None
        body                            try:
    except E:                               try:
        handler                                 body
    finally:                                except E:
        if c:                                       handler
            return 1                        except BaseException as finally_caught:
        cleanup()                               finally_exc = finally_caught
                                   ->       finally:
                                            if c:
                                                return 1
                                            cleanup()
                                            if finally_exc is not None:
                                                raise finally_exc

Only a `try` whose `finally:` can jump out of it is rewritten (Python 3.14 warns about
such code, PEP 765, but it runs); every other `try` stays as the user wrote it.
"""

import gast

from autograph.converters import jumps
from autograph.converters.base import SCOPE_NODES
from autograph.source import templates

_LOOP_JUMPS = (gast.Break, gast.Continue)


def jumps_out(block):
    """True when a statement of `block` (a finally block) may leave it by a jump: a return
    anywhere, or a break/continue that is not inside a loop of the block."""
    return (jumps.has_jump(block, gast.Return, into_loops=True)
            or jumps.has_jump(block, _LOOP_JUMPS, into_loops=False))


def before_outward_loop_jumps(block, make):
    """Put `make(jump)` (a list of statements) before each break/continue of `block` that
    leaves it (not those of loops inside it). Changes `block` in place."""
    i = 0
    while i < len(block):
        s = block[i]
        if isinstance(s, _LOOP_JUMPS):
            extra = make(s)
            block[i:i] = extra
            i += len(extra) + 1
            continue
        if not isinstance(s, SCOPE_NODES):
            for field in jumps.blocks_of(s, into_loops=False):
                before_outward_loop_jumps(getattr(s, field), make)
            for clause in jumps.clauses(s):
                before_outward_loop_jumps(clause.body, make)
        i += 1


def rewrite(stmts, ctx):
    """`stmts` with every `try` whose finally block jumps out rewritten (see the module
    docstring); nested functions are left to their own conversion."""
    out = []
    for s in stmts:
        if isinstance(s, SCOPE_NODES):
            out.append(s)
            continue
        for field in jumps.blocks_of(s, into_loops=True):
            setattr(s, field, rewrite(getattr(s, field), ctx))
        for clause in jumps.clauses(s):
            clause.body = rewrite(clause.body, ctx)
        if isinstance(s, gast.Try) and s.finalbody and jumps_out(s.finalbody):
            out.extend(_catch_in_flight(s, ctx))
        else:
            out.append(s)
    return out


def _catch_in_flight(node, ctx):
    exc = ctx.namer.new_symbol("finally_exc")
    caught = ctx.namer.new_symbol("finally_caught")
    final = node.finalbody
    node.finalbody = []
    body = [node] if (node.handlers or node.orelse) else node.body
    return templates.replace(
        """
        exc = None
        try:
            body
        except BaseException as caught:
            exc = caught
        finally:
            final
            if exc is not None:
                raise exc
        """, origin=node, exc=exc, caught=caught, body=templates.moved(body),
        final=templates.moved(final))
