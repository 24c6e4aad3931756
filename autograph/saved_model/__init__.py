"""Saved models: traced graphs, Variables and the object tree, written as JSON + .npz and
loaded anywhere without the source (docs/saved_model.md).

    ag.saved_model.save(obj, export_dir, signatures=None)
    obj = ag.saved_model.load(export_dir)
    data = ag.saved_model.to_bytes(obj_or_function); ag.saved_model.from_bytes(data)

Loading never unpickles, evaluates or imports anything the files name (load.py).
"""

from autograph.saved_model.format import (  # noqa: F401
    DEFAULT_LIMITS, FORMAT_VERSION, Limits, SavedModelError)
from autograph.saved_model.load import from_bytes, load  # noqa: F401
from autograph.saved_model.loop_limit import LoopLimitError  # noqa: F401
from autograph.saved_model.save import save, to_bytes  # noqa: F401

__all__ = ["save", "load", "to_bytes", "from_bytes", "Limits", "SavedModelError", "LoopLimitError",
           "FORMAT_VERSION", "DEFAULT_LIMITS"]
