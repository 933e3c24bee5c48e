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

Streamed (``path: "stream"``, the generation's text in ``deltas``), ``_generate_stream_content``
reads each delta: ``ReasoningParser(..., stream_reasoning=True, ...)``'s
``parse_stream_chunk`` (and ``parse_stream_end`` with the last), then, when tool parsing is
active (tools declared and not ``tool_choice: none``, or a detector that parses without
tools), ``FunctionCallParser.parse_stream_chunk`` on the rest (``parse_stream_end`` with the
last, then the arguments ``_check_for_unstreamed_tool_args`` still sends); otherwise the rest
is content. The reply is those chunks accumulated as a client does.

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
        tools = _tools(request)
        detector = calls_module.FunctionCallParser(tools, "gpt-oss", tool_choice="auto")
        if detector.has_tool_call(text):
            rest, found = detector.parse_non_stream(text)
            if found:
                text = rest
                calls = [{"name": c.name, "arguments": c.parameters} for c in found]
    return {"content": text or None, "reasoning": reasoning or None, "tool_calls": calls}


def _tools(request: dict[str, Any]) -> list[Any]:
    protocol = importlib.import_module("sglang.srt.entrypoints.openai.protocol")
    return [
        protocol.Tool(
            type="function",
            function={"name": tool["name"], "parameters": tool.get("parameters") or {}},
        )
        for tool in request["tools"]
    ]


def _unstreamed_arguments(detector: Any) -> tuple[int, str] | None:
    """What ``_check_for_unstreamed_tool_args`` sends at the end: the last call's arguments
    the stream has not sent yet."""
    done = getattr(detector, "prev_tool_call_arr", None)
    sent = getattr(detector, "streamed_args_for_tool", None)
    if not done or not sent:
        return None
    index = len(done) - 1
    if index >= len(sent):
        return None
    expected = done[index].get("arguments", {})
    expected = expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)
    actual = sent[index]
    rest = expected[len(actual) :] if expected.startswith(actual) else ""
    return (index, rest) if rest else None


def _stream_reply(request: dict[str, Any]) -> dict[str, Any]:
    reasoning_module = importlib.import_module("sglang.srt.parser.reasoning_parser")
    calls_module = importlib.import_module("sglang.srt.function_call.function_call_parser")
    tools = _tools(request)
    detector_class = calls_module.FunctionCallParser.ToolCallParserEnum["gpt-oss"]
    active = bool(tools) or detector_class.parses_without_tools()
    reasoner = reasoning_module.ReasoningParser(
        "gpt-oss", True, True, None, tokenizer=None, tool_call_parser_active=active
    )
    caller = calls_module.FunctionCallParser(tools=tools, tool_call_parser="gpt-oss")
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    deltas = request["deltas"]
    for at, delta in enumerate(deltas):
        last = at == len(deltas) - 1
        thought, text = reasoner.parse_stream_chunk(delta["text"])
        if last:
            end_thought, end_text = reasoner.parse_stream_end()
            thought = (thought or "") + (end_thought or "")
            text = (text or "") + (end_text or "")
        reasoning.append(thought or "")
        if not active:
            content.append(text or "")
            continue
        normal, found = caller.parse_stream_chunk(text or "")
        if last:
            end_normal, end_found = caller.parse_stream_end()
            normal, found = (normal or "") + end_normal, [*found, *end_found]
        content.append(normal or "")
        for item in found:
            known = calls.setdefault(item.tool_index, {"name": None, "arguments": ""})
            known["name"] = known["name"] or item.name
            known["arguments"] += item.parameters or ""
        rest = _unstreamed_arguments(caller.detector) if last else None
        if rest is not None:
            calls.setdefault(rest[0], {"name": None, "arguments": ""})["arguments"] += rest[1]
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": [calls[index] for index in sorted(calls)],
    }


def serve() -> None:
    """Answer generation requests, one JSON line each (see the package docstring)."""
    # The protocol owns stdout: whatever the engine prints goes to stderr.
    out, sys.stdout = sys.stdout, sys.stderr
    print(json.dumps({"profile": f"sglang-{metadata.version('sglang')}"}), file=out, flush=True)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            reply = _stream_reply(request) if request.get("path") == "stream" else _reply(request)
            answer: dict[str, Any] = {"response": reply}
        except Exception as exc:  # the engine's own failure: reported, the caller decides
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer, ensure_ascii=False), file=out, flush=True)


if __name__ == "__main__":
    serve()
