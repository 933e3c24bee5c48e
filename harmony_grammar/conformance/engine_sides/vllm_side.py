"""vLLM's own gpt-oss reading of one generation (run by vLLM's python; see __init__).

For a gpt-oss model vLLM always builds ``HarmonyParser`` (``vllm/parser/harmony.py``, over
openai-harmony's ``StreamableParser``; ``ParserManager.get_parser(..., is_harmony=True)``),
here with the flags a user serves gpt-oss with: ``--tool-call-parser openai
--reasoning-parser openai_gptoss --enable-auto-tool-choice``. The parser reads the
generation's *ids* (the stop id included, as ``output.token_ids`` holds it). Two paths:

* ``chat`` (``chat_completion/serving.py``, the non-streaming reply): ``parser.parse(text,
  request, enable_auto_tools=True, model_output_token_ids=ids)`` gives reasoning, content and
  calls; the calls are the reply's only when the request declares tools and ``tool_choice``
  is ``auto`` (its default with tools), as the serving code decides.
* ``responses`` (``responses/serving.py`` with ``HarmonyContext.append_output``):
  ``process_chunk(ids)`` then ``flush()``, each completed message through
  ``harmony_to_response_output`` with the declared function names (the last one
  ``incomplete`` when the flush completed it); reasoning items are the reasoning,
  message items the content, ``function_call`` items the calls (web-search and MCP items
  are no function call and show in neither).
* ``chat-stream`` (``chat_completion/serving.py``, ``chat_completion_stream_generator``): the
  generation arrives in ``deltas`` (``[{"tokens", "text"}]``), each through
  ``parser.parse_delta(text, ids, request, finished=<last delta>)``; the reply is the
  ``DeltaMessage`` s accumulated as a client does (texts concatenated, each call's name from
  its first delta and its arguments joined, by ``index``). The stream surfaces calls
  whatever the request declares, as the serving code does.

The model's tokenizer is only used when the final flush fails (the raw text becomes the
final content); here it is openai-harmony's own encoding, as vLLM decodes
(``skip_special_tokens`` off).
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from typing import Any


class _Tokenizer:
    """What HarmonyParser asks of the model's tokenizer: ``decode``."""

    def __init__(self, encoding: Any) -> None:
        self.encoding = encoding

    def decode(self, ids: Any, **_: Any) -> str:
        return str(self.encoding.decode(list(ids)))


@functools.cache
def _parser_class() -> Any:
    manager = importlib.import_module("vllm.parser").ParserManager
    return manager.get_parser(
        tool_parser_name="openai",
        reasoning_parser_name="openai_gptoss",
        enable_auto_tools=True,
        is_harmony=True,
    )


def _request(tools: list[dict[str, Any]]) -> Any:
    protocol = importlib.import_module("vllm.entrypoints.openai.chat_completion.protocol")
    declared = [
        {"type": "function", "function": {"name": t["name"], "parameters": t.get("parameters")}}
        for t in tools
    ]
    return protocol.ChatCompletionRequest(
        model="gpt-oss",
        messages=[{"role": "user", "content": "hi"}],
        **({"tools": declared, "tool_choice": "auto"} if declared else {}),
    )


def _parser(request: Any) -> Any:
    utils = importlib.import_module("vllm.entrypoints.openai.parser.harmony_utils")
    return _parser_class()(_Tokenizer(utils.get_encoding()), request.tools, chat_template_kwargs={})


def _chat(ids: list[int], tools: list[dict[str, Any]]) -> dict[str, Any]:
    request = _request(tools)
    parser = _parser(request)
    reasoning, content, calls = parser.parse(
        "", request, enable_auto_tools=True, model_output_token_ids=ids
    )
    if not request.include_reasoning:
        reasoning = None
    surfaced = bool(request.tools) and request.tool_choice in ("auto", None)
    return {
        "content": content,
        "reasoning": reasoning,
        "tool_calls": [{"name": call.name, "arguments": call.arguments} for call in (calls or [])]
        if surfaced
        else [],
    }


def _chat_stream(deltas: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    request = _request(tools)
    parser = _parser(request)
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for at, delta in enumerate(deltas):
        message = parser.parse_delta(
            delta["text"], list(delta["tokens"]), request, finished=at == len(deltas) - 1
        )
        if message is None:
            continue
        content.append(message.content or "")
        reasoning.append(message.reasoning or "")
        for call in message.tool_calls or []:
            known = calls.setdefault(call.index, {"name": None, "arguments": ""})
            function = call.function
            if function is not None:
                known["name"] = known["name"] or function.name
                known["arguments"] += function.arguments or ""
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": [calls[index] for index in sorted(calls)],
    }


def _responses(ids: list[int], tools: list[dict[str, Any]]) -> dict[str, Any]:
    harmony = importlib.import_module("vllm.entrypoints.openai.responses.harmony")
    parser = _parser(_request(tools))
    segments = list(parser.process_chunk(ids).segments)
    flushed = parser.flush()
    segments += flushed
    messages = [s.completed_message for s in segments if s.completed_message is not None]
    names = frozenset(t["name"] for t in tools)
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        incomplete = index == len(messages) - 1 and bool(flushed)
        for item in harmony.harmony_to_response_output(message, names, incomplete=incomplete):
            if item.type == "reasoning":
                reasoning += [part.text for part in item.content or []]
            elif item.type == "message":
                content += [part.text for part in item.content]
            elif item.type == "function_call":
                calls.append({"name": item.name, "arguments": item.arguments})
    return {
        "content": "\n".join(t for t in content if t) or None,
        "reasoning": "\n".join(t for t in reasoning if t) or None,
        "tool_calls": calls,
    }


def serve() -> None:
    """Answer generation requests, one JSON line each (see the package docstring)."""
    # The protocol owns stdout: whatever the engine prints goes to stderr.
    out, sys.stdout = sys.stdout, sys.stderr
    version = importlib.import_module("vllm").__version__
    print(json.dumps({"profile": f"vllm-{version}"}), file=out, flush=True)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if request.get("path") == "chat-stream":
                reply = _chat_stream(request["deltas"], request["tools"])
            elif request.get("path") == "responses":
                reply = _responses(request["tokens"], request["tools"])
            else:
                reply = _chat(request["tokens"], request["tools"])
            answer: dict[str, Any] = {"response": reply}
        except Exception as exc:  # the engine's own failure: reported, the caller decides
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer, ensure_ascii=False), file=out, flush=True)


if __name__ == "__main__":
    serve()
