"""``render --profile`` and ``diff-render``."""

from __future__ import annotations

import json

import pytest

from tests.support.cli_helpers import run_cli

REQUEST = {
    "messages": [
        {"role": "user", "content": "Weather in Zürich?"},
        {
            "role": "assistant",
            "reasoning_content": "Call the tool.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"t": 20}'},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
}


@pytest.fixture
def request_file(tmp_path):
    path = tmp_path / "request.json"
    path.write_text(json.dumps(REQUEST), encoding="utf-8")
    return str(path)


def test_render_with_a_profile(capsys, request_file) -> None:
    status, out, _ = run_cli(capsys, "render", request_file, "--profile", "oss-harmony-0.0.11")
    assert status == 0
    assert "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" in out
    assert "<|start|>functions.get_weather<|channel|>commentary to=assistant<|message|>" in out
    status, out, _ = run_cli(capsys, "render", request_file, "--profile", "hf-chat-template", "--date", "2026-12-01")
    assert status == 0 and "Current date: 2026-12-01\n" in out
    assert '<|message|>"{\\"t\\": 20}"<|end|>' in out  # the result through tojson


def test_render_refuses_options_a_profile_decides(capsys, request_file) -> None:
    status, _, err = run_cli(capsys, "render", request_file, "--profile", "omp", "--keep-analysis")
    assert status == 2
    assert err.strip() == (
        "harmony-grammar: error: --keep-analysis and --drop-rule do not apply to --profile omp: "
        "it drops chain of thought by its own rule"
    )


def test_diff_render_same(capsys, request_file) -> None:
    status, out, _ = run_cli(capsys, "diff-render", request_file, "--profiles", "openai-harmony-0.0.8,openai-harmony-0.0.8")
    assert status == 0
    assert out.splitlines()[-1] == "same"


def test_diff_render_shows_the_differing_tokens_decoded(capsys, request_file) -> None:
    status, out, _ = run_cli(capsys, "diff-render", request_file, "--profiles", "openai-harmony-0.0.8,oss-harmony-0.0.11")
    assert status == 1
    lines = out.splitlines()
    assert lines[-1] == "4 differences"
    assert "openai-harmony-0.0.8 vs oss-harmony-0.0.11: 4 differences" in lines
    assert any('200005 "<|channel|>"' in line for line in lines)


def test_diff_render_json_has_the_same_content(capsys, request_file) -> None:
    status, out, _ = run_cli(
        capsys, "diff-render", request_file, "--profiles", "openai-harmony-0.0.8,oss-harmony-0.0.11,omp", "--format", "json"
    )
    assert status == 1
    report = json.loads(out)
    assert [r["profile"] for r in report["renderings"]] == ["openai-harmony-0.0.8", "oss-harmony-0.0.11", "omp"]
    assert report["summary"] == f"{report['differences']} differences"
    assert report["differences"] == sum(c["count"] for c in report["comparisons"])
    first = report["comparisons"][0]["differences"][0]
    ids = report["renderings"][1]["tokens"][first["b"]["start"] : first["b"]["end"]]
    assert [t["id"] for t in first["b"]["tokens"]] == ids
    assert "".join(t["text"] for t in first["b"]["tokens"]) == "<|channel|>commentary"


def test_diff_render_reports_a_profile_that_cannot_render(capsys, tmp_path) -> None:
    two_calls = json.loads(json.dumps(REQUEST))
    calls = two_calls["messages"][1]["tool_calls"]
    calls.append({**calls[0], "id": "c2"})
    two_calls["messages"].append({"role": "tool", "tool_call_id": "c2", "content": "{}"})
    path = tmp_path / "two.json"
    path.write_text(json.dumps(two_calls), encoding="utf-8")
    status, out, _ = run_cli(capsys, "diff-render", str(path), "--profiles", "openai-harmony-0.0.8,hf-chat-template")
    assert status == 1
    assert "hf-chat-template: cannot render: hf-chat-template: messages[5]: the template takes one call per assistant message" in out
    assert out.splitlines()[-1] == "1 difference"


@pytest.mark.parametrize(
    ("profiles", "message"),
    [
        ("openai-harmony-0.0.8", "name at least two profiles"),
        ("openai-harmony-0.0.8,vllm", "unknown profile 'vllm'"),
    ],
)
def test_diff_render_usage_errors(capsys, request_file, profiles, message) -> None:
    status, _, err = run_cli(capsys, "diff-render", request_file, "--profiles", profiles)
    assert status == 2 and message in err
