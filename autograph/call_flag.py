"""One process-wide flag that the call fast paths read instead of three thread-local checks.

A steady-state `ag.function` call may skip binding and tracing only when, on the calling
thread, no `with ag.device(...)` scope is open, no graph is being built (the call would be
inlined into it) and `ag.config.run_functions_eagerly` is off. Asking the two thread-local
stacks and the config flag costs ~140 ns per call; reading one module-level list costs ~10.

`BUSY` holds one entry per open device scope and per graph being built, in any thread, plus
one while run_functions_eagerly(True) is set. Those places append on entry and pop in their
`finally`/`__exit__` (list.append and list.pop are atomic; the entries are all alike, so
which one a pop removes does not matter). A fast path runs at once when BUSY is empty: then
the calling thread cannot be inside a scope or a trace of its own. When it is not empty
(some thread somewhere traces or holds a scope), the fast path asks the thread-local state
exactly, as before: correct for every thread, just ~130 ns slower while that lasts.
"""

BUSY = []
