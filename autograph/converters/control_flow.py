"""if / while / for statements -> ag__.if_stmt / while_stmt / for_stmt with functional state.

    if x > 0:                     def if_true(x):
        x = x * x                     x = x * x
    else:                  ->         return x
        x = 0                     def if_false(x):
                                      x = 0
                                      return x
                                  x = ag__.if_stmt(x > 0, if_true, if_false, (x,), ('x',))

The state of a statement is the variables it modifies that are used afterwards or read by
the statement itself before being written (e.g. by the next iteration of a loop): they are
the parameters and return values of the branch/body functions, and the statement assigns
them back. Variables only read are plain closure reads; variables only used inside stay
local to the functions. A state variable that has no value yet before the statement is
initialised with `x = ag__.Undefined('x')` right before it, so a variable set in one branch
only is reported by name if the condition turns out to be a tensor.

The facts come from the analyses (autograph.analysis): activity (modified symbols),
liveness (what is used afterwards) and reaching definitions (what may be defined before).
"""

import re
from collections import deque

import gast

from autograph.converters.base import Conv, Transformer, name
from autograph.source import anno, parser, templates
from autograph.source.templates import moved
from autograph.source.traversal import children, statements
from autograph.source.anno import Static
from autograph.source.qual_names import Literal


def _simple(symbols):
    return {str(s) for s in symbols if s.is_simple()}


def _scope_modified(node, key):
    scope = anno.getanno(node, key, None)
    return set() if scope is None else _simple(scope.modified)


def _fixed_composite(q):
    """True for `a.b`, `a['k']`, `a.b[0]`: attributes and constant subscripts only (the
    symbol denotes the same place on every iteration)."""
    if q.is_simple():
        return False
    while not q.is_simple():
        if q.has_subscript() and not isinstance(q.subscript, Literal):
            return False
        q = q.parent
    return True


def _scope_modified_attrs(node, key):
    """Composite symbols (`self.total`, `d['k']`) the block modifies, as strings."""
    scope = anno.getanno(node, key, None)
    if scope is None:
        return set()
    return {str(q) for q in scope.modified if _fixed_composite(q)}


def _order(names, stmts):
    """`names` in order of first appearance under `stmts` (then alphabetically).

    "First" is in breadth-first order (as `gast.walk`), so a name in a statement's test or
    target comes before one deep in its body; the walk stops once every name is found."""
    names = set(names)
    seen = []
    found = set()
    for s in stmts:
        todo = deque([s])
        pop, extend = todo.popleft, todo.extend
        while todo and len(found) < len(names):
            n = pop()
            if n.__class__ is gast.Name and n.id in names and n.id not in found:
                found.add(n.id)
                seen.append(n.id)
            extend(children(n))
    return seen + sorted(names - found)


def _expr(symbol, ctx=None):
    """The node for a state symbol: a Name ('x'), or an Attribute/Subscript ('self.total',
    "d['k']") whose outermost node gets `ctx` (Store for assignment targets)."""
    if symbol.isidentifier():
        return name(symbol, ctx)
    node = parser.parse_expression(symbol)
    node.ctx = ctx or gast.Load()
    return node


def _target_names(target):
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


class _ControlFlow(Transformer):

    def __init__(self, ctx):
        super().__init__(ctx)
        self.declared = [set()]  # global/nonlocal names of the functions being visited
        self.extra_live = set()  # names the extra tests of enclosing for loops read
        self.defined_before = set()
        self.try_depth = 0

    # -- facts ------------------------------------------------------------------------------

    def _state(self, node, modified, live_in=None):
        """Modified variables that are live after the statement or read by it before they
        are written (`live_in`: by default what is live into the statement; for an `if`,
        what is live into its branches, since reads in its test happen before it)."""
        live = _simple(anno.getanno(node, Static.LIVE_VARS_OUT, frozenset()))
        if live_in is None:
            live_in = anno.getanno(node, Static.LIVE_VARS_IN, frozenset())
        live |= _simple(live_in)
        live |= self.extra_live  # read by an enclosing for loop's extra test
        # a global/nonlocal variable is always state: the statement assigns it back in the
        # function that declares it, so the write reaches the global or the outer cell
        state = (modified & live) | (modified & self.declared[-1])
        return state

    def _attr_state(self, node, attrs, modified):
        """Attributes modified by the statement and read by it before they are written
        (`self.total += i` in a loop): state too, so a tensor loop carries them. Attributes
        only written stay plain Python side effects (reading them first could fail)."""
        live_in = {str(q) for q in anno.getanno(node, Static.LIVE_VARS_IN, frozenset())}
        return sorted(a for a in attrs
                      if a in live_in and re.match(r"\w+", a).group() not in modified)

    def _maybe_in(self, node):
        return _simple(anno.getanno(node, Static.MAYBE_DEFINED_VARS_IN, frozenset()))

    def visit_block(self, stmts, entry=None):
        """Visit a block, tracking what may be defined before each statement when control
        arrives from before it (a loop's own IN facts also count its back edge)."""
        out = []
        defined = set(entry or ())
        for s in stmts:
            self.defined_before = defined
            defined = defined | self._maybe_in(s) | _scope_modified(s, Static.SCOPE)
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r] if r is not None else [])
        return out

    def _undefined_inits(self, node, state, loop=False):
        maybe = self.defined_before if loop else self._maybe_in(node)
        maybe = maybe | self.declared[-1]  # globals and nonlocals live outside: never reset
        return [templates.replace(f"{v} = ag__.Undefined('{v}')", origin=node)[0]
                for v in state if v not in maybe]

    # -- scopes -----------------------------------------------------------------------------

    def visit_FunctionDef(self, node):
        declared = set()
        # where `global` and `nonlocal` can stand: this function's statements, not those of
        # the functions and classes nested in it
        for n in statements(node.body, stop=(gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            if isinstance(n, (gast.Global, gast.Nonlocal)):
                declared.update(n.names)
        self.declared.append(declared)
        saved_try, self.try_depth = self.try_depth, 0
        args = node.args
        params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs +
                  [args.vararg, args.kwarg] if a is not None}
        node.body = self.visit_block(node.body, params)
        self.declared.pop()
        self.try_depth = saved_try
        return node

    # -- building blocks --------------------------------------------------------------------

    def _params(self, state):
        """Parameter names for state variables: attributes get a plain name (self_total)."""
        return [n if n.isidentifier() else
                self.ctx.namer.new_symbol(re.sub(r"\W+", "_", n).strip("_") or "state")
                for n in state]

    def _function(self, fn_name, params, body, returns, origin, state=()):
        """def fn_name(params): body; return returns

        A composite state symbol (`self.total`, `d['k']`) comes in under a plain parameter
        name and is set from it first (`self.total = self_total`): the object is shared, so
        each branch or iteration must start from the value the statement started with."""
        body = self._setters(params[len(params) - len(state):], state, origin) + list(body)
        if returns is not None:
            body = body + self._return(returns, origin)
        if not body:
            body = [gast.Pass()]
        # the body is moved in, not copied through the template (copying nested bodies at
        # every level would make conversion quadratic in the nesting depth)
        fn_def = templates.replace("def fn_name(params):\n    pass", origin=origin,
                                   fn_name=fn_name, params=list(params))
        fn_def[0].body = body
        return fn_def

    def _setters(self, params, state, origin):
        """`self.total = self_total` for attribute state read by a loop test."""
        out = []
        for param, state_name in zip(params, state):
            if param != state_name:
                out += templates.replace(f"{state_name} = {param}", origin=origin)
        return out

    def _return(self, names, origin):
        if not names:
            return []
        if len(names) == 1:
            return templates.replace("return x", origin=origin, x=names[0])
        return templates.replace("return x", origin=origin,
                                 x=moved(gast.Tuple(elts=[_expr(n) for n in names], ctx=gast.Load())))

    def _assign_call(self, state, call_template, origin, **repl):
        """`a, b = <call>` (or just `<call>` with no state)."""
        call = templates.replace_as_expression(call_template, origin=origin, **repl)
        self._mark_try(call)
        # the call has the origin already (the template gave it): only the new nodes need it
        if not state:
            stmt = gast.Expr(value=call)
            anno.copy_origin(origin, [stmt], skip=call)
            return [stmt]
        if len(state) == 1:
            target = _expr(state[0], gast.Store())
        else:
            target = gast.Tuple(elts=[_expr(n, gast.Store()) for n in state], ctx=gast.Store())
        stmt = gast.Assign(targets=[target], value=call, type_comment=None)
        anno.copy_origin(origin, [stmt], skip=call)
        return [stmt]

    def _mark_try(self, call):
        """Inside a try block, tell the operator: it refuses to stage there."""
        if self.try_depth:
            call.keywords.append(gast.keyword(arg="in_try", value=gast.Constant(value=True, kind=None)))

    def visit_Try(self, node):
        self.try_depth += 1
        node.body = self.visit_block(node.body, self.defined_before)
        self.try_depth -= 1
        for h in node.handlers:
            h.body = self.visit_block(h.body, self.defined_before)
        node.orelse = self.visit_block(node.orelse, self.defined_before)
        node.finalbody = self.visit_block(node.finalbody, self.defined_before)
        return node

    def _state_args(self, state):
        return (gast.Tuple(elts=[_expr(n) for n in state], ctx=gast.Load()),
                gast.Tuple(elts=[gast.Constant(value=n, kind=None) for n in state], ctx=gast.Load()))

    # -- if ---------------------------------------------------------------------------------

    def visit_If(self, node):
        modified = _scope_modified(node, Static.BODY_SCOPE) | _scope_modified(node, Static.ORELSE_SCOPE)
        namer = self.ctx.namer  # outer statements get the first names
        t_name, f_name = namer.new_symbol("if_true"), namer.new_symbol("if_false")
        entry = self._maybe_in(node)
        branch_live = set()
        for block in (node.body, node.orelse):
            if block:
                branch_live |= anno.getanno(block[0], Static.LIVE_VARS_IN, frozenset())
        node.body = self.visit_block(node.body, entry)
        node.orelse = self.visit_block(node.orelse, entry)
        returns_value = anno.getanno(node, Conv.RETURN_IF, False)
        state = _order(self._state(node, modified, branch_live), [node])
        out = self._undefined_inits(node, state)
        attrs = _scope_modified_attrs(node, Static.BODY_SCOPE) | _scope_modified_attrs(node, Static.ORELSE_SCOPE)
        state += self._attr_state(node, attrs, modified)
        params = self._params(state)
        outputs = None if returns_value else state
        out += self._function(t_name, params, node.body, outputs, node, state)
        out += self._function(f_name, params, node.orelse, outputs, node, state)
        if returns_value:
            call = "ag__.if_stmt(test, t, f, state)" if state else "ag__.if_stmt(test, t, f)"
            values, _ = self._state_args(state)
            ret = templates.replace(f"return {call}", origin=node, test=moved(node.test), t=t_name,
                                    f=f_name, state=moved(values))
            self._mark_try(ret[0].value)
            out += ret
            return out
        if state:
            values, names = self._state_args(state)
            out += self._assign_call(state, "ag__.if_stmt(test, t, f, values, names)", node,
                                     test=moved(node.test), t=t_name, f=f_name, values=moved(values), names=moved(names))
        else:
            out += self._assign_call(state, "ag__.if_stmt(test, t, f)", node,
                                     test=moved(node.test), t=t_name, f=f_name)
        return out

    # -- while ------------------------------------------------------------------------------

    def visit_While(self, node):
        modified = _scope_modified(node, Static.BODY_SCOPE)
        namer = self.ctx.namer
        test_name, body_name = namer.new_symbol("loop_test"), namer.new_symbol("loop_body")
        before = self.defined_before
        entry = self._maybe_in(node)
        node.body = self.visit_block(node.body, entry)
        orelse = self.visit_block(node.orelse, entry | modified)
        state = _order(self._state(node, modified), [node])
        self.defined_before = before
        out = self._undefined_inits(node, state, loop=True)
        state += self._attr_state(node, _scope_modified_attrs(node, Static.BODY_SCOPE), modified)
        params = self._params(state)
        test_ret = templates.replace("return test", origin=node, test=moved(node.test))
        out += self._function(test_name, params, test_ret, None, node, state)
        out += self._function(body_name, params, node.body, state, node, state)
        if state:
            values, names = self._state_args(state)
            out += self._assign_call(state, "ag__.while_stmt(test, body, values, names)", node,
                                     test=test_name, body=body_name, values=moved(values), names=moved(names))
        else:
            out += self._assign_call(state, "ag__.while_stmt(test, body)", node,
                                     test=test_name, body=body_name)
        return out + orelse

    # -- for --------------------------------------------------------------------------------

    def visit_For(self, node):
        targets = _target_names(node.target)
        modified = _scope_modified(node, Static.BODY_SCOPE) | targets
        namer = self.ctx.namer
        body_name = namer.new_symbol("loop_body")
        extra = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
        saved = self.extra_live
        if extra is not None:  # the analyses cannot see this test: its reads stay live
            self.extra_live = saved | _target_names(extra)
        before = self.defined_before
        entry = self._maybe_in(node) | targets
        node.body = self.visit_block(node.body, entry)
        self.extra_live = saved
        orelse = self.visit_block(node.orelse, entry | modified)
        self.defined_before = before
        state = self._state(node, modified)
        if extra is not None:  # flags the extra test reads are loop state too
            state |= modified & _target_names(extra)
        state = _order(state, [node])
        body = node.body
        if isinstance(node.target, gast.Name) and node.target.id not in state:
            item = node.target.id
        else:
            item = namer.new_symbol("itr")
            body = templates.replace("target = itr", origin=node, target=moved(node.target), itr=item) + body
        out = self._undefined_inits(node, state, loop=True)
        state += self._attr_state(node, _scope_modified_attrs(node, Static.BODY_SCOPE), modified)
        params = self._params(state)
        out += self._function(body_name, [item] + params, body, state, node, state)
        extra_kw = ""
        repl = {}
        if extra is not None:
            test_name = namer.new_symbol("loop_test")
            out += self._function(test_name, params,
                                  templates.replace("return test", origin=node, test=moved(extra)),
                                  None, node, state)
            extra_kw = ", extra_test=loop_test"
            repl["loop_test"] = test_name
        if state:
            values, names = self._state_args(state)
            out += self._assign_call(state, f"ag__.for_stmt(iter_, body, values, names{extra_kw})",
                                     node, iter_=moved(node.iter), body=body_name, values=moved(values),
                                     names=moved(names), **repl)
        else:
            out += self._assign_call(state, f"ag__.for_stmt(iter_, body{extra_kw})", node,
                                     iter_=moved(node.iter), body=body_name, **repl)
        return out + orelse


def transform(node, ctx):
    """Convert the if/while/for statements of the function (nested functions included).

    Requires the analyses' annotations (activity scopes, liveness, reaching definitions):
    `run_analyses` computes them for the current tree."""
    if isinstance(node, gast.Lambda):
        return node
    run_analyses(node, ctx)
    # the variables pass reads the same facts: run it here, before the tree changes
    from autograph.converters import variables
    node = variables.transform(node, ctx, analysed=True)
    return _ControlFlow(ctx).visit(node)


def run_analyses(node, ctx):
    from autograph.analysis import activity, cfg, liveness, reaching_definitions
    activity.resolve(node)  # also sets the QNs (anno.Basic.QN) of the symbols it meets
    cfgs = cfg.build_all(node, anno.getanno(node, Static.FUNCTIONS))
    liveness.resolve(node, cfgs)
    reaching_definitions.resolve(node, cfgs)
