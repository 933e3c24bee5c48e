"""Chat Completions out: a completion as ``chat.completion.chunk`` s, or as one message.

:class:`ChatCompletionStream` turns a streamed completion into chunks;
:func:`to_chat_completion` is that stream fed the whole completion and closed, with the
chunks accumulated as a client library does, so the whole message always equals what the
stream sent (harmony-format.md §4 for the mapping). The request side (a Chat Completions
request body to a conversation) is rendering's:
:func:`~harmony_grammar.rendering.chat.from_chat_completions`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..format.events import HeaderComplete
from ..format.model import Message, Severity
from ..format.options import ParseKeywords, ParseOptions
from ..rendering.chat import ChatCompletionError
from .stream import BridgeStream, bridge_options, feed_whole

if TYPE_CHECKING:
    from typing_extensions import Unpack
from .turn import FUNCTION_CALL, MESSAGE, call_name

__all__ = ["ChatCompletionStream", "accumulate", "random_call_id", "to_chat_completion"]

_FIELDS = ("content", "reasoning_content")


def random_call_id(index: int) -> str:
    """A fresh call id in OpenAI's shape (``call_`` and 24 hex digits); ``index`` is unused."""
    return f"call_{secrets.token_hex(12)}"


class ChatCompletionStream(BridgeStream):
    """Chat Completions chunks (``chat.completion.chunk``) for a streamed completion.

    The first chunk says ``role: assistant``; analysis (and built-in tool calls) stream as
    ``delta.reasoning_content``, final answers and preambles as ``delta.content`` (a later
    message of either opens with ``"\\n"``: the non-empty texts are joined by a newline, and
    an empty message adds nothing). A ``functions.*`` call is sent in one chunk once its
    message has ended, ``delta.tool_calls[i]`` with its id, name and whole ``arguments``
    (verbatim): a call the output was cut inside (``close(truncated=True)``) is never sent,
    so a client never holds half a call. :meth:`close` sends ``finish_reason``
    (``tool_calls``, ``stop`` or ``length``, :func:`~.turn.finish_reason`). The parse
    options are one :class:`~harmony_grammar.format.options.ParseOptions` and its fields as
    keywords (:func:`~.stream.bridge_options`: a completion, lenient unless ``lenient=False``);
    :attr:`diagnostics` lists what it found. ``id_factory(index)``
    makes the call ids (default ``call_`` + 24 random hex digits). ``stripped_dialect`` is
    as for :func:`~harmony_grammar.parse`: token ids are read as the stripped dialect only
    when it is True (ids that went through a detokenizer and back). A call into one of
    ``namespaces`` (``to=NAMESPACE.fn``) is a tool call named ``NAMESPACE.fn``. A call to one of the
    ``custom`` recipients (custom tools, :attr:`~harmony_grammar.declarations.ToolSet.custom`) is
    sent as ``{"type": "custom", "custom": {"name", "input"}}``, its raw input verbatim.
    """

    def __init__(
        self,
        options: ParseOptions | None = None,
        *,
        model: str = "gpt-oss",
        completion_id: str | None = None,
        created: int | None = None,
        id_factory: Callable[[int], str] | None = None,
        namespaces: Iterable[str] = (),
        custom: Iterable[str] = (),
        **keywords: Unpack[ParseKeywords],
    ) -> None:
        super().__init__(bridge_options(options, keywords), namespaces)
        self._custom = frozenset(custom)
        self._base = {
            "id": completion_id or f"chatcmpl-{secrets.token_hex(12)}",
            "object": "chat.completion.chunk",
            "created": created if created is not None else int(time.time()),
            "model": model,
        }
        self._make_id = id_factory or random_call_id
        self._opened = False
        # Whether each field has text yet, and whether the current message has written any:
        # a message's first non-empty delta carries the "\n" separator, an empty one adds
        # nothing.
        self._has_text = dict.fromkeys(_FIELDS, False)
        self._message_started = False

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        return {**self._base, "choices": [choice]}

    def _on_open(self) -> list[dict[str, Any]]:
        if self._opened:
            return []
        self._opened = True
        return [self._chunk({"role": "assistant"})]

    def _on_header(self, event: HeaderComplete) -> list[dict[str, Any]]:
        self._message_started = False
        return []  # text opens at its first non-empty delta; a call when its message ends

    def _on_delta(self, text: str) -> list[dict[str, Any]]:
        if self.kind == FUNCTION_CALL:
            return []  # sent whole when the message ends
        field = "content" if self.kind == MESSAGE else "reasoning_content"
        if not self._message_started:
            self._message_started = True
            text = ("\n" if self._has_text[field] else "") + text
            self._has_text[field] = True
        return [self._chunk({field: text})]

    def _on_message_end(self, message: Message, cut: bool) -> list[dict[str, Any]]:
        if self.kind != FUNCTION_CALL or cut:
            return []
        index = self.calls - 1
        name = call_name(message.recipient)
        call: dict[str, Any] = {"index": index, "id": self._make_id(index)}
        if message.recipient in self._custom:
            call.update(type="custom", custom={"name": name, "input": message.content})
        else:
            call.update(type="function", function={"name": name, "arguments": message.content})
        return [self._chunk({"tool_calls": [call]})]

    def close(self, *, truncated: bool = False) -> list[dict[str, Any]]:
        """End of output: the remaining chunks, then the one with ``finish_reason``.

        ``truncated=True`` says generation stopped at the token limit (``max_tokens``), not
        at a stop token: the finish reason is ``length`` and a call the output ends inside is
        dropped (the diagnostics still report it: HG153).
        """
        if self.closed:
            return []
        out = self._end(truncated)
        return [*out, self._chunk({}, self.finish)]

    @property
    def diagnostics(self) -> list[dict[str, Any]]:
        """What the parse found or repaired so far, JSON-ready."""
        return [d.to_dict() for d in self.parse_diagnostics()]


def accumulate(chunks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The ``{"message", "finish_reason"}`` that ``chunks`` add up to, as a client library
    accumulates them: the one fold of Chat Completions chunks (the gateway's whole answer,
    :func:`~harmony_grammar.gateway.chat.serving.chat_completion`, is this fold too).

    Texts are concatenated (``content`` and ``reasoning_content``, None when no chunk had
    any); each call is keyed by its ``index``, its first chunk giving the id, type and name,
    every chunk adding to its ``arguments`` (``tool_calls`` is always a list, in index order);
    a custom call (``{"type": "custom", "custom": {"name", "input"}}``) comes whole and is
    kept whole.
    Chunks without choices (a usage chunk, an error chunk) add nothing; only choice 0 is read.
    """
    texts: dict[str, list[str]] = {field: [] for field in _FIELDS}
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice["delta"]
            for field in _FIELDS:
                texts[field].append(delta.get(field) or "")
            for call in delta.get("tool_calls") or ():
                function = call.get("function") or {}
                known = calls.get(call["index"])
                if known is None and "custom" in call:
                    # A custom call is sent whole, in one chunk: kept as it came.
                    calls[call["index"]] = {
                        "id": call.get("id"),
                        "type": call.get("type", "custom"),
                        "custom": dict(call["custom"]),
                    }
                elif known is None:
                    calls[call["index"]] = {
                        "id": call.get("id"),
                        "type": call.get("type", "function"),
                        "function": {
                            "name": function.get("name"),
                            "arguments": function.get("arguments") or "",
                        },
                    }
                else:
                    known["function"]["arguments"] += function.get("arguments") or ""
            finish = choice["finish_reason"] or finish
    message: dict[str, Any] = {"role": "assistant"}
    message.update({field: "".join(parts) or None for field, parts in texts.items()})
    message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return {"message": message, "finish_reason": finish}


def to_chat_completion(
    source: str | Sequence[int],
    options: ParseOptions | None = None,
    *,
    id_factory: Callable[[int], str] | None = None,
    truncated: bool = False,
    **keywords: Unpack[ParseKeywords],
) -> dict[str, Any]:
    """The Chat Completions response for a completion (text or ids after ``<|start|>assistant``).

    Returns ``{"message": {"role", "content", "reasoning_content", "tool_calls"},
    "finish_reason"}``: exactly what :class:`ChatCompletionStream` streams for the same
    output (it is that stream fed everything and closed, the chunks accumulated), with the
    same arguments and defaults. ``content`` and ``reasoning_content`` are None when empty;
    ``tool_calls`` is always a list. ``finish_reason`` is ``tool_calls`` when a call was made
    (also one whose ``<|call|>`` was dropped), ``stop`` when it ended otherwise (after
    ``<|return|>`` or ``<|end|>``, or inside a message whose stop token the engine or server
    dropped or stripped, an empty output too), ``length`` only when ``truncated`` says it
    stopped at the token limit.

    The parse is lenient (the usual model deviations repaired) unless ``lenient=False``; the
    diagnostics are returned under ``"diagnostics"`` (``Diagnostic.to_dict()`` each), a key present
    only when there are any. A lenient read never raises on bad output. ``lenient=False`` raises
    :class:`ChatCompletionError` for the first error the parser reports. ``tools`` (the request's)
    makes a call to an undeclared function, or arguments no valid document can follow, an error.
    """
    opts = bridge_options(options, keywords)
    stream = ChatCompletionStream(opts, id_factory=id_factory)
    chunks = feed_whole(stream, source, "to_chat_completion()")
    chunks += stream.close(truncated=truncated)
    diagnostics = stream.parse_diagnostics()
    error = next((d for d in diagnostics if d.severity is Severity.ERROR), None)
    if not opts.lenient and error is not None:
        where = (
            f"line {error.line}, column {error.column}" if error.line else f"token {error.start}"
        )
        raise ChatCompletionError(f"{error.code} at {where}: {error.message}")
    response = accumulate(chunks)
    if diagnostics:
        response["diagnostics"] = [d.to_dict() for d in diagnostics]
    return response
