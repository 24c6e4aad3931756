"""Logging of what autograph does: conversions and traces (autograph.config holds it: a
first call loads one module for both; these names stay here too).

Verbosity 0 (the default) is silent; 1 logs each conversion and trace; 2 also logs the
generated code and graph sizes; 3 and up logs everything. Set it with the environment
variable AUTOGRAPH_VERBOSITY or `ag.set_verbosity(level)`. Messages go to the standard
`logging` logger named "autograph" (stderr when nothing else is configured).
"""

from autograph import config
from autograph.config import _logger, get_verbosity, log, set_verbosity  # noqa: F401


def __getattr__(name):
    if name == "logger":   # imported on first use: a silent process never loads logging
        return _logger()
    if name == "_verbosity":
        return config._verbosity
    raise AttributeError(f"module 'autograph.log' has no attribute {name!r}")
