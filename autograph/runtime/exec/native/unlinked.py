"""`njit` for the functions generated code calls through their address, never re-linked.

When an `@njit` function calls another, Numba links the callee's LLVM IR into the
caller's module and optimises and compiles it all again: every program that calls the
shared helpers (library.py) and fused kernels (kernel_modules.py) compiled them once more
inside itself, though their machine code was loaded from the cache already (the RNN
gradient's module: ~1,300 lines of its own, ~5,700 of helpers).

A function made by this module's `njit` is a Numba dispatcher like any other (called from
Python, typed and cached as usual), except in how a caller's machine code reaches it: the
caller calls an external symbol, `autograph.native$<module>.<name>$<argument types>`, that
this process maps to the address of the callee's compiled code (`llvmlite.binding.
add_symbol`) before the caller is linked, so the caller's module holds the call and no
copy of the callee. The symbol is named by the callee's module, name and argument types,
not by Numba's mangled name (which counts compilations in the process that compiled it):
a callee compiled again, in another process, still answers it.

A caller loaded from Numba's disk cache is linked from its object code with the same
symbols: Numba runs the caller's `reload_init` functions before it loads the object code,
and the lowering added `_reload` there, which loads (or compiles) the callee for those
argument types and maps the symbol again. A symbol the linker cannot find would abort
the process, so every path that links a caller maps its symbols first, or raises.

The price: the callee is not inlined into the caller (a call, a few ns, where LLVM would
inline a one-line wrapper), which the programs' per-call times measure (docs/native.md).

This leans on Numba's internals, as its own recursion support does (`call_unresolved`):
the target context's implementations (`_defns`), a code library's `_reload_init` and the
call convention; tests/runtime/test_native_unlinked.py checks them in fresh processes.
"""

import functools
import sys

import numba
from numba.core import cgutils, imputils, itanium_mangler
from numba.core.base import OverloadSelector

from autograph.runtime.exec.native.cache_load import QuickLoadDispatcher, make

__all__ = ["njit", "UnlinkedDispatcher", "symbol", "supported"]

PREFIX = "autograph.native$"
_mapped = {}         # symbol -> the callee's CompileResult (keeps its code alive)
_reloads = {}        # (module, name, argument types) -> the one `_reload` partial


class UnlinkedDispatcher(QuickLoadDispatcher):
    """A CPU dispatcher whose compiled versions other Numba functions call through an
    external symbol instead of linking their code (and whose disk cache loads quickly:
    cache_load.py)."""

    def add_overload(self, cres):
        super().add_overload(cres)
        if not cres.objectmode:
            # replace the linking call Numba registered for this version (typed_passes /
            # dispatcher `insert_user_function`) with the call through the symbol
            impl = _call_through_symbol(self, cres)
            chosen = OverloadSelector()
            chosen.append(impl, impl.signature)
            self.targetctx._defns[cres.entry_point] = chosen


def supported(version=numba.__version__):
    """Whether this Numba has what the unlinked call needs: a code library's reload-init
    hooks came in Numba 0.63 (0.61's libraries have none: every call failed there); tested
    on 0.65 and 0.68. Older versions link the callee's code as Numba always did."""
    try:
        return tuple(int(p) for p in version.split(".")[:2]) >= (0, 63)
    except ValueError:
        return False


def njit(fn=None, **options):
    """`numba.njit` making an `UnlinkedDispatcher` (a `QuickLoadDispatcher`, whose callers
    link its code, on a Numba without the hooks: `supported`): `@njit` or
    `@njit(cache=True, ...)`."""
    kind = UnlinkedDispatcher if supported() else QuickLoadDispatcher
    if fn is None:
        return lambda fn: make(kind, fn, options)
    return make(kind, fn, options)


def symbol(module, name, argtypes):
    """The external symbol callers call for `module.name` compiled for `argtypes`."""
    return PREFIX + itanium_mangler.mangle(f"{module}.{name}", argtypes)


def _key(disp, argtypes):
    return disp.py_func.__module__, disp.py_func.__qualname__, tuple(argtypes)


def _map(disp, cres):
    """Map the symbol of `cres` (a version of `disp`) to its compiled code's address."""
    from llvmlite import binding as ll
    name = symbol(*_key(disp, cres.fndesc.argtypes))
    if _mapped.get(name) is not cres:
        address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
        if not address:
            raise RuntimeError(f"autograph: no machine code for {name}")
        ll.add_symbol(name, address)
        _mapped[name] = cres
    return name


def _reload(module, name, argtypes):
    """Before a caller is loaded from Numba's cache: the callee `module.name` for
    `argtypes` compiled or loaded, and its symbol mapped (a caller's `reload_init`)."""
    try:
        disp = getattr(sys.modules[module], name)
    except (KeyError, AttributeError):
        raise RuntimeError(f"autograph: the native function {module}.{name} that cached "
                           f"code calls is not loaded") from None
    disp.compile(argtypes)
    _map(disp, disp.overloads[tuple(argtypes)])


def _call_through_symbol(disp, cres):
    """The lowering of a call to `cres` from another Numba function: Numba's own
    (imputils.user_function) with the callee's external symbol in place of its linked
    code, and no library to link."""
    fndesc = cres.fndesc
    key = _key(disp, fndesc.argtypes)

    def imp(context, builder, sig, args):
        name = _map(disp, cres)     # mapped before the caller is linked
        reload = _reloads.get(key)
        if reload is None:
            reload = _reloads[key] = functools.partial(_reload, *key)
        context.active_code_library._reload_init.add(reload)
        fnty = context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        status, retval = context.call_conv.call_function(
            builder, fn, fndesc.restype, fndesc.argtypes, args)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        retval = imputils.fix_returning_optional(context, builder, sig, status, retval)
        return imputils.impl_ret_new_ref(context, builder, fndesc.restype, retval)

    imp.signature = fndesc.argtypes
    imp.libs = ()
    return imp
