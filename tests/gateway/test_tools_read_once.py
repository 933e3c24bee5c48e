"""A request's tools are read once (issue 33): :meth:`ToolSet.read` runs on the list one
time per request, and everything after the planner (the turn grammar, the parser's call
checks, the bridges' namespaces and custom tools) takes the set it made.

The requests go the whole real path, ``serve --backend replay`` on 127.0.0.1; the spy wraps
the one reader, so a second read of the list anywhere in the process is counted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
httpx2 = pytest.importorskip("httpx2")

from harmony_grammar.declarations.toolset import ToolSet  # noqa: E402
from harmony_grammar.gateway import ReplayBackend, serving  # noqa: E402

from ..support.serve_peers import CALL_TEXT, TOOLS, WEATHER, deadline  # noqa: E402
from .test_serve_agents import CODEX_BODY, NAMESPACED  # noqa: E402

#: Chat tools with a namespaced function too (``NAMESPACE.fn``, read as a namespace).
CHAT_TOOLS = [
    *TOOLS,
    {"type": "function", "function": {"name": "agents.spawn", "parameters": WEATHER}},
]
#: Codex's tools and a custom tool with a grammar: every kind the reader knows.
RESPONSES_TOOLS = [
    *CODEX_BODY["tools"],
    {
        "type": "custom",
        "name": "apply_patch",
        "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "x"+'},
    },
]


@pytest.fixture(autouse=True)
def _deadline() -> Iterator[None]:
    with deadline(120):
        yield


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every list :meth:`ToolSet.read` reads (a ToolSet handed on is not a read)."""
    seen: list[Any] = []
    real = ToolSet.read.__func__  # type: ignore[attr-defined]

    def spy(cls: type[ToolSet], tools: Any, **options: Any) -> ToolSet:
        if not isinstance(tools, ToolSet):
            seen.append(tools)
        result: ToolSet = real(cls, tools, **options)
        return result

    monkeypatch.setattr(ToolSet, "read", classmethod(spy))
    return seen


def _replay(tmp_path: Path, *lines: str) -> ReplayBackend:
    path = tmp_path / "replay.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return ReplayBackend(path)


@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_requests_tools_are_read_once(tmp_path: Path, reads: list[Any], stream: bool):
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": CHAT_TOOLS,
        "stream": stream,
    }
    with serving(_replay(tmp_path, CALL_TEXT)) as url:
        reads.clear()  # the gateway's warm-up plan at startup is a request of its own
        answer = httpx2.post(url + "/v1/chat/completions", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    assert "get_weather" in answer.text  # the call went through the checks
    assert reads == [CHAT_TOOLS]


@pytest.mark.parametrize("stream", [False, True])
def test_a_responses_requests_tools_are_read_once(tmp_path: Path, reads: list[Any], stream: bool):
    body = {**CODEX_BODY, "tools": RESPONSES_TOOLS, "stream": stream}
    body.pop("include")  # no sealing key in this gateway
    with serving(_replay(tmp_path, NAMESPACED)) as url:
        reads.clear()
        answer = httpx2.post(url + "/v1/responses", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    assert '"namespace":"multi_agent_v1"' in answer.text.replace(" ", "")
    assert reads == [RESPONSES_TOOLS]
