"""In-place item updates -> assignments that rebind the name.

    x[i] = v                 ->  x = ag__.setitem(x, i, v)
    x[mask] *= 2             ->  x = ag__.setitem(x, mask, 2, '*=')
    x[1:3, j] = 0            ->  x = ag__.setitem(x, (slice(1, 3, None), j), 0)
    np.add.at(x, idx, v)     ->  x = ag__.ufunc_at(np.add, x, idx, v)
    np.put(x, idx, v)        ->  x = ag__.inplace_call(np.put, x, idx, v)
                                 (fill_diagonal, place, put_along_axis, copyto,
                                 putmask too)

A symbolic tensor is immutable: the update makes a new tensor, and the rebinding makes it
the variable's new value, so the later passes see an ordinary write of `x` (a branch's or
loop's state) instead of a write into an object. On Python values the operators do the
original statement in place and return the same object (autograph.operators.updates).

    self.w[i] = v            ->  ag__.setitem_attr(self, 'w', i, v)
                                 (a Variable assigns, a tensor attribute is rebound)

Left as written: updates of names the function does not bind itself (globals and closure
variables: rebinding would make them locals), subscripts of subscripts (`x[i][j] = v`),
several targets, and string keys (`d['k'] = v`: a dict item, which the control-flow pass
keeps as a place, writing into the same dict).
"""

import gast

from autograph.converters import base
from autograph.source import templates
from autograph.source.templates import moved

_OPS = {gast.Add: "+=", gast.Sub: "-=", gast.Mult: "*=", gast.Div: "/=",
        gast.FloorDiv: "//=", gast.Mod: "%=", gast.Pow: "**=", gast.MatMult: "@=",
        gast.BitAnd: "&=", gast.BitOr: "|=", gast.BitXor: "^=", gast.LShift: "<<=",
        gast.RShift: ">>="}


def _key_expr(key):
    """The subscript as a value: slices become `slice(...)` calls (inside tuples too)."""
    if isinstance(key, gast.Slice):
        none = gast.Constant(value=None, kind=None)
        return templates.replace_as_expression(
            "slice(lower, upper, step)", lower=moved(key.lower or none),
            upper=moved(key.upper or none), step=moved(key.step or none))
    if isinstance(key, gast.Tuple):
        key.elts = [_key_expr(e) for e in key.elts]
        key.ctx = gast.Load()
    return key


def _dict_key(key):
    return isinstance(key, gast.Constant) and isinstance(key.value, (str, bytes))


def _ufunc_at_call(node, resolve):
    """The ufunc of `<ufunc>.at(x, ...)` when `node` is such a call statement and the
    ufunc is known now (e.g. `np.add`, a module attribute), else None."""
    call = node.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            call.func.attr == "at" and not call.keywords and 2 <= len(call.args) <= 3 and
            not any(isinstance(a, gast.Starred) for a in call.args)):
        return None
    return resolve(call.func.value)


class _ItemUpdates(base.FunctionScopes):

    def _target(self, t):
        """The name `t` (a Subscript) updates, when the statement is rewritten."""
        if not isinstance(t, gast.Subscript) or _dict_key(t.slice):
            return None
        owner = t.value
        if isinstance(owner, gast.Name) and owner.id in self.locals:
            return owner.id
        return None

    def _attr_owner(self, t):
        """`owner.attr` when `t` is `owner.attr[key]` (a name or attribute chain)."""
        if not isinstance(t, gast.Subscript) or _dict_key(t.slice) or \
                not isinstance(t.value, gast.Attribute):
            return None
        base = t.value.value
        while isinstance(base, gast.Attribute):
            base = base.value
        return t.value if isinstance(base, gast.Name) else None

    def visit_Assign(self, node):
        if len(node.targets) != 1:
            return node
        t = node.targets[0]
        name = self._target(t)
        if name is None:
            return self._attr_update(node, t, node.value, None)
        return templates.replace(
            "x = ag__.setitem(x, key, value)", origin=node, x=name,
            key=moved(_key_expr(t.slice)), value=moved(node.value))

    def visit_AugAssign(self, node):
        name = self._target(node.target)
        op = _OPS.get(node.op.__class__)
        if op is None:
            return node
        if name is None:
            return self._attr_update(node, node.target, node.value, op)
        return templates.replace(
            "x = ag__.setitem(x, key, value, op)", origin=node, x=name,
            key=moved(_key_expr(node.target.slice)), value=moved(node.value),
            op=gast.Constant(value=op, kind=None))

    def _attr_update(self, node, t, value, op):
        """`self.w[i] = v` -> `ag__.setitem_attr(self, 'w', i, v)` (no rebinding: the
        operator updates the attribute's Variable, tensor or array)."""
        owner = self._attr_owner(t)
        if owner is None:
            return node
        template = "ag__.setitem_attr(obj, attr, key, value)" if op is None else \
            "ag__.setitem_attr(obj, attr, key, value, op)"
        return templates.replace(
            template, origin=node, obj=moved(owner.value),
            attr=gast.Constant(value=owner.attr, kind=None), key=moved(_key_expr(t.slice)),
            value=moved(value), op=gast.Constant(value=op, kind=None))

    def visit_Expr(self, node):
        inplace = self._inplace_call(node)
        if inplace is not None:
            return inplace
        if _ufunc_at_call(node, self._is_ufunc) is None:
            return node
        call = node.value
        x = call.args[0]
        if not (isinstance(x, gast.Name) and x.id in self.locals):
            return node
        args = [moved(a) for a in call.args[1:]]
        template = "x = ag__.ufunc_at(uf, x, key, value)" if len(args) == 2 else \
            "x = ag__.ufunc_at(uf, x, key)"
        return templates.replace(template, origin=node, x=x.id, uf=moved(call.func.value),
                                 key=args[0], **({"value": args[1]} if len(args) == 2 else {}))

    def _inplace_call(self, node):
        """`np.put(x, i, v)` (a NumPy function that writes into its first argument, a
        name the function binds) -> `x = ag__.inplace_call(np.put, x, i, v)`."""
        call = node.value
        if not (isinstance(call, gast.Call) and call.args and
                isinstance(call.args[0], gast.Name) and call.args[0].id in self.locals and
                not any(isinstance(a, gast.Starred) for a in call.args)):
            return None
        from autograph.runtime.numpy.inplace_functions import INPLACE
        f = self._resolve_attr(call.func)
        try:
            if f is None or f not in INPLACE:
                return None
        except TypeError:
            return None
        name = call.args[0].id
        call.args = [call.func] + call.args
        call.func = templates.replace_as_expression("ag__.inplace_call")
        return templates.replace("x = call", origin=node, x=name, call=moved(call))

    def _resolve_attr(self, func):
        """The value of a module attribute chain (`np.put`) now, or None."""
        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.locals:
            return None
        value = self.ctx.namespace.get(func.id, self.ctx.closure.get(func.id))
        for attr in reversed(parts):
            value = getattr(value, attr, None)
        return value

    def _is_ufunc(self, func):
        """The NumPy ufunc a module attribute chain names now (`np.add`), else None."""
        import numpy as np
        value = self._resolve_attr(func)
        return value if isinstance(value, np.ufunc) else None


def transform(node, ctx):
    """Rewrite the item updates of the function (and of the functions nested in it)."""
    if isinstance(node, gast.Lambda) or not any(base.may_contain(ctx, s) for s in (
            "[", ".at(", "put", "place", "fill_diagonal", "copyto")):
        return node
    return _ItemUpdates(ctx).visit(node)
