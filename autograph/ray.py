"""`autograph.ray`: the public name of autograph.distribute.ray (this name is that module)."""

import sys

from autograph.distribute import ray as _adapter

sys.modules[__name__] = _adapter
