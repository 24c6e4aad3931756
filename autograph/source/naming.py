"""Fresh names for generated code that never shadow the user's names.

A `Namer` knows every identifier the function uses (its parameters, locals, names it reads,
nested functions, attributes are not names) plus the globals and builtins it could reach,
and hands out new names that collide with none of them nor with each other:

    namer = Namer.for_function(fn_node, fn.__globals__)
    namer.new_symbol('loop_body')   # 'loop_body', or 'loop_body_1' if the user has one
"""

import builtins
import re

import gast

from autograph.source import traversal


def identifiers(node):
    """Every identifier that names a variable, parameter, function or class under `node`."""
    names = set()
    for n in traversal.walk(node, leaves=False):
        if isinstance(n, gast.Name):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            names.update(n.names)
        elif isinstance(n, gast.alias):
            names.add((n.asname or n.name).split(".")[0])
    return names


_BUILTIN_NAMES = frozenset(dir(builtins))
_WORD = re.compile(r"[A-Za-z_]\w*")


class Namer:
    """Hands out names not in `reserved_names`, not in any of the containers of
    `reserved_in` (checked when a name is asked for, so a module's globals need no copy),
    and not handed out before."""

    def __init__(self, reserved_names=(), reserved_in=()):
        self._used = set(reserved_names)
        self._reserved_in = tuple(reserved_in)
        self.generated = set()
        self._next_suffix = {}   # base -> the first suffix not known to be taken

    @classmethod
    def for_function(cls, node, global_namespace=None, extra_reserved=(), source=None):
        """A Namer that avoids the names of `node` (a gast tree), the keys of the global
        namespace the function runs in, builtins, and `extra_reserved`. With `source`, the
        text `node` was parsed from, every word of the text is avoided instead: a superset
        of the tree's identifiers, found without walking the tree."""
        if source is not None and source.isascii():   # (non-ASCII names: NFKC-normalized)
            reserved = set(_WORD.findall(source))
        else:
            reserved = identifiers(node)
        reserved.update(extra_reserved)
        reserved_in = [_BUILTIN_NAMES]
        if global_namespace:
            reserved_in.append(global_namespace)
        return cls(reserved, reserved_in)

    def reserve(self, *names):
        """Mark names as taken (e.g. names a converter is about to introduce itself)."""
        self._used.update(str(n) for n in names)

    def is_used(self, name):
        return name in self._used or any(name in r for r in self._reserved_in)

    def new_symbol(self, base, reserved_locals=()):
        """`base` if it is free, else `base_1`, `base_2`, ...; never a reserved name."""
        base = str(base)
        local = {str(n) for n in reserved_locals} if reserved_locals else ()
        # the search starts past the suffixes already taken for `base` (they stay taken),
        # so asking for `if_true` n times probes n names, not n**2 / 2
        i = self._next_suffix.get(base, 0)
        name = f"{base}_{i}" if i else base
        skipped = None   # the first suffix passed over only for `reserved_locals`
        while True:
            used = self.is_used(name)
            if not used and name not in local:
                break
            if skipped is None and not used:
                skipped = i
            i += 1
            name = f"{base}_{i}"
        self._next_suffix[base] = i + 1 if skipped is None else skipped
        self._used.add(name)
        self.generated.add(name)
        return name
