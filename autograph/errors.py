"""The errors autograph raises about user programs.

Each message speaks of the user's code: the variable, and (added by the operators layer
through the origin map) the user's file and line.
"""


class AutographError(Exception):
    """Base class of autograph's own errors."""


class StagingError(AutographError, TypeError):
    """The program cannot become a graph as written: a variable is undefined on one path,
    or branches/iterations disagree on a variable's type or structure."""


class ConversionError(AutographError, ValueError):
    """The compiler cannot convert a construct (found while reading the source)."""
