"""Header fields the parser can read back: the renderer refuses any other.

A header is a few words between control tokens, and the grammar's terminals
(``grammars/harmony.lark``) say which characters each word may hold: no whitespace, never
the ``<``, ``|`` and ``>`` of a control-token spelling, no ``=`` in an author, and channel
names and content types from small alphabets. A field outside its terminal would render as
text the parser reads differently (a recipient ``"f g"`` ends the header at the space and
the message is dropped with HG100), so ``parse(render(c))`` would not give ``c`` back. A
lone surrogate is refused too: it has no UTF-8 form, so rendered as ids it would read back
as U+FFFD.
"""

from __future__ import annotations

import re

from ..format.model import Message, Role
from ..format.tokens import ControlToken

__all__ = ["header_problem"]

# The grammar's terminals, anchored (AUTHOR, AUTHOR_NAME, _TO, CHANNEL_NAME, CONTENT_TYPE).
_TOOL_AUTHOR = re.compile(r"[^\s:<>|=]+")
_AUTHOR_NAME = re.compile(r"[^\s<>|=]+")
_RECIPIENT = re.compile(r"[^\s<>|]+")
_CHANNEL = re.compile(r"[A-Za-z0-9_\-]+")
_CONTENT_TYPE = re.compile(r"(?![A-Za-z0-9_.+/\-]*=)[A-Za-z0-9_.+/\-]+")
_CONSTRAIN = ControlToken.CONSTRAIN.value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _bad(value: str, pattern: re.Pattern[str], allowed: str) -> str | None:
    shown = value if len(value) <= 40 else value[:37] + "..."
    if _SURROGATE.search(value):  # no UTF-8 form: as ids it would come back as U+FFFD
        return f"{shown!r} cannot be rendered and read back: it holds a lone surrogate"
    if pattern.fullmatch(value):
        return None
    return f"{shown!r} cannot be rendered and read back: {allowed}"


def header_problem(message: Message) -> tuple[str, str] | None:
    """``(field, why)`` for the first header field of ``message`` that the grammar would not
    read back as given, or None when every field is fine."""
    words = "a non-empty word without whitespace or <, |, >"
    checks: list[tuple[str, str | None, re.Pattern[str], str]] = [
        (
            "name",
            message.name,
            _TOOL_AUTHOR if message.role is Role.TOOL else _AUTHOR_NAME,
            f"{words}, =" + (" or :" if message.role is Role.TOOL else ""),
        ),
        ("recipient", message.recipient, _RECIPIENT, words),
        ("channel", message.channel, _CHANNEL, "letters, digits, _ and -"),
    ]
    content_type = message.content_type
    if content_type is not None:
        bare = content_type.removeprefix(_CONSTRAIN)
        checks.append(("content_type", bare, _CONTENT_TYPE, "letters, digits and _ . + / - (no =)"))
    for field, value, pattern, allowed in checks:
        if value is not None:
            why = _bad(value, pattern, allowed)
            if why is not None:
                return field, why
    return None
