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

import functools
import re

from ..format.grammar import header_lexer
from ..format.model import Message, Role
from ..format.tokens import ControlToken

__all__ = ["header_problem"]

_CONSTRAIN = ControlToken.CONSTRAIN.value
_SURROGATE = re.compile("[\ud800-\udfff]")


@functools.cache
def _terminal(name: str) -> re.Pattern[str]:
    """A terminal of harmony.lark, from the grammar itself (never a copy of its pattern)."""
    return header_lexer().terminal_regex(name)


def _bad(value: str, spelled: str, pattern: re.Pattern[str], allowed: str) -> str | None:
    shown = value if len(value) <= 40 else value[:37] + "..."
    if _SURROGATE.search(value):  # no UTF-8 form: as ids it would come back as U+FFFD
        return f"{shown!r} cannot be rendered and read back: it holds a lone surrogate"
    if pattern.fullmatch(spelled):
        return None
    return f"{shown!r} cannot be rendered and read back: {allowed}"


def header_problem(message: Message) -> tuple[str, str] | None:
    """``(field, why)`` for the first header field of ``message`` that the grammar would not
    read back as given, or None when every field is fine."""
    words = "a non-empty word without whitespace or <, |, >"
    tool = message.role is Role.TOOL
    # (field, value, the terminal that reads it back, the text it is read from, allowed)
    checks: list[tuple[str, str | None, str, str, str]] = [
        (
            "name",
            message.name,
            "AUTHOR" if tool else "AUTHOR_NAME",
            "{}",
            f"{words}, =" + (" or :" if tool else ""),
        ),
        ("recipient", message.recipient, "CHANNEL_RECIPIENT", " to={}", words),
        ("channel", message.channel, "CHANNEL_NAME", "{}", "letters, digits, _ and -"),
    ]
    content_type = message.content_type
    if content_type is not None:
        bare = content_type.removeprefix(_CONSTRAIN)
        allowed = "letters, digits and _ . + / - (no =)"
        checks.append(("content_type", bare, "CONTENT_TYPE", "{}", allowed))
    for field, value, terminal, spelled, allowed in checks:
        if value is not None:
            why = _bad(value, spelled.format(value), _terminal(terminal), allowed)
            if why is not None:
                return field, why
    return None
