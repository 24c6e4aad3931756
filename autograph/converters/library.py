"""What counts as library code: never converted, called as it is (see autograph.frames,
where it lives so that calling converted code needs no part of the compiler)."""

from autograph.frames import _LIBRARY_ROOTS, library_dirs  # noqa: F401
from autograph.frames import module_is_library as _module_is_library  # noqa: F401
from autograph.frames import value_is_library as is_library

__all__ = ["is_library"]
