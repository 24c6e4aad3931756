"""Qualified names: the symbols analyses reason about (`a`, `a.b`, `a[i]`, `a[0]`).

A `QN` is an immutable, hashable value, so analyses are plain set algebra over symbols.
`resolve(tree)` annotates every Name, Attribute and Subscript node whose whole expression is
a symbol with `anno.Basic.QN`. Subscripts qualify only when the index is itself a symbol or a
constant (`a[i]`, `a['k']`, `a[0]`, `a[-1]`); `a[i + 1]` or `f(x).y` have no QN (their parts may).
"""

import gast

from autograph.source import anno, traversal


class Literal:
    """A constant used as a subscript in a QN: `a[0]`, `a['key']`."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return (isinstance(other, Literal) and type(self.value) is type(other.value)
                and self.value == other.value)

    def __hash__(self):
        return hash((Literal, type(self.value), self.value))

    def __str__(self):
        return repr(self.value)

    __repr__ = __str__


class QN:
    """A qualified name: a simple name, or an attribute or subscript of another QN.

    QN('a'), QN(QN('a'), attr='b') is `a.b`, QN(QN('a'), subscript=QN('i')) is `a[i]`,
    QN(QN('a'), subscript=Literal(0)) is `a[0]`.
    """

    __slots__ = ("_base", "_attr", "_subscript", "_hash", "_str")

    def __init__(self, base, attr=None, subscript=None):
        if attr is not None and subscript is not None:
            raise ValueError("a QN has an attribute or a subscript, not both")
        if attr is None and subscript is None:
            if isinstance(base, QN):
                raise ValueError("a composite QN needs attr= or subscript=")
            if not isinstance(base, str):
                raise TypeError(f"a simple QN is named by a str, not {type(base).__name__}")
        elif not isinstance(base, QN):
            raise TypeError("the base of a composite QN must be a QN")
        if subscript is not None and not isinstance(subscript, (QN, Literal)):
            subscript = Literal(subscript)
        self._base = base
        self._attr = attr
        self._subscript = subscript
        self._hash = hash((base, attr, subscript))
        if attr is not None:
            self._str = f"{base}.{attr}"
        elif subscript is not None:
            self._str = f"{base}[{subscript}]"
        else:
            self._str = base

    # -- structure ------------------------------------------------------------------------
    def is_simple(self):
        """True for a plain name (`a`), False for `a.b` or `a[i]`."""
        return self._attr is None and self._subscript is None

    def is_composite(self):
        return not self.is_simple()

    def has_attr(self):
        return self._attr is not None

    def has_subscript(self):
        return self._subscript is not None

    @property
    def parent(self):
        """The QN this one qualifies (`a` for `a.b`); ValueError for a simple name."""
        if self.is_simple():
            raise ValueError(f"{self} is a simple name and has no parent")
        return self._base

    @property
    def attr(self):
        return self._attr

    @property
    def subscript(self):
        return self._subscript

    @property
    def root(self):
        """The simple name at the bottom: `a` for `a.b[i].c`."""
        qn = self
        while not qn.is_simple():
            qn = qn._base
        return qn

    @property
    def owner_set(self):
        """The QNs whose modification may change this one: `{a, a.b}` for `a.b.c`."""
        owners = set()
        qn = self
        while not qn.is_simple():
            qn = qn._base
            owners.add(qn)
        return owners

    @property
    def support_set(self):
        """The simple names whose values determine this symbol: `{a, i}` for `a[i]`."""
        if self.is_simple():
            return {self}
        support = set(self._base.support_set)
        if isinstance(self._subscript, QN):
            support |= self._subscript.support_set
        return support

    # -- value semantics ------------------------------------------------------------------
    def __eq__(self, other):
        return (isinstance(other, QN) and self._hash == other._hash
                and self._base == other._base and self._attr == other._attr
                and self._subscript == other._subscript)

    def __hash__(self):
        return self._hash

    def __lt__(self, other):  # sorting makes generated code and messages deterministic
        return str(self) < str(other)

    def __str__(self):
        return self._str

    def __repr__(self):
        return f"QN({self._str!r})"

    def __copy__(self):  # immutable: copies of annotated trees share it
        return self

    def __deepcopy__(self, memo):
        return self

    def ast(self, ctx=None):
        """A fresh gast node for this symbol (Load context unless `ctx` is given)."""
        ctx = ctx if ctx is not None else gast.Load()
        if self.is_simple():
            node = gast.Name(id=self._base, ctx=ctx, annotation=None, type_comment=None)
        elif self._attr is not None:
            node = gast.Attribute(value=self._base.ast(), attr=self._attr, ctx=ctx)
        else:
            sub = self._subscript
            index = sub.ast() if isinstance(sub, QN) else gast.Constant(value=sub.value, kind=None)
            node = gast.Subscript(value=self._base.ast(), slice=index, ctx=ctx)
        anno.setanno(node, anno.Basic.QN, self)
        return node


def from_str(text):
    """Parse 'a', 'a.b', 'a[i]', 'a[0]' into a QN."""
    node = gast.parse(text.strip(), mode="eval").body
    qn = _qn_of(node)
    if qn is None:
        raise ValueError(f"{text!r} is not a qualified name")
    return qn


def _qn_of(node):
    """The QN of an expression node, or None when it is not a symbol (no annotation)."""
    if isinstance(node, gast.Name):
        return QN(node.id)
    if isinstance(node, gast.Attribute):
        base = _qn_of(node.value)
        return None if base is None else QN(base, attr=node.attr)
    if isinstance(node, gast.Subscript):
        base = _qn_of(node.value)
        if base is None:
            return None
        index = node.slice
        if isinstance(index, gast.Constant) and isinstance(index.value, (int, str, bool)):
            return QN(base, subscript=Literal(index.value))
        if (isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub)
                and isinstance(index.operand, gast.Constant)
                and type(index.operand.value) is int):
            return QN(base, subscript=Literal(-index.operand.value))  # x[-1]
        sub = _qn_of(index)
        return None if sub is None else QN(base, subscript=sub)
    return None


qn_of = _qn_of  # public name: analysis.activity computes QNs as it meets the nodes

_SYMBOL_NODES = (gast.Name, gast.Attribute, gast.Subscript)


def resolve(node):
    """Annotate `anno.Basic.QN` on every Name/Attribute/Subscript under `node` that denotes
    a symbol (and remove a stale one from those that no longer do). Returns `node` (the
    tree is annotated in place)."""
    for n in traversal.walk(node, leaves=False):
        if isinstance(n, _SYMBOL_NODES):
            qn = _qn_of(n)
            if qn is not None:
                anno.setanno(n, anno.Basic.QN, qn)
            else:
                anno.delanno(n, anno.Basic.QN)
    return node
