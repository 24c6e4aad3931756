"""Logging of what autograph does: conversions and traces.

Verbosity 0 (the default) is silent; 1 logs each conversion and trace; 2 also logs the
generated code and graph sizes; 3 and up logs everything. Set it with the environment
variable AUTOGRAPH_VERBOSITY or `ag.set_verbosity(level)`. Messages go to the standard
`logging` logger named "autograph" (stderr when nothing else is configured).
"""

import os
import sys

try:
    _verbosity = int(os.environ.get("AUTOGRAPH_VERBOSITY", "0"))
except ValueError:
    _verbosity = 0


def __getattr__(name):
    if name == "logger":   # imported on first use: a silent process never loads logging
        return _logger()
    raise AttributeError(f"module 'autograph.log' has no attribute {name!r}")


def _logger():
    import logging
    return logging.getLogger("autograph")


def set_verbosity(level, alsologtostdout=False):
    """Log conversions and traces from now on (0 silences; higher is chattier)."""
    global _verbosity
    _verbosity = int(level)
    if alsologtostdout:
        import logging
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("autograph: %(message)s"))
        _logger().addHandler(handler)


def get_verbosity():
    return _verbosity


def log(level, msg, *args):
    """Log `msg % args` if the verbosity is at least `level` (cheap when it is not)."""
    if _verbosity >= level:
        import logging
        logger = _logger()
        if not logger.handlers and not logging.getLogger().handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("autograph: %(message)s"))
            logger.addHandler(handler)
            logger.propagate = False
        logger.setLevel(logging.DEBUG)
        logger.info(msg, *args)
