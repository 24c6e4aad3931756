"""Fast ast <-> gast conversion for the front end's hot paths.

gast's own `ast_to_gast` / `gast_to_ast` are generic NodeTransformers (a method lookup and
a dict of keyword arguments per node); converting is a large part of a small function's
first call. These converters build the same trees with a per-class table instead:

- `to_gast(py_node, origin=None)`: like `gast.ast_to_gast`, and, given
  `origin=(filename, source_lines, function_name)`, it also sets anno.Basic.ORIGIN on every
  node in the same pass (what `parser.annotate_origins` does afterwards otherwise);
- `to_ast(node)`: like `gast.gast_to_ast`, for unparsing only: positions are not copied and
  context/operator leaves are shared.

Only the Python versions whose gast mapping is written out here (3.9 to 3.11) take the fast
path; others fall back to gast's converters, so the trees are the same either way.
tests/source/test_bridge.py compares both against gast over the standard library.
"""

import ast
import sys

import gast

from autograph.source import anno
from autograph.source.origin import LineLocation

FAST = (3, 9) <= sys.version_info[:2] < (3, 12)

_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
_ANNO = anno._FIELD
_ORIGIN = anno.Basic.ORIGIN
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

# ast class -> (gast class, field names); gast class -> (ast class, field names)
_TO_GAST = {}
_TO_AST = {}


def _gast_spec(cls):
    spec = _TO_GAST.get(cls)
    if spec is None:
        target = gast.Name if cls is ast.arg else getattr(gast, cls.__name__, None)
        kind = {ast.Name: 1, ast.arg: 2, ast.ExceptHandler: 3, ast.FunctionDef: 4,
                ast.AsyncFunctionDef: 4, ast.ClassDef: 4}.get(cls, 5 if cls in _FLAT else 0)
        spec = _TO_GAST[cls] = (target, cls._fields, cls._attributes,
                                issubclass(cls, _LEAVES), kind)
    return spec


def _ast_spec(cls):
    spec = _TO_AST.get(cls)
    if spec is None:
        target = getattr(ast, cls.__name__, None)
        leaf = target() if target is not None and issubclass(target, _LEAVES) else None
        spec = _TO_AST[cls] = (target, cls._fields, leaf)
    return spec


_AST = ast.AST
_NONE = object()
_new = ast.AST.__new__  # gast's __init__ does nothing without arguments: skip the call
_tuple_new = tuple.__new__
# classes whose fields hold no nodes and no lists (which the copy would share with the
# cached file tree): a copy of the attribute dict is the whole conversion
_FLAT = {ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.alias}
# context and operator leaves: ast class -> gast class
_LEAF_TARGETS = {cls: getattr(gast, cls.__name__) for base in _LEAVES
                 for cls in base.__subclasses__()
                 if cls.__module__ == "ast" and hasattr(gast, cls.__name__)}


def _converter(origin, root):
    """ast -> gast as a closure (locals, not attributes, on the hot path), optionally
    annotating origins (the rules of parser.annotate_origins: a node with a line gets its
    own LineLocation, one without gets its parent's; operator and context leaves get
    none; nested functions, all but `root`, name their own nodes' function)."""
    annotate = origin is not None
    if annotate:
        filename, lines, name = origin
        names = [name]
        n_lines = len(lines)
        texts = {}  # line number -> its text, stripped once per line
    specs = _TO_GAST
    leaves = _LEAF_TARGETS

    def convert(node, loc):
        cls = node.__class__
        target, fields, _, leaf, kind = specs.get(cls) or _gast_spec(cls)
        if target is None:
            return None
        if leaf:  # a context/operator leaf
            return _new(target)
        new = _new(target)
        src = node.__dict__
        d = new.__dict__
        d.update(src)  # fields (converted below) and positions
        nested = False
        if annotate:
            lineno = src.get("lineno")
            if lineno is not None:
                line = texts.get(lineno)
                if line is None:
                    line = lines[lineno - 1].rstrip("\r\n") if 0 < lineno <= n_lines else ""
                    texts[lineno] = line
                loc = _tuple_new(LineLocation, (filename, lineno, src.get("col_offset", 0),
                                                line, names[-1]))
            if loc is not None:
                d[_ANNO] = {_ORIGIN: loc}
            if cls in _FUNCTIONS and node is not root:
                nested = True
                names.append(getattr(node, "name", "<lambda>"))
        if kind == 0:
            for f in fields:
                v = src.get(f, _NONE)
                if v is _NONE:
                    v = getattr(node, f, _NONE)
                    if v is _NONE:
                        continue
                if v.__class__ is list:
                    d[f] = [convert(x, loc) if isinstance(x, _AST) else x for x in v]
                elif isinstance(v, _AST):
                    t = leaves.get(v.__class__)  # operators: made here, not by a call
                    d[f] = _new(t) if t is not None else convert(v, loc)
                else:
                    d[f] = v
        elif kind == 1:  # Name
            d["ctx"] = _new(leaves[src["ctx"].__class__])
            d["annotation"] = d["type_comment"] = None
        elif kind == 5:  # no child nodes
            pass
        elif kind == 2:  # arg -> Name
            del d["arg"]
            d["id"] = node.arg
            d["ctx"] = _new(gast.Param)
            ann = node.annotation
            d["annotation"] = None if ann is None else convert(ann, loc)
            d["type_comment"] = node.type_comment
        elif kind == 3 and node.name:  # ExceptHandler: the name becomes a Name node
            d["type"] = None if node.type is None else convert(node.type, loc)
            name_node = gast.Name(node.name, gast.Store(), None, None)
            if annotate and loc is not None:
                name_node.__dict__[_ANNO] = {_ORIGIN: loc}
            d["name"] = name_node
            d["body"] = [convert(x, loc) for x in node.body]
        else:  # 3 without a name, 4: a def or class
            for f in fields:
                v = src.get(f, _NONE)
                if v is _NONE:
                    v = getattr(node, f, _NONE)
                    if v is _NONE:
                        continue
                if v.__class__ is list:
                    d[f] = [convert(x, loc) if isinstance(x, _AST) else x for x in v]
                elif isinstance(v, _AST):
                    d[f] = convert(v, loc)
                else:
                    d[f] = v
            if kind == 4:
                d["type_params"] = []
        if nested:
            names.pop()
        return new

    return convert


def to_gast(node, origin=None):
    """The gast tree of ast `node` (as gast.ast_to_gast); with `origin` = (filename,
    source lines, function name), every node also gets anno.Basic.ORIGIN."""
    if not FAST:
        new = gast.ast_to_gast(node)
        if origin is not None:
            from autograph.source import parser
            parser.annotate_origins(new, *origin)
        return new
    return _converter(origin, node)(node, None)


def _ast_value(v):
    if isinstance(v, ast.AST):
        return _ast_node(v)
    if isinstance(v, list):
        return [_ast_value(x) for x in v]
    return v


def _arg(node):
    if node is None:
        return None
    new = ast.arg()
    new.arg = node.id
    new.annotation = _ast_value(node.annotation)
    new.type_comment = node.type_comment
    return new


def _ast_node(node):
    cls = node.__class__
    target, fields, leaf = _ast_spec(cls)
    if leaf is not None:
        return leaf
    if target is None:
        return None
    new = target()
    d = new.__dict__
    if issubclass(target, ast.stmt):
        # ast.unparse reads a statement's lineno (to look up `# type: ignore` comments)
        d["lineno"] = getattr(node, "lineno", None) or 1
    if cls is gast.Name:
        d["id"] = node.id
        d["ctx"] = _ast_value(node.ctx)
    elif cls is gast.arguments:
        d["posonlyargs"] = [_arg(a) for a in node.posonlyargs]
        d["args"] = [_arg(a) for a in node.args]
        d["vararg"] = _arg(node.vararg)
        d["kwonlyargs"] = [_arg(a) for a in node.kwonlyargs]
        d["kw_defaults"] = _ast_value(node.kw_defaults)
        d["kwarg"] = _arg(node.kwarg)
        d["defaults"] = _ast_value(node.defaults)
    elif cls is gast.ExceptHandler and node.name:
        d["type"] = _ast_value(node.type)
        d["name"] = node.name.id
        d["body"] = _ast_value(node.body)
    elif cls is gast.Assign:
        d["targets"] = _ast_value(node.targets)
        d["value"] = _ast_value(node.value)
    else:
        src = node.__dict__
        for f in fields:
            v = src[f] if f in src else getattr(node, f, _NONE)
            if v is _NONE:
                continue
            if isinstance(v, list):
                d[f] = [_ast_node(x) if isinstance(x, _AST) else x for x in v]
            elif isinstance(v, _AST):
                d[f] = _ast_node(v)
            else:
                d[f] = v
        if cls in (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef):
            d.pop("type_params", None)
    return new


def to_ast(node):
    """The ast tree of gast `node`, for ast.unparse (as gast.gast_to_ast, without positions;
    context and operator leaves are shared)."""
    if not FAST:
        return gast.gast_to_ast(node)
    return _ast_node(node)
