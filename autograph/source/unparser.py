"""Source text of gast trees, written straight from the gast nodes.

`unparse(node)` returns exactly what `ast.unparse(bridge.to_ast(node))` returns, without
building the ast copy and without ast._Unparser's per-node machinery (a visitor method
lookup, context managers for every bracket, a dict of precedences): unparsing is most of
loading a converted function, which is part of every first call.

Each expression node is written by a small function that takes the precedence of the
place it sits in (the same table and rules as ast._Unparser: a node is bracketed when
that place binds tighter than the node) and returns its text. Statements are appended to
a list the way ast._Unparser writes them (a newline before every line but the first, an
extra blank line before a nested def or class). Anything this module does not write
itself (f-strings, try, match, type-ignore comments of a Module) is handed to
ast._Unparser on a `bridge.to_ast` copy of just that subtree, in the same state (indent,
precedence, output so far) that ast.unparse would have reached, so the text is the same.
tests/source/test_unparser.py checks that over the standard library and the converted
sample functions.
"""

import ast
import sys

import gast

from autograph.source import bridge

_P = ast._Precedence
NAMED_EXPR, TUPLE, YIELD, TEST = int(_P.NAMED_EXPR), int(_P.TUPLE), int(_P.YIELD), int(_P.TEST)
OR, AND, NOT, CMP, EXPR = int(_P.OR), int(_P.AND), int(_P.NOT), int(_P.CMP), int(_P.EXPR)
FACTOR, POWER, AWAIT, ATOM = int(_P.FACTOR), int(_P.POWER), int(_P.AWAIT), int(_P.ATOM)
_INFSTR = "1e" + repr(sys.float_info.max_10_exp + 1)  # as ast._INFSTR


def _next(p):
    return p + 1 if p < ATOM else p


# ---------------------------------------------------------------------------------------
# expressions: node, precedence of its place -> text

def _x(node, p):
    f = _EXPR.get(node.__class__)
    if f is None:
        return _fallback_expr(node, p)
    return f(node, p)


def _fallback_expr(node, p):
    tree = bridge.to_ast(node)
    u = ast._Unparser()
    u._precedences[tree] = _P(p)
    return u.visit(tree)


def _items(elts):
    """ast._Unparser.items_view: a trailing comma for one item."""
    if len(elts) == 1:
        return _x(elts[0], TEST) + ","
    return ", ".join([_x(e, TEST) for e in elts])


def _name(node, p):
    return node.id


def _constant_value(v):
    if isinstance(v, (float, complex)):
        return repr(v).replace("inf", _INFSTR).replace("nan", f"({_INFSTR}-{_INFSTR})")
    return repr(v)


def _constant(node, p):
    v = node.value
    if isinstance(v, tuple):
        if len(v) == 1:
            return "(" + _constant_value(v[0]) + ",)"
        return "(" + ", ".join([_constant_value(e) for e in v]) + ")"
    if v is ...:
        return "..."
    text = _constant_value(v)
    return "u" + text if node.kind == "u" else text


def _attribute(node, p):
    value = node.value
    text = _x(value, ATOM)
    if value.__class__ is gast.Constant and isinstance(value.value, int):
        text += " "  # `3 .real`, not `3.real`
    return text + "." + node.attr


def _keyword(node):
    if node.arg is None:
        return "**" + _x(node.value, TEST)
    return node.arg + "=" + _x(node.value, TEST)


def _call(node, p):
    parts = [_x(a, TEST) for a in node.args]
    for k in node.keywords:
        parts.append(_keyword(k))
    return _x(node.func, ATOM) + "(" + ", ".join(parts) + ")"


def _subscript(node, p):
    s = node.slice
    if s.__class__ is gast.Tuple and s.elts:
        inner = _items(s.elts)
    else:
        inner = _x(s, TEST)
    return _x(node.value, ATOM) + "[" + inner + "]"


def _starred(node, p):
    return "*" + _x(node.value, EXPR)


def _slice(node, p):
    text = _x(node.lower, TEST) if node.lower else ""
    text += ":"
    if node.upper:
        text += _x(node.upper, TEST)
    if node.step:
        text += ":" + _x(node.step, TEST)
    return text


def _tuple(node, p):
    elts = node.elts
    text = _items(elts)
    if not elts or p > TUPLE:
        return "(" + text + ")"
    return text


def _list(node, p):
    return "[" + ", ".join([_x(e, TEST) for e in node.elts]) + "]"


def _set(node, p):
    if node.elts:
        return "{" + ", ".join([_x(e, TEST) for e in node.elts]) + "}"
    return "{*()}"


def _dict(node, p):
    parts = []
    for k, v in zip(node.keys, node.values):
        if k is None:
            parts.append("**" + _x(v, EXPR))
        else:
            parts.append(_x(k, TEST) + ": " + _x(v, TEST))
    return "{" + ", ".join(parts) + "}"


def _comprehensions(generators):
    text = ""
    for g in generators:
        text += " async for " if g.is_async else " for "
        text += _x(g.target, TUPLE) + " in " + _x(g.iter, TEST + 1)
        for cond in g.ifs:
            text += " if " + _x(cond, TEST + 1)
    return text


def _list_comp(node, p):
    return "[" + _x(node.elt, TEST) + _comprehensions(node.generators) + "]"


def _generator_exp(node, p):
    return "(" + _x(node.elt, TEST) + _comprehensions(node.generators) + ")"


def _set_comp(node, p):
    return "{" + _x(node.elt, TEST) + _comprehensions(node.generators) + "}"


def _dict_comp(node, p):
    return ("{" + _x(node.key, TEST) + ": " + _x(node.value, TEST) +
            _comprehensions(node.generators) + "}")


def _if_exp(node, p):
    text = (_x(node.body, TEST + 1) + " if " + _x(node.test, TEST + 1) + " else " +
            _x(node.orelse, TEST))
    return "(" + text + ")" if p > TEST else text


_UNARY = {gast.Invert: ("~", FACTOR), gast.Not: ("not ", NOT), gast.UAdd: ("+", FACTOR),
          gast.USub: ("-", FACTOR)}


def _unary_op(node, p):
    op, prec = _UNARY[node.op.__class__]
    text = op + _x(node.operand, prec)
    return "(" + text + ")" if p > prec else text


_BINARY = {gast.Add: " + ", gast.Sub: " - ", gast.Mult: " * ", gast.MatMult: " @ ",
           gast.Div: " / ", gast.Mod: " % ", gast.LShift: " << ", gast.RShift: " >> ",
           gast.BitOr: " | ", gast.BitXor: " ^ ", gast.BitAnd: " & ",
           gast.FloorDiv: " // ", gast.Pow: " ** "}
_BINARY_PREC = {op: int(ast._Unparser.binop_precedence[text.strip()])
                for op, text in _BINARY.items()}


def _bin_op(node, p):
    cls = node.op.__class__
    prec = _BINARY_PREC[cls]
    if cls is gast.Pow:  # right-associative
        left, right = _next(prec), prec
    else:
        left, right = prec, _next(prec)
    text = _x(node.left, left) + _BINARY[cls] + _x(node.right, right)
    return "(" + text + ")" if p > prec else text


_COMPARE = {getattr(gast, name): f" {text} " for name, text in ast._Unparser.cmpops.items()}


def _compare(node, p):
    text = _x(node.left, CMP + 1)
    for op, e in zip(node.ops, node.comparators):
        text += _COMPARE[op.__class__] + _x(e, CMP + 1)
    return "(" + text + ")" if p > CMP else text


def _bool_op(node, p):
    if node.op.__class__ is gast.And:
        prec, sep = AND, " and "
    else:
        prec, sep = OR, " or "
    parts = []
    inner = prec
    for v in node.values:  # each operand binds one level tighter than the last
        inner = _next(inner)
        parts.append(_x(v, inner))
    text = sep.join(parts)
    return "(" + text + ")" if p > prec else text


def _lambda(node, p):
    args = _arguments(node.args)
    text = ("lambda " + args if args else "lambda") + ": " + _x(node.body, TEST)
    return "(" + text + ")" if p > TEST else text


def _named_expr(node, p):
    text = _x(node.target, ATOM) + " := " + _x(node.value, ATOM)
    return "(" + text + ")" if p > NAMED_EXPR else text


def _await(node, p):
    text = "await" + (" " + _x(node.value, ATOM) if node.value else "")
    return "(" + text + ")" if p > AWAIT else text


def _yield(node, p):
    text = "yield" + (" " + _x(node.value, ATOM) if node.value else "")
    return "(" + text + ")" if p > YIELD else text


def _param(name):
    """A parameter (gast.Name with its annotation)."""
    if name.annotation:
        return name.id + ": " + _x(name.annotation, TEST)
    return name.id


def _arguments(node):
    """ast._Unparser.visit_arguments on gast's arguments (parameters are Names)."""
    parts = []
    positional = node.posonlyargs + node.args
    n_pos_only = len(node.posonlyargs)
    defaults = [None] * (len(positional) - len(node.defaults)) + node.defaults
    for index, (a, d) in enumerate(zip(positional, defaults), 1):
        text = _param(a)
        if d:
            text += "=" + _x(d, TEST)
        if index == n_pos_only:
            text += ", /"
        parts.append(text)
    vararg = node.vararg
    if vararg or node.kwonlyargs:
        parts.append("*" + _param(vararg) if vararg else "*")
    for a, d in zip(node.kwonlyargs, node.kw_defaults):
        parts.append(_param(a) + ("=" + _x(d, TEST) if d else ""))
    kwarg = node.kwarg
    if kwarg:
        parts.append("**" + _param(kwarg))
    return ", ".join(parts)


_EXPR = {
    gast.Name: _name, gast.Constant: _constant, gast.Attribute: _attribute,
    gast.Call: _call, gast.Subscript: _subscript, gast.Starred: _starred,
    gast.Slice: _slice, gast.Tuple: _tuple, gast.List: _list, gast.Set: _set,
    gast.Dict: _dict, gast.ListComp: _list_comp, gast.GeneratorExp: _generator_exp,
    gast.SetComp: _set_comp, gast.DictComp: _dict_comp, gast.IfExp: _if_exp,
    gast.UnaryOp: _unary_op, gast.BinOp: _bin_op, gast.Compare: _compare,
    gast.BoolOp: _bool_op, gast.Lambda: _lambda, gast.NamedExpr: _named_expr,
    gast.Await: _await, gast.Yield: _yield,
}


# ---------------------------------------------------------------------------------------
# statements: appended to `out` as ast._Unparser writes them (`fill`: a newline first
# unless nothing was written yet, then the indentation and the text)

def _fill(out, indent, text):
    out.append(("\n" if out else "") + "    " * indent + text)


def _body(stmts, indent, out):
    for s in stmts:
        f = _STMT.get(s.__class__)
        if f is None:
            _fallback_stmt(s, indent, out)
        else:
            f(s, indent, out)


def _fallback_stmt(node, indent, out):
    u = ast._Unparser()
    u._source = out  # continue the same output, at the same indentation
    u._indent = indent
    u.traverse(bridge.to_ast(node))


def _type_comment(node):
    comment = node.type_comment
    return "" if comment is None else " # type: " + comment


def _docstring_body(node, indent, out):
    """A def's, class's or module's body, its docstring written as ast.unparse does."""
    body = node.body
    if body:
        first = body[0]
        if first.__class__ is gast.Expr:
            value = first.value
            if value.__class__ is gast.Constant and isinstance(value.value, str):
                text, quotes = ast._Unparser()._str_literal_helper(
                    value.value, quote_types=ast._MULTI_QUOTES)
                prefix = "u" if value.kind == "u" else ""
                _fill(out, indent, prefix + quotes[0] + text + quotes[0])
                body = body[1:]
    _body(body, indent, out)


def _decorators(node, indent, out):
    if out:
        out.append("\n")  # ast._Unparser.maybe_newline: a blank line before a def or class
    for d in node.decorator_list:
        _fill(out, indent, "@" + _x(d, TEST))


def _function_def(node, indent, out):
    _decorators(node, indent, out)
    kind = "async def " if node.__class__ is gast.AsyncFunctionDef else "def "
    text = kind + node.name + "(" + _arguments(node.args) + ")"
    if node.returns:
        text += " -> " + _x(node.returns, TEST)
    _fill(out, indent, text + ":" + _type_comment(node))
    _docstring_body(node, indent + 1, out)


def _class_def(node, indent, out):
    _decorators(node, indent, out)
    text = "class " + node.name
    if node.bases or node.keywords:
        parts = [_x(b, TEST) for b in node.bases] + [_keyword(k) for k in node.keywords]
        text += "(" + ", ".join(parts) + ")"
    _fill(out, indent, text + ":")
    _docstring_body(node, indent + 1, out)


def _else(orelse, indent, out):
    if orelse:
        _fill(out, indent, "else:")
        _body(orelse, indent + 1, out)


def _if(node, indent, out):
    _fill(out, indent, "if " + _x(node.test, TEST) + ":")
    _body(node.body, indent + 1, out)
    while node.orelse and len(node.orelse) == 1 and node.orelse[0].__class__ is gast.If:
        node = node.orelse[0]  # else: if ... -> elif ...
        _fill(out, indent, "elif " + _x(node.test, TEST) + ":")
        _body(node.body, indent + 1, out)
    _else(node.orelse, indent, out)


def _while(node, indent, out):
    _fill(out, indent, "while " + _x(node.test, TEST) + ":")
    _body(node.body, indent + 1, out)
    _else(node.orelse, indent, out)


def _for(node, indent, out):
    kind = "async for " if node.__class__ is gast.AsyncFor else "for "
    _fill(out, indent, kind + _x(node.target, TUPLE) + " in " + _x(node.iter, TEST) + ":" +
          _type_comment(node))
    _body(node.body, indent + 1, out)
    _else(node.orelse, indent, out)


def _withitem(item):
    text = _x(item.context_expr, TEST)
    if item.optional_vars:
        text += " as " + _x(item.optional_vars, TEST)
    return text


def _with(node, indent, out):
    kind = "async with " if node.__class__ is gast.AsyncWith else "with "
    _fill(out, indent, kind + ", ".join([_withitem(i) for i in node.items]) + ":" +
          _type_comment(node))
    _body(node.body, indent + 1, out)


def _expr_stmt(node, indent, out):
    _fill(out, indent, _x(node.value, YIELD))


def _assign(node, indent, out):
    text = "".join([_x(t, TUPLE) + " = " for t in node.targets])
    _fill(out, indent, text + _x(node.value, TEST) + _type_comment(node))


def _aug_assign(node, indent, out):
    op = _BINARY[node.op.__class__]
    _fill(out, indent, _x(node.target, TEST) + op[:-1] + "= " + _x(node.value, TEST))


def _ann_assign(node, indent, out):
    target = _x(node.target, TEST)
    if not node.simple and node.target.__class__ is gast.Name:
        target = "(" + target + ")"
    text = target + ": " + _x(node.annotation, TEST)
    if node.value:
        text += " = " + _x(node.value, TEST)
    _fill(out, indent, text)


def _return(node, indent, out):
    _fill(out, indent, "return " + _x(node.value, TEST) if node.value else "return")


def _keyword_stmt(word):
    def write(node, indent, out):
        _fill(out, indent, word)
    return write


def _delete(node, indent, out):
    _fill(out, indent, "del " + ", ".join([_x(t, TEST) for t in node.targets]))


def _assert(node, indent, out):
    text = "assert " + _x(node.test, TEST)
    if node.msg:
        text += ", " + _x(node.msg, TEST)
    _fill(out, indent, text)


def _global(node, indent, out):
    _fill(out, indent, "global " + ", ".join(node.names))


def _nonlocal(node, indent, out):
    _fill(out, indent, "nonlocal " + ", ".join(node.names))


def _raise(node, indent, out):
    if not node.exc:
        if node.cause:  # not valid Python: let ast.unparse raise its error
            return _fallback_stmt(node, indent, out)
        return _fill(out, indent, "raise")
    text = "raise " + _x(node.exc, TEST)
    if node.cause:
        text += " from " + _x(node.cause, TEST)
    _fill(out, indent, text)


def _alias(a):
    return a.name + " as " + a.asname if a.asname else a.name


def _import(node, indent, out):
    _fill(out, indent, "import " + ", ".join([_alias(a) for a in node.names]))


def _import_from(node, indent, out):
    text = "from " + "." * (node.level or 0) + (node.module or "") + " import "
    _fill(out, indent, text + ", ".join([_alias(a) for a in node.names]))


_STMT = {
    gast.FunctionDef: _function_def, gast.AsyncFunctionDef: _function_def,
    gast.ClassDef: _class_def, gast.If: _if, gast.While: _while, gast.For: _for,
    gast.AsyncFor: _for, gast.With: _with, gast.AsyncWith: _with, gast.Expr: _expr_stmt,
    gast.Assign: _assign, gast.AugAssign: _aug_assign, gast.AnnAssign: _ann_assign,
    gast.Return: _return, gast.Pass: _keyword_stmt("pass"),
    gast.Break: _keyword_stmt("break"), gast.Continue: _keyword_stmt("continue"),
    gast.Delete: _delete, gast.Assert: _assert, gast.Global: _global,
    gast.Nonlocal: _nonlocal, gast.Raise: _raise, gast.Import: _import,
    gast.ImportFrom: _import_from,
}


def unparse(node):
    """The text ast.unparse(bridge.to_ast(node)) gives, for one gast node."""
    if not bridge.FAST:
        return ast.unparse(bridge.to_ast(node))
    cls = node.__class__
    if cls is gast.Module:
        if node.type_ignores:  # they change how every statement ends: ast's own job
            return ast.unparse(bridge.to_ast(node))
        out = []
        _docstring_body(node, 0, out)
        return "".join(out)
    f = _STMT.get(cls)
    if f is not None:
        out = []
        f(node, 0, out)
        return "".join(out)
    if cls in _EXPR:
        return _x(node, TEST)
    return ast.unparse(bridge.to_ast(node))
