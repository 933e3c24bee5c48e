"""openai-harmony (the reference implementation) as a conformance adapter, offline.

openai-harmony reads token ids only and its vocabulary from ``TIKTOKEN_ENCODINGS_BASE``; this
module gives it the same verified ``o200k_base.tiktoken`` our loader uses (written to a
temporary folder unless the variable is already set), so nothing is downloaded. The package
is imported on first use: it is an oracle, never needed to run our own adapters.

How its behaviour maps onto the suite's request and response:

* ``mode``: ``completion`` parses with ``role`` known (its ``StreamableParser(enc, role)``);
  ``conversation`` with no role; ``prompt`` has no counterpart, so a trailing
  ``<|start|>{role}`` is cut off and reported as ``next_turn``, and the rest is parsed as a
  conversation.
* ``strict``: passed through (``StreamableParser(..., strict=...)``).
* ``error``: ids are fed one at a time, so the first ``HarmonyError`` is placed at the index
  of the id that raised it (``len(tokens)`` when it is raised at the end of input).
* ``terminator``: openai-harmony's messages do not record it; it is the id whose processing
  completed the message (``None`` when the end of input did).
* no ``codes``: they are harmony-grammar's own.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from typing import Any

from ..format.harmony_ids import encode_harmony
from ..format.tokens import ControlToken
from ..format.vocabulary import find_vocabulary
from ..rendering.interop import to_openai_harmony
from .interface import Adapter, Json
from .requests import render_request, requested_profile

__all__ = ["harmony_encoding", "installed_renderer", "openai_harmony_adapter", "serve"]

_ENCODINGS_BASE = "TIKTOKEN_ENCODINGS_BASE"
_TERMINATORS = {
    ControlToken.END.id: "end",
    ControlToken.CALL.id: "call",
    ControlToken.RETURN.id: "return",
}


@functools.cache
def harmony_encoding() -> Any:
    """openai-harmony's ``HARMONY_GPT_OSS`` encoding, loaded from the offline vocabulary."""
    import openai_harmony as oh

    if not os.environ.get(_ENCODINGS_BASE):
        folder = Path(tempfile.mkdtemp(prefix="harmony-grammar-vocab-"))
        (folder / "o200k_base.tiktoken").write_bytes(find_vocabulary().data)
        os.environ[_ENCODINGS_BASE] = str(folder)
    return oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)


def _fields(message: Any, terminator: str | None) -> Json:
    role = message.author.role.value
    return {
        "role": role,
        "name": message.author.name,
        "recipient": message.recipient,
        "channel": message.channel,
        "content_type": message.content_type,
        "content": "".join(getattr(part, "text", "") for part in message.content),
        "terminator": terminator,
    }


def _split_prompt(encoding: Any, ids: list[int]) -> tuple[list[int], str | None]:
    """A prompt's ids without the trailing ``<|start|>{role}``, and that role."""
    start = ControlToken.START.id
    if start not in ids:
        return ids, None
    at = len(ids) - 1 - ids[::-1].index(start)
    tail = ids[at + 1 :]
    if any(encoding.is_special_token(t) for t in tail):
        return ids, None
    return ids[:at], encoding.decode_utf8(tail) if tail else ""


def _parse(oh: Any, encoding: Any, request: Json) -> Json:
    ids = list(request["tokens"]) if "tokens" in request else encode_harmony(request["text"])
    response: Json = {}
    role = None
    if request["mode"] == "completion":
        role = oh.Role(request.get("role", "assistant"))
    elif request["mode"] == "prompt":
        ids, next_turn = _split_prompt(encoding, ids)
        if next_turn is not None:
            response["next_turn"] = next_turn
    parser = oh.StreamableParser(encoding, role, strict=request["strict"])
    terminators: list[str | None] = []
    at = 0
    try:
        for at, token in enumerate(ids):  # noqa: B007 (at is read after the loop)
            parser.process(token)
            while len(terminators) < len(parser.messages):
                terminators.append(_TERMINATORS.get(token))
        at = len(ids)
        parser.process_eos()
    except (oh.HarmonyError, TypeError):
        # TypeError: the binding refuses an id that is not an integer; that is a rejection
        # of the input at that id, like any HarmonyError.
        response.update(valid=False, error={"token": at})
    else:
        response["valid"] = True
    messages = list(parser.messages)
    terminators += [None] * (len(messages) - len(terminators))
    response["messages"] = [_fields(m, t) for m, t in zip(messages, terminators, strict=True)]
    return response


def _render(oh: Any, encoding: Any, request: Json) -> Json:
    ours, options = render_request(request)
    conversation = to_openai_harmony(ours)
    config = oh.RenderConversationConfig(auto_drop_analysis=options.drops_analysis)
    mode = request["mode"]
    if mode == "prompt":
        next_turn = oh.Role(request.get("next_turn", "assistant"))
        ids = encoding.render_conversation_for_completion(conversation, next_turn, config)
    elif mode == "training":
        ids = encoding.render_conversation_for_training(conversation, config)
    else:
        ids = encoding.render_conversation(conversation, config)
    return {"text": encoding.decode_utf8(ids), "tokens": list(ids)}


def _render_messages(oh: Any, encoding: Any, request: Json) -> Json:
    """Harmony messages as given (``message_fields`` dicts), rendered with no dropping: how
    the profiles' tests reach header fields no Chat Completions request can carry."""
    messages = [
        oh.Message(
            author=oh.Author(role=oh.Role(m["role"]), name=m.get("name")),
            content=[oh.TextContent(text=m["content"])],
            channel=m.get("channel"),
            recipient=m.get("recipient"),
            content_type=m.get("content_type"),
        )
        for m in request["messages"]
    ]
    config = oh.RenderConversationConfig(auto_drop_analysis=False)
    ids = encoding.render_conversation(oh.Conversation(messages=messages), config)
    return {"text": encoding.decode_utf8(ids), "tokens": list(ids)}


def installed_renderer() -> str:
    """The profile of the ``openai_harmony`` module installed here: openai-harmony 0.0.8 or
    its fork oss-harmony 0.0.11 (both install that module), by distribution and version."""
    from importlib import metadata

    for distribution, profile in _DISTRIBUTIONS:
        try:
            version = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            continue
        return profile if profile.endswith(version) else f"{distribution}-{version}"
    raise ImportError("neither openai-harmony nor oss-harmony is installed")


#: The distributions that install ``openai_harmony``, and the profile each one renders.
_DISTRIBUTIONS = (("oss-harmony", "oss-harmony-0.0.11"), ("openai-harmony", "openai-harmony-0.0.8"))


def openai_harmony_adapter() -> Adapter:
    """The installed ``openai_harmony`` as an adapter (see the module docstring for the
    mapping): openai-harmony 0.0.8, or oss-harmony 0.0.11 in an environment of its own. It
    renders only the requests for its own profile."""
    import openai_harmony as oh

    encoding = harmony_encoding()
    profile = installed_renderer()

    def adapter(request: Json) -> Json:
        if request["kind"] == "render":
            requested_profile(request, profile)
            return _render(oh, encoding, request)
        if request["kind"] == "render_messages":  # the profiles' tests (see _render_messages)
            requested_profile(request, profile)
            return _render_messages(oh, encoding, request)
        return _parse(oh, encoding, request)

    return adapter


def serve() -> None:
    """Answer requests, one JSON line each on stdin, with :func:`openai_harmony_adapter`.

    The first line written says which renderer answers (``{"profile": ...}``); each answer is
    one line, ``{"response": ...}``, ``{"unsupported": why}`` or ``{"error": why}``. This is
    how oss-harmony, which installs the same module as openai-harmony, runs beside it: in its
    own environment, behind :func:`harmony_grammar.conformance.references.oss_harmony_adapter`.
    """
    import json
    import sys

    from .interface import Unsupported

    adapter = openai_harmony_adapter()
    print(json.dumps({"profile": installed_renderer()}), flush=True)
    for line in sys.stdin:
        try:
            answer: Json = {"response": adapter(json.loads(line))}
        except Unsupported as exc:
            answer = {"unsupported": str(exc)}
        except Exception as exc:  # reported to the caller, which raises it there
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer, ensure_ascii=False), flush=True)


if __name__ == "__main__":  # python -m harmony_grammar.conformance.oracle
    serve()
