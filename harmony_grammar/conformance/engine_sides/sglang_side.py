"""SGLang's own gpt-oss reading of one generation (run by SGLang's python; see __init__).

Served with ``--reasoning-parser gpt-oss --tool-call-parser gpt-oss``, SGLang's non-streaming
Chat Completions reply (``serving_chat.py``, ``_build_chat_response`` then
``_process_tool_calls``) is built from the generation's *text* (detokenized with
``skip_special_tokens=False``, the stop id trimmed):

1. ``ReasoningParser("gpt-oss", stream_reasoning=False, force_reasoning=True, ...)``
   (``srt/parser/reasoning_parser.py``; gpt-oss forces reasoning) splits it into reasoning
   and the rest, which keeps each call's raw text for the tool parser;
2. with tools declared, ``FunctionCallParser(tools, "gpt-oss")`` (``GptOssDetector``,
   ``srt/function_call/gpt_oss_detector.py``): when ``has_tool_call(text)``,
   ``parse_non_stream(text)`` gives the remaining text and the calls; when it finds none,
   the calls are dropped and the text kept (as ``_process_tool_calls`` does).

``serving_chat`` itself is not imported (it pulls in the whole server: FastAPI, vision
models, TVM); these are the two calls it makes, with its arguments.
"""

from __future__ import annotations

import importlib
import json
import sys
from importlib import metadata
from typing import Any


def _reply(request: dict[str, Any]) -> dict[str, Any]:
    reasoning_module = importlib.import_module("sglang.srt.parser.reasoning_parser")
    calls_module = importlib.import_module("sglang.srt.function_call.function_call_parser")
    protocol = importlib.import_module("sglang.srt.entrypoints.openai.protocol")
    parser = reasoning_module.ReasoningParser(
        model_type="gpt-oss",
        stream_reasoning=False,
        force_reasoning=True,
        request=None,
        tokenizer=None,
        tool_call_parser_active=bool(request["tools"]),
    )
    reasoning, text = parser.parse_non_stream(request["text"])
    calls: list[dict[str, Any]] = []
    if request["tools"]:
        tools = [
            protocol.Tool(
                type="function",
                function={"name": tool["name"], "parameters": tool.get("parameters") or {}},
            )
            for tool in request["tools"]
        ]
        detector = calls_module.FunctionCallParser(tools, "gpt-oss", tool_choice="auto")
        if detector.has_tool_call(text):
            rest, found = detector.parse_non_stream(text)
            if found:
                text = rest
                calls = [{"name": c.name, "arguments": c.parameters} for c in found]
    return {"content": text or None, "reasoning": reasoning or None, "tool_calls": calls}


def serve() -> None:
    """Answer generation requests, one JSON line each (see the package docstring)."""
    # The protocol owns stdout: whatever the engine prints goes to stderr.
    out, sys.stdout = sys.stdout, sys.stderr
    print(json.dumps({"profile": f"sglang-{metadata.version('sglang')}"}), file=out, flush=True)
    for line in sys.stdin:
        try:
            answer: dict[str, Any] = {"response": _reply(json.loads(line))}
        except Exception as exc:  # the engine's own failure: reported, the caller decides
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer, ensure_ascii=False), file=out, flush=True)


if __name__ == "__main__":
    serve()
