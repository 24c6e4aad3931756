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

Branch and loop functions are new Python scopes: a variable they assign that is not state
is a local of that function, unbound when it starts, whatever it held outside. So whether a
state variable has a value where the statement reads it is tracked per generated scope
(`bound`: surely bound there, `maybe`: bound on some path). A state variable surely unbound
gets the `Undefined` initialiser; one bound on some paths only is read with
`ag__.ldu(lambda: x, 'x')`, which gives `Undefined('x')` where Python would have no value.

Attributes and items the statement writes (`self.total = ...`, `d['k'] = ...`) are passed
as `places=(ag__.attr(self, 'total', 'self.total'), ...)`: Python values never need them,
and a staged statement carries them like state (autograph.operators.variables).

The facts come from the analyses (autograph.analysis): activity (modified symbols),
liveness (what is used afterwards) and reaching definitions (what is defined on every path).
"""

import re
from collections import deque

import gast

from autograph.converters.base import Conv, Transformer, name, run_analyses
from autograph.source import anno, templates
from autograph.source.templates import moved
from autograph.source.traversal import children, statements, walk
from autograph.source.anno import Static
from autograph.source.qual_names import Literal
from autograph.converters.variables import lazy_walrus_targets


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


def _places(node, keys):
    """The attributes and items (`self.total`, `d['k']`) the statement's blocks write, whose
    object the statement does not rebind (then the object itself is the state)."""
    written = set()
    for key in keys:
        scope = anno.getanno(node, key, None)
        if scope is not None:
            written |= set(scope.modified)
    return sorted(q for q in written if _fixed_composite(q) and not (q.owner_set & written))


def _place_expr(q):
    """`ag__.attr(self, 'total', 'self.total')` / `ag__.item(d, 'k', "d['k']")`."""
    if q.has_attr():
        key, fn = gast.Constant(value=q.attr, kind=None), "ag__.attr"
    else:
        key, fn = gast.Constant(value=q.subscript.value, kind=None), "ag__.item"
    return templates.replace_as_expression(f"{fn}(obj, key, label)", obj=q.parent.ast(), key=key,
                                           label=gast.Constant(value=str(q), kind=None))


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


_RUN_AT_ONCE = {"assert_stmt", "and_", "or_", "if_exp", "ldu"}   # operators that call their lambdas


def _operator_call(node):
    return (node.__class__ is gast.Call and node.func.__class__ is gast.Attribute and
            node.func.attr in _RUN_AT_ONCE and node.func.value.__class__ is gast.Name
            and node.func.value.id == "ag__")


def _closure_reads(root):
    """{id(function node): names read by the functions and lambdas nested in it}, for `root`
    and every function under it, in one walk. Such a closure may run inside a later
    statement's branches or loop, or after it (late binding): it must see the variable
    itself, never a copy that a branch or loop function holds."""
    index = {}
    kinds = (gast.Lambda, gast.FunctionDef, gast.AsyncFunctionDef)

    def walk(node):
        loads, nested = set(), set()
        if node.__class__ is gast.Name and node.ctx.__class__ is gast.Load:
            loads.add(node.id)
        # a lambda an operator takes (`ag__.assert_stmt(c, lambda: msg)`) runs at once
        inline = _operator_call(node)
        for child in children(node):
            child_loads, child_nested = walk(child)
            loads |= child_loads
            late = isinstance(child, kinds) and not (inline and child.__class__ is gast.Lambda)
            nested |= child_loads if late else child_nested
        if isinstance(node, kinds):
            index[id(node)] = nested
        return loads, nested
    walk(root)
    return index


def _free_reads_raise_unbound(body, params):
    """In a branch or loop function, `ag__.ld(x)` of a variable the function neither takes
    nor assigns reads a free variable: unbound, it fails with NameError before `ld` runs.
    Such reads become `ag__.ld(ag__.ldu(lambda: x, 'x'))`, Python's UnboundLocalError.
    So do reads of a variable the function declares `nonlocal` without taking it (one the
    generated functions share with a closure): assigned here or not, it is a cell of the
    user's function, and an empty one fails with NameError too."""
    reads, assigned, shared = [], set(params), set()
    todo = list(body)
    while todo:
        n = todo.pop()
        cls = n.__class__
        if cls in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
            assigned.add(n.name)
            continue   # (their own reads were handled when they were made)
        if cls is gast.Lambda:
            continue
        if cls is gast.Nonlocal:
            shared.update(n.names)
        elif cls is gast.Name and n.ctx.__class__ is not gast.Load:
            assigned.add(n.id)
        elif (cls is gast.Call and n.func.__class__ is gast.Attribute and n.func.attr == "ld"
              and n.func.value.__class__ is gast.Name and n.func.value.id == "ag__"
              and len(n.args) == 1 and n.args[0].__class__ is gast.Name):
            reads.append(n)
        todo.extend(children(n))
    assigned -= shared - set(params)   # (a user's own `nonlocal x`: Python's NameError)
    for call in reads:
        var = call.args[0].id
        if var not in assigned:
            call.args[0] = templates.replace_as_expression(f"ag__.ldu(lambda: {var}, '{var}')")


def _target_names(target):
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


class _ControlFlow(Transformer):

    def __init__(self, ctx):
        super().__init__(ctx)
        self.declared = [set()]  # global/nonlocal names of the functions being visited
        self.extra_live = set()  # names the extra tests of enclosing for loops read
        self.bound = set()       # names surely bound here, in the generated scope
        self.maybe = set()       # names bound on some path to here
        self.try_depth = 0
        self.closure_reads = {}  # see _closure_reads
        self.closures = [set()]  # names closures read, per function being visited
        self.sharing = set()     # shared variables of the statements being visited
        self.shared = set()      # the shared variables of the statement just converted
        self.test_writes = (set(), set())   # the `:=` names of the last `if` test: (sure, lazy)
        self.fresh = []          # shared variables the statement being built initialises

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

    def _shared(self, node, modified):
        """Variables the statement assigns that closures made inside it read: its functions
        declare them `nonlocal` rather than take them as state."""
        return (self.closures[-1] & modified) - (self.declared[-1] - self.sharing)

    def _share(self, shared, node):
        """Before the statement: a binding for each shared variable (so `nonlocal` finds
        it) and a setter through which a staged statement assigns it.
        Returns those statements and the places (`ag__.variable(...)`) to pass."""
        out, places, self.fresh = [], [], []
        for v in sorted(shared):
            if v not in self.bound and v not in self.maybe and v not in self.sharing:
                out += templates.replace(f"{v} = ag__.Undefined('{v}')", origin=node)
                self.fresh.append(v)
            setter = self.ctx.namer.new_symbol(f"set_{v}")
            out += templates.replace(f"def {setter}(value):\n    nonlocal {v}\n    {v} = value",
                                     origin=node)
            places.append(templates.replace_as_expression(
                f"ag__.variable(lambda: {v}, {setter}, '{v}')"))
        return out, places

    def _visit_bodies(self, shared, blocks):
        """Visit the blocks that become a statement's functions, each a (stmts, what it
        assigns, the function's parameters), with the statement's shared variables declared;
        the current scope's facts are as before afterwards."""
        bound, maybe, declared, sharing = self.bound, self.maybe, self.declared[-1], self.sharing
        self.declared[-1], self.sharing = declared | shared, sharing | shared
        out = []
        for stmts, modified, params in blocks:
            out.append(self.visit_block(stmts, *self._enter(modified, params)))
            self.bound, self.maybe = bound, maybe
        self.declared[-1], self.sharing = declared, sharing
        return out

    def _unbind(self, fresh, node):
        """A shared variable the statement was to give its first value and did not: unbound
        again, so a closure reading it raises NameError as in Python."""
        return [s for v in fresh for s in templates.replace(
            f"if ag__.is_undefined({v}):\n    del {v}", origin=node)]

    def visit_block(self, stmts, bound=None, maybe=None):
        """Visit a block of the current generated scope, tracking which names are bound
        before each statement (`bound`/`maybe` at its start: by default the current ones).
        Leaves self.bound/self.maybe as they are after the block."""
        out = []
        bound = set(self.bound if bound is None else bound)
        maybe = set(self.maybe if maybe is None else maybe)
        for s in stmts:
            self.bound, self.maybe = bound, maybe
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r] if r is not None else [])
            bound, maybe = self._after(s, self.bound, self.maybe)
        self.bound, self.maybe = bound, maybe
        return out

    def _after(self, s, bound, maybe):
        """What is bound after statement `s` of the current scope."""
        if isinstance(s, (gast.If, gast.While, gast.For)):  # converted: assigns its state back
            sure, lazy = self.test_writes   # and an `if` test's `:=` ran in this scope
            return (bound | self.assigned | sure,
                    maybe | self.assigned | self.shared | sure | lazy)
        written = _scope_modified(s, Static.SCOPE)
        if isinstance(s, gast.Delete):
            return bound - written, maybe
        if isinstance(s, (gast.Try, gast.With, gast.AsyncWith)):
            # their blocks ran in this scope (self.bound is where the last one left it)
            return (bound if isinstance(s, gast.Try) else self.bound), maybe | written
        return bound | written, maybe | written

    def _enter(self, modified, params):
        """(bound, maybe) at the start of a generated function whose body assigns
        `modified` and that takes `params`: what it assigns is its own local (unbound at
        entry) unless it is a parameter; what it only reads comes from outside."""
        local = modified - self.declared[-1]
        params = set(params)
        return (self.bound - local) | params, (self.maybe - local) | params

    def _reads(self, state):
        """How the statement reads each state variable: plainly where it is surely bound,
        through `ag__.ldu` where it is bound on some paths only."""
        return {v for v in state if v not in self.bound and v in self.maybe
                and v not in self.declared[-1]}

    def _undefined_inits(self, node, state):
        # globals and nonlocals live outside: never reset
        return [templates.replace(f"{v} = ag__.Undefined('{v}')", origin=node)[0]
                for v in state if v not in self.maybe and v not in self.bound
                and v not in self.declared[-1]]

    # -- scopes -----------------------------------------------------------------------------

    def visit_FunctionDef(self, node):
        declared = set()
        # where `global` and `nonlocal` can stand: this function's statements, not those of
        # the functions and classes nested in it
        for n in statements(node.body, stop=(gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            if isinstance(n, (gast.Global, gast.Nonlocal)):
                declared.update(n.names)
        self.declared.append(declared)
        self.closures.append(self.closure_reads.get(id(node), set()))
        saved = (self.try_depth, self.bound, self.maybe, getattr(self, "assigned", None),
                 self.sharing)
        self.try_depth, self.sharing = 0, set()
        args = node.args
        params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs +
                  [args.vararg, args.kwarg] if a is not None} | declared
        node.body = self.visit_block(node.body, params, params)
        _free_reads_raise_unbound(node.body, params)   # names it binds only in its branches
        self.declared.pop()
        self.closures.pop()
        self.try_depth, self.bound, self.maybe, self.assigned, self.sharing = saved
        return node

    # -- building blocks --------------------------------------------------------------------

    def _function(self, fn_name, params, body, returns, origin, nonlocals=()):
        """def fn_name(params): nonlocal nonlocals; body; return returns"""
        body = list(body)
        if nonlocals:
            body = [gast.Nonlocal(names=sorted(nonlocals))] + body
        if returns is not None:
            body = body + self._return(returns, origin)
        if not body:
            body = [gast.Pass()]
        _free_reads_raise_unbound(body, set(params))
        # the body is moved in, not copied through the template (copying nested bodies at
        # every level would make conversion quadratic in the nesting depth)
        fn_def = templates.replace("def fn_name(params):\n    pass", origin=origin,
                                   fn_name=fn_name, params=list(params))
        fn_def[0].body = body
        return fn_def

    def _return(self, names, origin):
        if not names:
            return []
        if len(names) == 1:
            return templates.replace("return x", origin=origin, x=names[0])
        return templates.replace("return x", origin=origin,
                                 x=moved(gast.Tuple(elts=[name(n) for n in names], ctx=gast.Load())))

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
            target = name(state[0], gast.Store())
        else:
            target = gast.Tuple(elts=[name(n, gast.Store()) for n in state], ctx=gast.Store())
        stmt = gast.Assign(targets=[target], value=call, type_comment=None)
        anno.copy_origin(origin, [stmt], skip=call)
        return [stmt]

    def _mark_try(self, call):
        """Inside a try block, tell the operator: it refuses to stage there."""
        if self.try_depth:
            call.keywords.append(gast.keyword(arg="in_try", value=gast.Constant(value=True, kind=None)))

    def _add_places(self, call, places, shared=()):
        if places or shared:
            value = gast.Tuple(elts=[_place_expr(q) for q in places] + list(shared),
                               ctx=gast.Load())
            call.keywords.append(gast.keyword(arg="places", value=value))

    def visit_Try(self, node):
        # only `except` could mean something the graph cannot do (catch an error raised while
        # it runs); try/finally runs its finally block after the statement either way
        guarded = 1 if node.handlers else 0
        self.try_depth += guarded
        entry_bound, entry_maybe = set(self.bound), set(self.maybe)
        node.body = self.visit_block(node.body)
        self.try_depth -= guarded
        # a handler or finally may start after any statement of the body
        maybe = entry_maybe | self.maybe
        for h in node.handlers:
            h.body = self.visit_block(h.body, entry_bound, maybe)
        node.orelse = self.visit_block(node.orelse, entry_bound, maybe)
        node.finalbody = self.visit_block(node.finalbody, entry_bound, maybe)
        self.bound, self.maybe = entry_bound, maybe | self.maybe
        return node

    def visit_With(self, node):
        # the body runs in this scope: what it binds is bound for the statements after
        # (the body's own later statements included), so visit it as a block
        node.body = self.visit_block(node.body)
        return node

    visit_AsyncWith = visit_With

    def _state_args(self, state):
        ldu = self._reads(state)
        values = [templates.replace_as_expression(f"ag__.ldu(lambda: {n}, '{n}')") if n in ldu
                  else name(n) for n in state]
        return (gast.Tuple(elts=values, ctx=gast.Load()),
                gast.Tuple(elts=[gast.Constant(value=n, kind=None) for n in state], ctx=gast.Load()))

    def _call(self, out, state, places, template, node, shared=(), shared_places=(), **repl):
        """Emit `state = <operator call>` with the state's values, names and places
        (`template` has `{state}` where the values and names go)."""
        if state:
            values, names = self._state_args(state)
            repl.update(values=moved(values), names=moved(names))
        template = template.format(state=", values, names" if state else "")
        stmts = self._assign_call(state, template, node, **repl)
        self._add_places(stmts[0].value, places, shared_places)
        self.assigned, self.shared = set(state), set(shared)
        self.test_writes = (set(), set())
        return out + stmts

    # -- if ---------------------------------------------------------------------------------

    def visit_If(self, node):
        anno.setanno(node.test, anno.Basic.TRUTH_TEST, True)
        writes = _simple(anno.getanno(node, Static.COND_SCOPE).modified) \
            if anno.hasanno(node, Static.COND_SCOPE) else set()
        lazy = lazy_walrus_targets(node.test) & writes
        test_writes = (writes - lazy, lazy)
        body_mod = _scope_modified(node, Static.BODY_SCOPE)
        else_mod = _scope_modified(node, Static.ORELSE_SCOPE)
        namer = self.ctx.namer  # outer statements get the first names
        t_name, f_name = namer.new_symbol("if_true"), namer.new_symbol("if_false")
        branch_live = set()
        for block in (node.body, node.orelse):
            if block:
                branch_live |= anno.getanno(block[0], Static.LIVE_VARS_IN, frozenset())
        shared = self._shared(node, body_mod | else_mod)
        state = _order(self._state(node, body_mod | else_mod, branch_live) - shared, [node])
        places = _places(node, (Static.BODY_SCOPE, Static.ORELSE_SCOPE))
        out, shared_places = self._share(shared, node)
        fresh = self.fresh
        node.body, node.orelse = self._visit_bodies(
            shared, [(node.body, body_mod, state), (node.orelse, else_mod, state)])
        returns_value = anno.getanno(node, Conv.RETURN_IF, False)
        out += self._undefined_inits(node, state)
        outputs = None if returns_value else state
        out += self._function(t_name, state, node.body, outputs, node, shared)
        out += self._function(f_name, state, node.orelse, outputs, node, shared)
        if returns_value:
            call = "ag__.if_stmt(test, t, f, state)" if state else "ag__.if_stmt(test, t, f)"
            values, _ = self._state_args(state)
            ret = templates.replace(f"return {call}", origin=node, test=moved(node.test), t=t_name,
                                    f=f_name, state=moved(values))
            self._mark_try(ret[0].value)
            self._add_places(ret[0].value, places, shared_places)
            out += ret
            self.assigned, self.shared = set(), set(shared)
            self.test_writes = test_writes
            return out
        out = self._call(out, state, places, "ag__.if_stmt(test, t, f{state})", node, shared,
                         shared_places, test=moved(node.test), t=t_name, f=f_name)
        if anno.getanno(node, Conv.JUMP_IF, False):   # a loop's own break/continue/return
            out[-1].value.keywords.append(
                gast.keyword(arg="jump", value=gast.Constant(value=True, kind=None)))
        self.test_writes = test_writes
        return out + self._unbind(fresh, node)

    # -- while ------------------------------------------------------------------------------

    def visit_While(self, node):
        # a walrus in the test (`while (n := n - 1) > 0:`) assigns state too: the test
        # function then returns its condition and the state it leaves
        test_writes = {n.target.id for n in walk(node.test, leaves=False)
                       if isinstance(n, gast.NamedExpr) and isinstance(n.target, gast.Name)}
        modified = _scope_modified(node, Static.BODY_SCOPE) | test_writes
        anno.setanno(node.test, anno.Basic.TRUTH_TEST, True)
        namer = self.ctx.namer
        test_name, body_name = namer.new_symbol("loop_test"), namer.new_symbol("loop_body")
        shared = self._shared(node, modified - test_writes)
        state = _order(self._state(node, modified) - shared, [node])
        places = _places(node, (Static.BODY_SCOPE,))
        out, shared_places = self._share(shared, node)
        fresh = self.fresh
        node.body, = self._visit_bodies(shared, [(node.body, modified, state)])
        out += self._undefined_inits(node, state)
        if test_writes:  # the state after the test, as the body returns it
            after = name(state[0]) if len(state) == 1 else gast.Tuple(
                elts=[name(n) for n in state], ctx=gast.Load())
            test_ret = templates.replace("return (test, after)", origin=node, test=moved(node.test),
                                         after=moved(after))
        else:
            test_ret = templates.replace("return test", origin=node, test=moved(node.test))
        out += self._function(test_name, state, test_ret, None, node)
        out += self._function(body_name, state, node.body, state, node, shared)
        out = self._call(out, state, places, "ag__.while_stmt(test, body{state})", node, shared, shared_places,
                         test=test_name, body=body_name)
        if test_writes:
            out[-1].value.keywords.append(
                gast.keyword(arg="test_writes", value=gast.Constant(value=True, kind=None)))
        return out + self._unbind(fresh, node) + self._orelse(node, state)

    def _orelse(self, node, state):
        """A loop's `else` block runs after it, in the same scope."""
        if not node.orelse:
            return []
        self.bound, self.maybe = self.bound | set(state), self.maybe | set(state)
        orelse = self.visit_block(node.orelse)
        self.assigned = set(self.bound)  # what is bound after the else block
        return orelse

    # -- for --------------------------------------------------------------------------------

    def visit_For(self, node):
        targets = _target_names(node.target)
        modified = _scope_modified(node, Static.BODY_SCOPE) | targets
        namer = self.ctx.namer
        body_name = namer.new_symbol("loop_body")
        extra = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
        state = self._state(node, modified)
        saved = self.extra_live
        if extra is not None:  # flags the extra test reads are loop state too; the analyses
            # cannot see this test, so inside the body its reads stay live
            state |= modified & _target_names(extra)
            self.extra_live = saved | _target_names(extra)
        shared = self._shared(node, modified)
        state = _order(state - shared, [node])
        places = _places(node, (Static.BODY_SCOPE,))
        out, shared_places = self._share(shared, node)
        fresh = self.fresh
        node.body, = self._visit_bodies(
            shared, [(node.body, modified, set(state) | (targets - shared))])
        self.extra_live = saved
        body = node.body
        if isinstance(node.target, gast.Name) and node.target.id not in set(state) | shared:
            item = node.target.id
        else:
            item = namer.new_symbol("itr")
            body = templates.replace("target = itr", origin=node, target=moved(node.target), itr=item) + body
        out += self._undefined_inits(node, state)
        out += self._function(body_name, [item] + state, body, state, node, shared)
        repl = {}
        template = "ag__.for_stmt(iter_, body{state})"
        if extra is not None:
            test_name = namer.new_symbol("loop_test")
            out += self._function(test_name, state,
                                  templates.replace("return test", origin=node, test=moved(extra)),
                                  None, node)
            template = "ag__.for_stmt(iter_, body{state}, extra_test=loop_test)"
            repl["loop_test"] = test_name
        out = self._call(out, state, places, template, node, shared, shared_places, iter_=moved(node.iter),
                         body=body_name, **repl)
        return out + self._unbind(fresh, node) + self._orelse(node, state)


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
    converter = _ControlFlow(ctx)
    converter.closure_reads = _closure_reads(node)
    return converter.visit(node)
