"""The compiler's one exception."""

from __future__ import annotations

__all__ = ["UnsupportedSchemaError"]


class UnsupportedSchemaError(ValueError):
    """The schema uses something the compiler cannot express exactly.

    ``keyword`` names the refused keyword and ``pointer`` is the JSON pointer of the schema
    that holds it (``""`` for the root), so a caller can report or aggregate refusals.
    """

    def __init__(self, keyword: str, pointer: str, reason: str = "") -> None:
        self.keyword = keyword
        self.pointer = pointer
        self.reason = reason
        where = pointer or "/"
        detail = f": {reason}" if reason else ""
        super().__init__(f"unsupported keyword {keyword!r} at {where}{detail}")
