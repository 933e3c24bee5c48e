"""One base for the str enums of the data model: a member is its value, and prints as it."""

from __future__ import annotations

import enum
import sys

__all__ = ["StrEnum"]

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # pragma: no cover - Python 3.10: the standard library's, as 3.11 defines it

    class StrEnum(str, enum.Enum):
        """A ``str`` enum whose members print (``str``, ``format``) as their value."""

        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return str(self.value).__format__(spec)
