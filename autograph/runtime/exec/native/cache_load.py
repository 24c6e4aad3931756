"""`njit` whose disk-cache loads skip Numba's compiler set-up: a later process loads faster.

Before it loads a function's machine code from its disk cache, Numba "refreshes" its
target context: it imports and registers every typing and lowering implementation it has
(`numba.cpython.*`, `numba.np.*`, typed containers, jitclass, ...; ~0.2-0.3 s of a second
process's ~1 s, measured in docs/native.md), which only typing and lowering use. Loading
needs Numba's runtime (NRT) and the modules of the environments the code refers to, which
the load imports itself. So a dispatcher made here loads with NRT initialized and nothing
else; a compile (a signature not in the cache) refreshes as before, in Numba's pipeline.
"""

from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

__all__ = ["njit", "QuickLoadDispatcher"]


class _QuickLoadCache(FunctionCache):

    def load_overload(self, sig, target_context):
        from numba.core.runtime import rtsys
        rtsys.initialize(target_context)     # what loaded code needs of the refresh
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


class QuickLoadDispatcher(CPUDispatcher):
    """A CPU dispatcher whose disk cache loads without Numba's compiler registries."""

    def enable_caching(self):
        self._cache = _QuickLoadCache(self.py_func)


def make(dispatcher_class, fn, options):
    """`dispatcher_class` for `fn` with `numba.njit`'s options (`cache` among them)."""
    options = dict(options, nopython=True)
    cache = options.pop("cache", False)
    disp = dispatcher_class(py_func=fn, locals={}, targetoptions=options)
    if cache:
        disp.enable_caching()
    return disp


def njit(fn=None, **options):
    """`numba.njit` making a `QuickLoadDispatcher`: `@njit` or `@njit(cache=True, ...)`."""
    if fn is None:
        return lambda fn: make(QuickLoadDispatcher, fn, options)
    return make(QuickLoadDispatcher, fn, options)
