"""The SGLang parser plugin: the reader's split of Harmony text (no SGLang), and the plugin
loaded by SGLang's own plugin loader and run through SGLang's own parser classes.

The second part needs SGLang's parser modules (``scripts/engines/sglang-parsers.sh``: the
sglang 0.5.23 wheel unpacked with what they import; no GPU, no server). It runs them in a
subprocess with that directory on the path and ``SGLANG_PLUGINS=harmony_grammar``; it skips,
naming the script, where they are not installed (fails where ``HG_REQUIRE_SGLANG_PARSERS``
is set, as CI does).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.bridges.sglang_plugin import DetectorPiece, HarmonySplit

ROOT = Path(__file__).resolve().parents[2]
SGLANG = ROOT / ".engines" / "sglang-parsers" / "site"

# Text no header reader can take for structure: words, spaces, punctuation.
WORDS = st.text(alphabet="abcdefghij KLMNO.,!?'", min_size=1, max_size=40).filter(
    lambda t: t.strip() == t and t
)
ARGUMENTS = st.dictionaries(
    st.sampled_from(["city", "days", "ok"]),
    st.one_of(st.integers(-5, 50), st.booleans(), st.text(alphabet="abcXYZ ", max_size=8)),
    max_size=3,
)


@st.composite
def completions(draw: Any) -> dict[str, Any]:
    """A Harmony completion and what it holds: analysis, then a final answer or a call
    (with a preamble or not), the call's ``<|call|>`` kept or trimmed as SGLang trims it."""
    analysis = draw(st.one_of(st.none(), WORDS))
    text = f"<|channel|>analysis<|message|>{analysis}<|end|><|start|>assistant" if analysis else ""
    expected: dict[str, Any] = {"reasoning": analysis or "", "content": "", "calls": []}
    if draw(st.booleans()):
        final = draw(WORDS)
        text += f"<|channel|>final<|message|>{final}" + draw(st.sampled_from(["<|return|>", ""]))
        expected["content"] = final
    else:
        if draw(st.booleans()):
            preamble = draw(WORDS)
            text += f"<|channel|>commentary<|message|>{preamble}<|end|><|start|>assistant"
            expected["content"] = preamble
        name = draw(st.sampled_from(["get_weather", "check"]))
        arguments = json.dumps(draw(ARGUMENTS), separators=(",", ":"))
        text += f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{arguments}"
        text += draw(st.sampled_from(["<|call|>", ""]))
        expected["calls"] = [[name, arguments]]
    return {"text": text, "expected": expected}


def _read(pieces: list[DetectorPiece]) -> dict[str, Any]:
    texts = [p for p in pieces if p.kind == "text"]
    return {
        "reasoning": "".join(p.text for p in texts if p.channel == "analysis"),
        "content": "".join(p.text for p in texts if p.channel != "analysis"),
        "calls": [[p.call.name, p.call.arguments] for p in pieces if p.kind == "call" and p.call],
    }


@given(completions(), st.lists(st.integers(1, 30), min_size=1, max_size=20))
def test_the_split_is_what_was_written_however_the_text_is_cut(
    case: dict[str, Any], cuts: list[int]
) -> None:
    text, reader, pieces, at = case["text"], HarmonySplit(), [], 0
    for size in cuts * (len(text) // max(1, sum(cuts)) + 1):
        pieces += reader.feed(text[at : at + size])
        at += size
        if at >= len(text):
            break
    pieces += reader.close()
    assert _read(pieces) == case["expected"]


def test_text_that_is_not_harmony_is_content() -> None:
    reader = HarmonySplit()
    pieces = reader.feed("Plain answer, ") + reader.feed("no markup.") + reader.close()
    assert _read(pieces) == {"reasoning": "", "content": "Plain answer, no markup.", "calls": []}


# -- through SGLang's own loader and parsers -------------------------------------------------

_RUN = r"""
import json, sys
from sglang.srt.plugins import load_plugins
load_plugins()
from sglang.srt.entrypoints.openai.protocol import Function, Tool
from sglang.srt.function_call.function_call_parser import FunctionCallParser
from sglang.srt.parser.reasoning_parser import ReasoningParser

NAME = "harmony-grammar"
assert NAME in FunctionCallParser.ToolCallParserEnum, "the plugin did not register its detector"
assert NAME in ReasoningParser.DetectorMap, "the plugin did not register its reasoning detector"
tools = [Tool(type="function", function=Function(name=n, parameters={"type": "object"}))
         for n in ("get_weather", "check")]

def whole(text):
    reasoning, normal = ReasoningParser(model_type=NAME, tool_call_parser_active=True).parse_non_stream(text)
    content, calls = FunctionCallParser(tools, NAME).parse_non_stream(normal)
    return reasoning or "", content, calls

def streamed(text, size):
    rp = ReasoningParser(model_type=NAME, tool_call_parser_active=True)
    fp = FunctionCallParser(tools, NAME)
    reasoning, content, calls = "", "", []
    for i in range(0, len(text), size):
        r, n = rp.parse_stream_chunk(text[i:i + size])
        reasoning += r or ""
        if n:
            c, k = fp.parse_stream_chunk(n)
            content, calls = content + c, calls + k
    r, n = rp.parse_stream_end()
    reasoning += r or ""
    if n:
        c, k = fp.parse_stream_chunk(n)
        content, calls = content + c, calls + k
    c, k = fp.parse_stream_end()
    return reasoning, content + c, calls + k

out = []
for case in json.load(sys.stdin):
    for reasoning, content, calls in (whole(case), streamed(case, 1), streamed(case, 5)):
        out.append({"reasoning": reasoning, "content": content,
                    "calls": [[c.name, c.parameters, c.tool_index] for c in calls]})
print(json.dumps(out))
"""


def _entry_point_dir(tmp_path: Path) -> Path | None:
    """A dist-info declaring pyproject's ``sglang.srt.plugins`` entry point, where the
    installed metadata (an editable install made before the entry point existed) lacks it."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    target = declared["sglang.srt.plugins"]["harmony_grammar"]
    installed = [p for p in importlib.metadata.entry_points(group="sglang.srt.plugins") if p.name == "harmony_grammar"]
    if installed:
        assert installed[0].value == target
        return None
    info = tmp_path / "harmony_grammar_sglang_plugin-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: harmony-grammar-sglang-plugin\nVersion: 0\n")
    (info / "entry_points.txt").write_text(f"[sglang.srt.plugins]\nharmony_grammar = {target}\n")
    return tmp_path


def test_sglang_loads_the_plugin_and_its_parsers_read_gpt_oss(tmp_path: Path) -> None:
    if not (SGLANG / "sglang" / "srt" / "plugins" / "__init__.py").exists():
        missing = "no SGLang parser modules: run scripts/engines/sglang-parsers.sh"
        if os.environ.get("HG_REQUIRE_SGLANG_PARSERS"):
            pytest.fail(missing)
        pytest.skip(missing)
    cases = [
        {"text": "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
         "expected": {"reasoning": "Need the weather.", "content": "", "calls": [["get_weather", "{\"city\":\"Paris\"}"]]}},
        # SGLang trims the stop token: the call is complete at the end of the text.
        {"text": "<|channel|>analysis<|message|>Check it.<|end|><|start|>assistant<|channel|>commentary<|message|>Checking now.<|end|><|start|>assistant<|channel|>commentary to=functions.check <|constrain|>json<|message|>{\"ok\":true}",
         "expected": {"reasoning": "Check it.", "content": "Checking now.", "calls": [["check", "{\"ok\":true}"]]}},
        {"text": "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>",
         "expected": {"reasoning": "Easy.", "content": "It is sunny.", "calls": []}},
        # The recipient before the channel (openai-harmony's placement, which SGLang's own
        # detector's pattern does not match): still a call.
        {"text": " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{\"city\":\"Oslo\"}<|call|>",
         "expected": {"reasoning": "", "content": "", "calls": [["get_weather", "{\"city\":\"Oslo\"}"]]}},
    ]
    extra = _entry_point_dir(tmp_path)
    path = [str(ROOT), str(SGLANG), *([str(extra)] if extra else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "SGLANG_PLUGINS": "harmony_grammar"}
    run = subprocess.run(
        [sys.executable, "-c", _RUN],
        input=json.dumps([c["text"] for c in cases]),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(run.stdout.strip().splitlines()[-1])
    for i, case in enumerate(cases):
        for got in results[3 * i : 3 * i + 3]:  # whole, streamed by 1 and by 5 characters
            calls = [[name, arguments] for name, arguments, _ in got["calls"]]
            assert [index for _, _, index in got["calls"]] == list(range(len(calls)))
            assert {**got, "calls": calls} == case["expected"], case["text"]
