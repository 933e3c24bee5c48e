"""The shipped adapters (this project's parser and renderer) and loading ``module:function``.

The interface they speak is in :mod:`.interface`; :mod:`.oracle` wraps openai-harmony and is
imported only when asked for by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..base.errors import HarmonyGrammarError
from ..format.model import Message, ParseResult, Severity
from ..format.parser import parse
from ..format.stream import StreamParser
from ..rendering.renderer import render
from .interface import Adapter, Json
from .requests import render_request

__all__ = [
    "ADAPTERS",
    "AdapterLoadError",
    "harmony_grammar_adapter",
    "load_adapter",
    "message_fields",
    "render_with_harmony_grammar",
]


class AdapterLoadError(HarmonyGrammarError, ValueError):
    """``--impl`` names no shipped adapter and no importable ``module:function``."""


def message_fields(message: Message) -> Json:
    """A parsed message as the suite spells it (:data:`~.interface.MESSAGE_FIELDS`)."""
    return {
        "role": message.role.value,
        "name": message.name,
        "recipient": message.recipient,
        "channel": message.channel,
        "content_type": message.content_type,
        "content": message.content,
        "terminator": message.terminator.value if message.terminator else None,
        **({"unread": message.unread} if message.unread else {}),
    }


def _response(result: ParseResult, unit: str) -> Json:
    response: Json = {
        "valid": result.ok,
        "messages": [message_fields(m) for m in result.messages],
        "codes": [d.code for d in result.diagnostics],
    }
    first = next((d for d in result.diagnostics if d.severity is Severity.ERROR), None)
    if first is not None:
        response["error"] = {unit: first.start}
    if result.next_turn is not None:
        response["next_turn"] = result.next_turn
    return response


def _stream(request: Mapping[str, Any], options: Mapping[str, Any]) -> tuple[ParseResult, str]:
    parser = StreamParser(**options)
    if "chunks" in request:
        for chunk in request["chunks"]:
            parser.feed(chunk)
        unit = "offset"
    elif "token_chunks" in request:
        for ids in request["token_chunks"]:
            parser.feed_tokens(ids)
        unit = "token"
    elif "text" in request:
        parser.feed(request["text"])
        unit = "offset"
    else:
        parser.feed_tokens(request["tokens"])
        unit = "token"
    parser.close()
    return parser.result(), unit


def harmony_grammar_adapter(source: str = "text") -> Adapter:
    """This project's parser and renderer as an adapter.

    ``source`` picks what it reads: ``"text"`` (the case's text; its ids when it has no text),
    ``"tokens"`` (the case's ids; the text when it has none: a text-only case holds what only
    text says, the stripped dialect, which token ids never read by default) or ``"stream"``
    (:class:`~harmony_grammar.format.stream.StreamParser`, fed the case's chunks when it has
    them, else the whole input in one call).
    """
    if source not in ("text", "tokens", "stream"):
        raise ValueError(f"source must be text, tokens or stream, not {source!r}")

    def adapter(request: Json) -> Json:
        if request["kind"] == "render":
            return render_with_harmony_grammar(request)
        options: dict[str, Any] = {
            "start": request["mode"],
            "role": request.get("role", "assistant"),
            "lenient": not request["strict"],  # the protocol says strict (as openai-harmony)
            "tools": request.get("tools"),
        }
        if source == "stream":
            result, unit = _stream(request, options)
        elif "tokens" in request and (source == "tokens" or "text" not in request):
            result, unit = parse(request["tokens"], **options), "token"
        else:
            result, unit = parse(request["text"], **options), "offset"
        return _response(result, unit)

    return adapter


def render_with_harmony_grammar(request: Mapping[str, Any]) -> Json:
    """A render request answered by :func:`harmony_grammar.rendering.renderer.render`, in
    the request's ``profile``."""
    conversation, options = render_request(request)
    return {
        "text": render(conversation, options),
        "tokens": render(conversation, options, tokens=True),
    }


def _openai_harmony() -> Adapter:
    # Imported here: openai-harmony is an optional oracle, never needed to run our own adapters.
    from .oracle import openai_harmony_adapter

    return openai_harmony_adapter()


def _oss_harmony() -> Adapter:
    from .references import ReferenceUnavailable, oss_harmony_adapter

    try:
        return oss_harmony_adapter()
    except ReferenceUnavailable as exc:
        raise AdapterLoadError(str(exc)) from None


def _hf_chat_template() -> Adapter:
    from .references import ReferenceUnavailable, hf_template_adapter

    try:
        return hf_template_adapter()
    except ReferenceUnavailable as exc:
        raise AdapterLoadError(str(exc)) from None


#: The shipped adapters by name (``--impl NAME``); each entry builds the adapter.
ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "harmony-grammar": lambda: harmony_grammar_adapter("text"),
    "harmony-grammar-tokens": lambda: harmony_grammar_adapter("tokens"),
    "harmony-grammar-stream": lambda: harmony_grammar_adapter("stream"),
    "openai-harmony": _openai_harmony,
    "oss-harmony": _oss_harmony,
    "hf-chat-template": _hf_chat_template,
}


def load_adapter(spec: str, names: Sequence[str] = ()) -> Adapter:
    """The adapter ``spec`` names: a shipped one (:data:`ADAPTERS`) or ``module:function``.

    A ``module:function`` is imported and must be callable; it is used as the adapter itself.
    """
    if spec in ADAPTERS:
        return ADAPTERS[spec]()
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        known = ", ".join([*ADAPTERS, *names])
        raise AdapterLoadError(
            f"unknown implementation {spec!r}: use one of {known}, or a module:function"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AdapterLoadError(f"cannot import {module_name!r}: {exc}") from None
    function = getattr(module, attribute, None)
    if not callable(function):
        raise AdapterLoadError(f"{module_name!r} has no callable {attribute!r}")
    adapter: Adapter = function
    return adapter
