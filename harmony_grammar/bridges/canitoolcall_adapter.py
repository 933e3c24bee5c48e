"""The canitoolcall adapter: the Chat Completions bridge under the neutral tool-call suite.

canitoolcall (PyPI) replays recorded model outputs through an engine's own parser, whole and
in every chunking strategy, and checks the ``content`` / ``reasoning_content`` /
``tool_calls`` a client would get. This adapter is the engine side for harmony-grammar: the
non-streaming parse is :func:`~.chat.to_chat_completion`, the streaming one feeds each group of
token ids to :class:`~.chat.ChatCompletionStream` and accumulates the chunks as a client
library does. Both read leniently with the fixture's tools, as a gateway would.

Run it with canitoolcall's own runner (``canitoolcall run --engine
harmony_grammar.bridges.canitoolcall_adapter:HarmonyGrammarAdapter --family gpt-oss``) or
in-process (tests/bridges/test_canitoolcall.py). It needs the ``canitoolcall`` package (the ``test``
extra); nothing else in harmony-grammar imports this module.

Stop tokens (the suite's adapter rule 5): fixtures end before the stop token that ended
generation. The bridges read a call the output ends inside as a call (servers drop the
``<|call|>``), so nothing is re-appended; a fixture the suite marks ``truncated`` (cut at
``max_tokens``) is closed with ``truncated=True``, as a gateway closes a stream whose
backend reported ``finish_reason: length``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, ClassVar

from canitoolcall.adapters.base import Adapter, ReplayInput, Support, ToolSpec
from canitoolcall.chunking import TokensPerStep
from canitoolcall.results import ParsedToolCall, ParseResult

from ..format.harmony_ids import encode_harmony
from ..format.tokens import FIRST_SPECIAL_ID, LAST_SPECIAL_ID
from .chat import ChatCompletionStream, accumulate, to_chat_completion

__all__ = ["HarmonyGrammarAdapter", "parse_result"]

FAMILY = "gpt-oss"


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("harmony-grammar")
    except PackageNotFoundError:  # a checkout on sys.path, not installed
        return "0+checkout"


def parse_result(response: dict[str, Any]) -> ParseResult:
    """canitoolcall's view of a Chat Completions ``{"message", ...}``."""
    message = response["message"]
    return ParseResult(
        content=message["content"],
        reasoning_content=message["reasoning_content"],
        tool_calls=tuple(
            ParsedToolCall(call["function"]["name"], call["function"]["arguments"])
            for call in message["tool_calls"]
        ),
    )


class HarmonyGrammarAdapter(Adapter):
    """harmony-grammar's Chat Completions bridge as a canitoolcall engine (gpt-oss only)."""

    name: ClassVar[str] = "harmony-grammar"
    pinned_version: ClassVar[str] = _installed_version()
    # A gateway streams whatever its backend coalesced: several ids per delta happen.
    tokens_per_step: ClassVar[TokensPerStep] = "many"
    supports_text_deltas: ClassVar[bool] = True

    def version(self) -> str:
        """The installed harmony-grammar's version."""
        return _installed_version()

    def supports(self, family: str, model: str) -> Support:
        """gpt-oss (Harmony) only: the bridges read no other format."""
        if family == FAMILY:
            return Support(True)
        return Support(False, "harmony-grammar reads the Harmony format (gpt-oss) only")

    def parser_config(self, raw: ReplayInput) -> dict[str, Any]:
        """Every input to the bridge's configuration."""
        return {
            "bridge": "harmony_grammar.bridges.chat (to_chat_completion / ChatCompletionStream)",
            "lenient": True,
            "tools": "the fixture's tools (calls checked against their schemas)",
            "input": "token ids" if raw.token_ids else "encode_harmony(raw_output)",
            "stop_token": "not re-appended",
            "truncated": raw.truncated,
        }

    def units(self, raw: ReplayInput) -> list[int]:
        """The fixture's token ids, else its text encoded (control spellings as their ids)."""
        return list(raw.token_ids) if raw.token_ids else encode_harmony(raw.text)

    def special_token_ids(self, raw: ReplayInput) -> Collection[int]:
        """o200k_harmony's special ids (every control token among them)."""
        return range(FIRST_SPECIAL_ID, LAST_SPECIAL_ID + 1)

    def parse(self, raw: ReplayInput, tools: Sequence[ToolSpec]) -> ParseResult:
        """The whole bridge over the whole output."""
        response = to_chat_completion(
            self.units(raw), tools=list(tools) or None, truncated=raw.truncated
        )
        return parse_result(response)

    def parse_stream(
        self, raw: ReplayInput, chunks: Sequence[Sequence[int]], tools: Sequence[ToolSpec]
    ) -> ParseResult:
        """The stream bridge, one group of ids per step, the chunks accumulated."""
        stream = ChatCompletionStream(tools=list(tools) or None)
        sent = [chunk for group in chunks for chunk in stream.feed_tokens(group)]
        sent += stream.close(truncated=raw.truncated)
        return parse_result(accumulate(sent))

    def parse_stream_text(
        self, raw: ReplayInput, deltas: Sequence[str], tools: Sequence[ToolSpec]
    ) -> ParseResult:
        """The synthetic ``char`` strategies: the raw text in arbitrary pieces, control
        spellings split included (the stream holds a split spelling back until it is whole)."""
        stream = ChatCompletionStream(tools=list(tools) or None)
        sent = [chunk for delta in deltas for chunk in stream.feed(delta)]
        sent += stream.close(truncated=raw.truncated)
        return parse_result(accumulate(sent))
