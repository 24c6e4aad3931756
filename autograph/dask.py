"""`autograph.dask`: the public name of autograph.distribute.dask (this name is that module)."""

import sys

from autograph.distribute import dask as _adapter

sys.modules[__name__] = _adapter
