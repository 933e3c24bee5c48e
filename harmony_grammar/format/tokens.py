"""The Harmony control tokens: the one place in the project that knows their spellings and ids.

Every other module (the lexers, the renderer, the grammar exporters, the leak detector) asks
this module, so a spelling or an id is written down exactly once.
"""

from __future__ import annotations

import re

from ..base.enums import StrEnum

__all__ = [
    "BARE_CONTENT_TYPES",
    "CHANNELS",
    "CHANNEL_WORD",
    "CONTROL_SPELLINGS",
    "CONTROL_SPELLING_RE",
    "FIRST_SPECIAL_ID",
    "GLUED_CONTENT_TYPES",
    "STOP_TOKENS",
    "TERMINATORS",
    "ControlToken",
    "special_token_spelling",
]

#: Harmony's channels, as gpt-oss was trained on them (the system message's default list).
CHANNELS = ("analysis", "commentary", "final")
#: A regex alternation of :data:`CHANNELS`, for patterns that look for a channel word.
CHANNEL_WORD = "(?:" + "|".join(CHANNELS) + ")"
#: The content types gpt-oss writes after ``<|constrain|>`` (``json``; ``response`` where it
#: answers through a call, LM Studio's shape) or bare (``code`` for ``python``): the words a
#: header holds as its content type even when it lost ``<|constrain|>`` or ``<|message|>``.
BARE_CONTENT_TYPES = frozenset({"json", "code", "response"})
#: Of those, the ones read apart when glued onto a recipient (``to=functions.fjson{``,
#: ``to=functions.message_agentresponse{``, HG154). ``code`` is not: it ends too many
#: names (``zipcode``).
GLUED_CONTENT_TYPES = ("json", "response")

#: o200k_base's ordinary ranks are 0..199997; every id from here on is a special token.
FIRST_SPECIAL_ID = 199998
#: The last id of the o200k_harmony special block (``<|reserved_201087|>``).
LAST_SPECIAL_ID = 201087


class ControlToken(StrEnum):
    """A structural Harmony token; the value is its literal spelling.

    ``ControlToken.START == "<|start|>"`` holds, and ``ControlToken.START.id`` is its id in
    o200k_harmony. ``ControlToken.START.terminal`` is its terminal name in
    ``grammars/harmony.lark``.
    """

    START = "<|start|>"
    END = "<|end|>"
    MESSAGE = "<|message|>"
    CHANNEL = "<|channel|>"
    CONSTRAIN = "<|constrain|>"
    RETURN = "<|return|>"
    CALL = "<|call|>"

    @property
    def id(self) -> int:
        """The special token id in o200k_harmony."""
        return _IDS[self]

    @property
    def terminal(self) -> str:
        """The terminal's name in the Lark grammar (``START``, ``END``, ...)."""
        return self.name

    @classmethod
    def from_id(cls, token_id: int) -> ControlToken | None:
        """The control token with this id, or None for any other id."""
        return _BY_ID.get(token_id)

    @classmethod
    def from_spelling(cls, spelling: str) -> ControlToken:
        """The control token spelled exactly so (raises KeyError otherwise)."""
        return _BY_SPELLING[spelling]


_IDS: dict[ControlToken, int] = {
    ControlToken.RETURN: 200002,
    ControlToken.CONSTRAIN: 200003,
    ControlToken.CHANNEL: 200005,
    ControlToken.START: 200006,
    ControlToken.END: 200007,
    ControlToken.MESSAGE: 200008,
    ControlToken.CALL: 200012,
}
_BY_ID: dict[int, ControlToken] = {token_id: token for token, token_id in _IDS.items()}
_BY_SPELLING: dict[str, ControlToken] = {token.value: token for token in ControlToken}

#: Tokens that end a message.
TERMINATORS: frozenset[ControlToken] = frozenset(
    {ControlToken.END, ControlToken.CALL, ControlToken.RETURN}
)
#: ``stop_tokens_for_assistant_actions``: a host must stop generating at either.
STOP_TOKENS: frozenset[ControlToken] = frozenset({ControlToken.CALL, ControlToken.RETURN})

#: The spellings of the structural control tokens.
CONTROL_SPELLINGS: frozenset[str] = frozenset(token.value for token in ControlToken)

#: Matches any structural control-token spelling in text (longest names first is not needed:
#: the spellings are delimited by ``<|`` and ``|>``).
CONTROL_SPELLING_RE = re.compile("|".join(re.escape(token.value) for token in ControlToken))

_NAMED_SPECIALS = {199998: "<|startoftext|>", 199999: "<|endoftext|>", 200018: "<|endofprompt|>"}


def special_token_spelling(token_id: int) -> str:
    """The spelling tiktoken gives any id of the o200k_harmony special block."""
    control = _BY_ID.get(token_id)
    if control is not None:
        return control.value
    return _NAMED_SPECIALS.get(token_id, f"<|reserved_{token_id}|>")
