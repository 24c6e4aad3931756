"""`autograph.function.trace_type` is `autograph.runtime.trace_type` (one module, two names).

The trace keys moved to the runtime so that loading a saved model, which matches calls
against the keys saved with each trace, does not import the tracing machinery of
`autograph.function` (this package's `__init__`). Code and tests that import or patch the
old name get the same module object.
"""

import sys

from autograph.runtime import trace_type as _module

sys.modules[__name__] = _module
