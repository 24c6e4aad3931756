"""String formatting -> operators that stage it when an operand is a tensor.

    f"step {i}: loss={loss:.4f}"   ->  ag__.str_format('step {}: loss={:.4f}', i, loss)
    "{} {:>6}".format(a, b)       ->  ag__.str_format('{} {:>6}', a, b)
    "%d: %.2f" % (i, x)           ->  ag__.str_mod('%d: %.2f', (i, x))
    print(a, b)                   ->  ag__.py_print(a, b)

An f-string becomes the `str.format` template Python would use for it (literal braces doubled,
`!r` and specs as written, nested spec fields as `{}` fields whose values follow in order),
so on Python values the operator is `template.format(...)`, the same text. Only literal
templates are rewritten: `%` is also arithmetic, so `a % b` stays as written unless `a` is a
string literal, and `s.format(...)` on a variable goes through converted_call. `print` is
rewritten only where the name is Python's own.
"""

import builtins
import re

import gast

from autograph.converters.base import Transformer, local_names, rewrite_outermost
from autograph.source import templates

_CONVERSIONS = {-1: "", 115: "!s", 114: "!r", 97: "!a"}


def _is_str(node):
    return node.__class__ is gast.Constant and type(node.value) is str


def _escape(text):
    return text.replace("{", "{{").replace("}", "}}")


def _template(joined, values, depth=1):
    """The str.format template of a JoinedStr's parts (its field values appended to
    `values`), or None when it cannot be written as one (a spec nested too deeply)."""
    out = []
    for part in joined.values:
        if _is_str(part):
            out.append(_escape(part.value))
        elif part.__class__ is gast.FormattedValue:
            values.append(part.value)
            spec = ""
            if part.format_spec is not None:
                if depth == 0:
                    return None
                spec = _template(part.format_spec, values, depth - 1)
                if spec is None:
                    return None
                spec = ":" + spec
            out.append("{" + _CONVERSIONS[part.conversion] + spec + "}")
        else:
            return None
    return "".join(out)


def _call(op, origin, first, args, keywords=()):
    new = templates.replace_as_expression(f"ag__.{op}(first)", origin=origin, first=first)
    new.args = new.args + list(args)
    new.keywords = list(keywords)
    return new


class _Formatting(Transformer):

    def __init__(self, ctx, print_is_builtin):
        super().__init__(ctx)
        self.print_is_builtin = print_is_builtin

    def visit_JoinedStr(self, node):
        values = []
        template = _template(node, values)
        if template is None or not values:
            return self.generic_visit(node)
        # (the values only: a spec is a JoinedStr that is part of the template)
        return _call("str_format", node, gast.Constant(value=template, kind=None),
                     [self.visit(v) for v in values])

    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        if node.op.__class__ is gast.Mod and _is_str(node.left):
            return _call("str_mod", node, node.left, [node.right])
        return node

    def visit_Call(self, node):
        node = self.generic_visit(node)
        func = node.func
        if func.__class__ is gast.Attribute and func.attr == "format" and _is_str(func.value):
            return _call("str_format", node, func.value, node.args, node.keywords)
        if func.__class__ is gast.Attribute and func.attr == "format":
            # `template.format(...)` with the template in a variable: a str at run time
            # formats as above, anything else calls its own format method
            return _call("any_format", node, func.value, node.args, node.keywords)
        if func.__class__ is gast.Name and func.id == "print" and self.print_is_builtin:
            new = templates.replace_as_expression("ag__.py_print()", origin=node)
            new.args, new.keywords = node.args, node.keywords
            return new
        return node


def _wanted(node):
    cls = node.__class__
    if cls is gast.JoinedStr:
        return True
    if cls is gast.BinOp:
        return node.op.__class__ is gast.Mod and _is_str(node.left)
    if cls is gast.Call:
        func = node.func
        return (func.__class__ is gast.Attribute and func.attr == "format") or \
            (func.__class__ is gast.Name and func.id == "print")
    return False


def _print_is_builtin(node, ctx):
    """Whether `print` in this function is Python's: not bound in it (nor in a nested
    function), in its globals or its closure."""
    if "print" in ctx.namespace:
        return ctx.namespace["print"] is builtins.print
    code = getattr(ctx.fn, "__code__", None)
    if "print" in ctx.closure or "print" in getattr(code, "co_freevars", ()):
        return False
    bound = _binds(code, "print") if code is not None else None
    if bound is None:   # no code to read (or too many names): look at the tree
        bound = any("print" in local_names(n) for n in gast.walk(node)
                    if n.__class__ in (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))
    return not bound


_STORE_GLOBAL = __import__("opcode").opmap["STORE_GLOBAL"]


def _binds(code, name):
    """Whether `code` (the function's code object, compiled by Python from the same text)
    or a function nested in it binds `name`: as a local, a cell, or through `global`.
    Python's compiler has already found these names, so no tree walk is needed. None
    when the bytecode cannot tell cheaply (a name index past one byte)."""
    if name in code.co_varnames or name in code.co_cellvars:
        return True
    if name in code.co_names:
        index = code.co_names.index(name)
        if index > 255:
            return None
        raw = code.co_code
        if any(raw[i] == _STORE_GLOBAL and raw[i + 1] == index for i in range(0, len(raw), 2)):
            return True
    answer = False
    for const in code.co_consts:
        if isinstance(const, type(code)):
            inner = _binds(const, name)
            if inner is None or inner:
                return inner
    return answer


_MAY_FORMAT = re.compile(r"""[fF][rR]?['"]|[rR][fF]['"]|format|%|print""")


def transform(node, ctx):
    """Rewrite the formatting (and Python's print calls) of the function."""
    source = getattr(ctx, "source", None)
    if source is not None and not _MAY_FORMAT.search(source):
        return node   # no f-string, format, % or print in its text: nothing to walk
    visitor = _Formatting(ctx, _print_is_builtin(node, ctx))
    rewrite_outermost(node, _wanted, visitor.visit)
    return node
