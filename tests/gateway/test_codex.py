"""Codex CLI, unmodified, against ``serve --backend replay``: the agent gpt-oss was released for.

``.ci/run`` installs ``@openai/codex@0.171.0`` from npm into ``.engines/codex`` (never
globally). Each test writes a Codex home (a provider with ``wire_api = "responses"`` at the
gateway on 127.0.0.1, the key from the environment, no update check), runs ``codex exec``
in a temporary workspace, and records every body Codex posts, so it can check what Codex
sent back and render it with ``/v1/responses/render``. The model's side is a replay file:
each line is what gpt-oss would write, checked token by token against the turn grammar
the gateway built from Codex's own tools, so a line Codex's tools do not allow fails.

Without the install the tests skip, saying how to install; ``.ci/run`` sets
``HG_REQUIRE_CODEX=1``, under which a missing Codex is a failure instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx2 = pytest.importorskip("httpx2")

from harmony_grammar.gateway import GatewayConfig, build_backend, create_app  # noqa: E402
from harmony_grammar.gateway.server import serving_app  # noqa: E402

from ..support.openai_sdk import check_event  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / ".engines" / "codex" / "node_modules" / ".bin" / "codex"
MODEL = "gpt-oss"

# A model catalog entry for gpt-oss: Codex's metadata for a model it does not know. With
# apply_patch_tool_type "freeform", Codex sends apply_patch as a custom tool with its Lark
# grammar (without a catalog it sends function tools, a namespace and web_search only).
CATALOG = {
    "models": [
        {
            "slug": MODEL,
            "display_name": MODEL,
            "description": "gpt-oss behind harmony-grammar serve",
            "priority": 50,
            "additional_speed_tiers": [],
            "service_tiers": [],
            "availability_nux": None,
            "upgrade": None,
            "default_reasoning_level": "medium",
            "supported_reasoning_levels": [
                {"effort": e, "description": e} for e in ("low", "medium", "high")
            ],
            "shell_type": "unified_exec",
            "visibility": "list",
            "supported_in_api": True,
            "supports_reasoning_summaries": True,
            "support_verbosity": False,
            "apply_patch_tool_type": "freeform",
            "web_search_tool_type": "text",
            "supports_parallel_tool_calls": False,
            "supports_image_detail_original": False,
            "experimental_supported_tools": [],
            "supports_search_tool": False,
            "context_window": 131072,
            "max_context_window": 131072,
            "effective_context_window_percent": 95,
            "truncation_policy": {"mode": "tokens", "limit": 10000},
            "input_modalities": ["text"],
            "base_instructions": "You are a coding agent.",
        }
    ]
}


@pytest.fixture(scope="module")
def codex() -> Path:
    if not CODEX.exists():
        if os.environ.get("HG_REQUIRE_CODEX") == "1":
            pytest.fail(f"Codex is not installed at {CODEX} (.ci/run installs it)")
        pytest.skip(
            "Codex CLI not installed: npm install --prefix .engines/codex @openai/codex@0.171.0"
        )
    return CODEX


class Recorder:
    """ASGI middleware keeping every JSON body posted to ``/v1/responses``, and every
    server-sent event the gateway answered with."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.bodies: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/v1/responses":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        answer: list[bytes] = []

        async def recording() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self.bodies.append(json.loads(b"".join(chunks)))
            return message

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.body":
                answer.append(message.get("body", b""))
            await send(message)

        await self.app(scope, recording, sending)
        for line in b"".join(answer).decode().splitlines():
            if line.startswith("data: "):
                self.events.append(json.loads(line[len("data: ") :]))


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Any]:
    """A factory: ``gateway(lines)`` serves a replay of ``lines``; yields (url, recorder)."""
    stack: list[Any] = []

    def start(lines: list[str]) -> tuple[str, Recorder]:
        replay = tmp_path / "replay.jsonl"
        replay.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        recorder = Recorder(
            create_app(build_backend("replay", replay=str(replay)), GatewayConfig(model=MODEL))
        )
        context = serving_app(recorder)
        url = context.__enter__()
        stack.append(context)
        return url, recorder

    yield start
    for context in stack:
        context.__exit__(None, None, None)


def _run_codex(codex: Path, url: str, tmp_path: Path, prompt: str) -> tuple[Path, str]:
    """``codex exec`` in a fresh workspace against the gateway: the workspace, and Codex's
    last message."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "catalog.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    (home / "config.toml").write_text(
        f'model = "{MODEL}"\n'
        'model_provider = "harmony"\n'
        f'model_catalog_json = "{home / "catalog.json"}"\n'
        "check_for_update_on_startup = false\n"
        "\n"
        "[model_providers.harmony]\n"
        'name = "harmony-grammar"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "HARMONY_TEST_KEY"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n",
        encoding="utf-8",
    )
    last = home / "last_message.txt"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CODEX_HOME": str(home),
        "HARMONY_TEST_KEY": "not-a-secret",
        "NO_PROXY": "127.0.0.1",
    }
    done = subprocess.run(
        [
            str(codex),
            "exec",
            "--skip-git-repo-check",
            # The workspace is a fresh temporary directory; the sandbox (bubblewrap) needs
            # namespaces a CI container may not grant.
            "--dangerously-bypass-approvals-and-sandbox",
            "--output-last-message",
            str(last),
            prompt,
        ],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"codex exec failed:\n{done.stdout}\n{done.stderr}"
    return workspace, last.read_text(encoding="utf-8").strip()


def _check_codex_request(body: dict[str, Any]) -> None:
    """Codex's request against the SDK's types: every tool strictly, every input item as the
    SDK reads it (Codex adds ``id`` to its messages, which the SDK's input type lacks)."""
    from openai.types.responses import ResponseInputItem, Tool
    from pydantic import TypeAdapter

    tools: TypeAdapter[Any] = TypeAdapter(Tool)
    for tool in body["tools"]:
        model = tools.validate_python(tool)
        assert not model.model_extra, tool
    items: TypeAdapter[Any] = TypeAdapter(ResponseInputItem)
    for item in body["input"]:
        items.validate_python(item)


def _check_answers(recorder: Recorder) -> None:
    """Every event the gateway sent Codex is one the SDK declares, field by field."""
    assert recorder.events
    for event in recorder.events:
        check_event(event)


def _render(url: str, body: dict[str, Any]) -> str:
    answer = httpx2.post(url + "/v1/responses/render", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    prompt: str = answer.json()["prompt"]
    return prompt


def _items(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [item for item in body["input"] if item.get("type") == kind]


def test_codex_exec_runs_a_command_and_answers(codex: Path, gateway: Any, tmp_path: Path) -> None:
    url, recorder = gateway(
        [
            "<|channel|>analysis<|message|>I will write the file with printf.<|end|>"
            "<|start|>assistant<|channel|>commentary to=functions.exec_command"
            ' <|constrain|>json<|message|>{"cmd":"printf hello > hello.txt && echo wrote-it"}'
            "<|call|>",
            "<|channel|>final<|message|>I wrote hello to hello.txt.<|return|>",
        ]
    )
    workspace, final = _run_codex(codex, url, tmp_path, "Write hello to hello.txt")

    assert (workspace / "hello.txt").read_text() == "hello"
    assert final == "I wrote hello to hello.txt."
    first, second = recorder.bodies
    # What Codex sends, and every part of it is the SDK's type.
    for body in (first, second):
        assert body["store"] is False and body["stream"] is True
        assert body["include"] == ["reasoning.encrypted_content"]
        _check_codex_request(body)
    _check_answers(recorder)
    kinds = {tool["type"] for tool in first["tools"]}
    assert {"function", "namespace", "custom", "web_search"} <= kinds
    # The second request carries the first turn back: its sealed reasoning, the call, the
    # command's output.
    (reasoning,) = _items(second, "reasoning")
    assert reasoning["encrypted_content"].startswith("hg1.")
    assert "I will write the file" not in json.dumps(reasoning["encrypted_content"])
    (output,) = _items(second, "function_call_output")
    assert "wrote-it" in json.dumps(output)
    prompt = _render(url, second)
    # The analysis is back (the current tool loop keeps it), then the call and its output.
    analysis = prompt.index(
        "<|start|>assistant<|channel|>analysis<|message|>I will write the file with printf.<|end|>"
    )
    call = prompt.index(
        "<|start|>assistant to=functions.exec_command<|channel|>commentary <|constrain|>json"
        '<|message|>{"cmd":"printf hello > hello.txt && echo wrote-it"}<|call|>'
    )
    result = prompt.index("<|start|>functions.exec_command to=assistant<|channel|>commentary")
    assert analysis < call < result
    assert "wrote-it" in prompt[result:]
    assert prompt.endswith("<|start|>assistant")
    # web_search cannot run here: left out of the prompt.
    assert "web_search" not in prompt.split("<|start|>user")[0]


APPLY_PATCH = (
    "*** Begin Patch\n*** Add File: notes.txt\n+patched by gpt-oss\n+second line\n*** End Patch\n"
)


def test_codex_drives_a_custom_lark_tool_and_a_namespace_tool(
    codex: Path, gateway: Any, tmp_path: Path
) -> None:
    url, recorder = gateway(
        [
            # apply_patch is Codex's custom tool: raw text under its Lark grammar.
            "<|channel|>commentary to=functions.apply_patch<|message|>" + APPLY_PATCH + "<|call|>",
            # close_agent is a function of Codex's multi_agent_v1 namespace.
            "<|channel|>commentary to=multi_agent_v1.close_agent <|constrain|>json"
            '<|message|>{"target":"no-such-agent"}<|call|>',
            "<|channel|>final<|message|>Done.<|return|>",
        ]
    )
    workspace, final = _run_codex(codex, url, tmp_path, "Add notes.txt")

    assert (workspace / "notes.txt").read_text() == "patched by gpt-oss\nsecond line\n"
    assert final == "Done."
    first, second, third = recorder.bodies
    (patch_tool,) = [t for t in first["tools"] if t["type"] == "custom"]
    assert patch_tool["format"]["syntax"] == "lark"
    (custom_call,) = _items(second, "custom_tool_call")
    assert custom_call["name"] == "apply_patch" and custom_call["input"] == APPLY_PATCH
    assert _items(second, "custom_tool_call_output")
    (namespaced,) = [c for c in _items(third, "function_call") if c["name"] == "close_agent"]
    assert namespaced.get("namespace") == "multi_agent_v1"
    for body in (first, second, third):
        _check_codex_request(body)
    _check_answers(recorder)
    prompt = _render(url, third)
    assert "## multi_agent_v1\n" in prompt and "type apply_patch = (_: string) => any;" in prompt
    assert (
        "<|start|>assistant to=functions.apply_patch<|channel|>commentary<|message|>"
        + APPLY_PATCH
        + "<|call|><|start|>functions.apply_patch to=assistant<|channel|>commentary<|message|>"
    ) in prompt
    assert (
        "<|start|>assistant to=multi_agent_v1.close_agent<|channel|>commentary <|constrain|>json"
        '<|message|>{"target":"no-such-agent"}<|call|>'
        "<|start|>multi_agent_v1.close_agent to=assistant<|channel|>commentary<|message|>"
    ) in prompt
