"""The compiler's exceptions: one base class, and its subclass for schemas that are not valid."""

from __future__ import annotations

from ..base.errors import HarmonyGrammarError

__all__ = ["InvalidSchemaError", "UnsupportedSchemaError"]


class UnsupportedSchemaError(HarmonyGrammarError, ValueError):
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


class InvalidSchemaError(UnsupportedSchemaError):
    """The schema is not a valid JSON Schema (its meta-schema rejects it, or a number in it is
    not finite).

    ``keyword`` names the offending keyword (``""`` when the schema itself is not an object
    or a boolean) and ``pointer`` is the JSON pointer of the offending *value* inside the
    schema document (``/required/0`` for ``{"required": [5]}``). A subclass of
    :class:`UnsupportedSchemaError`, so one ``except`` handles every schema the compiler
    turns down.
    """

    def __init__(self, keyword: str, pointer: str, reason: str = "") -> None:
        super().__init__(keyword, pointer, reason)
        where = pointer or "/"
        name = f" {keyword!r}" if keyword else ""
        detail = f": {reason}" if reason else ""
        ValueError.__init__(self, f"invalid schema: keyword{name} at {where}{detail}")
