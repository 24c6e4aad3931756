"""The file names under which generated code is compiled and registered in `linecache`,
reused once the code is gone (issue 29).

Tracebacks, `inspect` and pdb show generated code through `linecache`, so each compiled
graph needs a file name of its own while its function lives. CPython keeps every file name
passed to `compile()` for the life of the process (some 100-200 bytes each): numbering
names afresh made every traced-and-dropped function and every save/load cycle grow memory.
Numbers are therefore recycled: a function's number returns to the pool when the function
is collected (with its linecache entry), and the next compile takes a free one: the
names in use never outnumber the most functions alive at once.
"""

import _thread
import itertools
import linecache
import weakref

from autograph.frames import CODEGEN_PREFIX

_free = []                    # released numbers, reused last-freed first
_fresh = itertools.count()
_lock = _thread.allocate_lock()


def take(graph_name, note=""):
    """(file name, number) for the code of graph `graph_name` about to be compiled."""
    with _lock:
        n = _free.pop() if _free else next(_fresh)
    return f"{CODEGEN_PREFIX} {graph_name} #{n}{note}>", n


def register(filename, number, source, fn):
    """Show `source` as `filename` in linecache while `fn` lives; then free the name."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(fn, _release, filename, number)


def _release(filename, number):
    linecache.cache.pop(filename, None)
    with _lock:
        _free.append(number)


def live():
    """How many names are in use (tests: flat after code is dropped)."""
    global _fresh
    with _lock:
        n = next(_fresh)              # (itertools.count has no peek)
        _fresh = itertools.count(n)
        return n - len(_free)
