"""The engine matrix (issue 42): replies judged, generations cut, engines driven, the page.

The engines themselves (vLLM, SGLang, llama-server) run where ``.engines/`` holds them
(``scripts/engines/*.sh``); a test of one that is not installed skips, naming the script.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.conformance import load_cases
from harmony_grammar.conformance.engines import engine_adapter
from harmony_grammar.conformance.interface import Unsupported
from harmony_grammar.conformance.references import ReferenceUnavailable
from harmony_grammar.conformance.runner import run_case
from harmony_grammar.conformance.views import (
    ASSISTANT_ID,
    STOP_IDS,
    STREAM_FEEDS,
    generations,
    intended_view,
    reading_adapter,
    stream_feed,
    view_case,
    view_problem,
    view_problems,
    wild_case,
)
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.format.vocabulary import load_encoding

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "engine_matrix", ROOT / "scripts" / "engine_matrix.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["engine_matrix"] = module
    spec.loader.exec_module(module)
    return module


def _message(
    channel: str | None, content: str | None, recipient: str | None = None
) -> dict[str, Any]:
    return {"role": "assistant", "channel": channel, "recipient": recipient, "content": content}


# -- the reply a reading gives ------------------------------------------------------------


def test_intended_view_maps_channels_and_calls() -> None:
    view = intended_view(
        [
            _message("analysis", "think"),
            _message("commentary", "Looking it up."),
            _message("commentary", '{"q": 1}', "functions.search"),
            _message("analysis", "{}", "browser.open"),
            _message("final", "Done."),
        ]
    )
    assert view == {
        "content": "Looking it up.\nDone.",
        "reasoning": "think\n{}",
        "tool_calls": [{"name": "search", "arguments": '{"q": 1}'}],
        "unknown": [],
    }


def test_a_null_field_leaves_its_part_unjudged_in_the_corpus_only() -> None:
    messages = [_message(None, "maybe"), _message("final", None)]
    assert intended_view(messages, nulls_unknown=True)["unknown"] == ["content"]
    assert intended_view(messages)["content"] == "maybe"


def test_view_problems_name_every_part_lost() -> None:
    want = intended_view(
        [_message("analysis", "a b"), _message("commentary", '{"x": 1}', "functions.f")]
    )
    same = {
        "content": None,
        "reasoning": "a   b",
        "tool_calls": [{"name": "f", "arguments": '{ "x":1 }'}],
    }
    assert view_problems(want, same) == {}  # whitespace runs and JSON spacing do not count
    dropped = {
        "content": '<|channel|>commentary to=functions.f<|message|>{"x": 1}',
        "reasoning": "a b",
    }
    assert set(view_problems(want, dropped)) == {"content", "tool_calls", "dispatched"}
    wrong = {"reasoning": "a b", "tool_calls": [{"name": "f", "arguments": '{"x": 2}'}]}
    assert set(view_problems(want, wrong)) == {"tool_calls"}
    extra = intended_view([_message("final", "hi")])
    assert set(view_problems(extra, {"content": "hi", "tool_calls": [{"name": "g"}]})) == {
        "tool_calls",
        "dispatched",
    }


# -- generations --------------------------------------------------------------------------

_IDS = st.lists(
    st.sampled_from([*STOP_IDS, ControlToken.START.id, ControlToken.END.id, ASSISTANT_ID, 64, 65]),
    max_size=30,
)


@given(_IDS)
def test_generations_cut_at_each_stop_id_and_lose_only_the_prompts_header(ids: list[int]) -> None:
    try:
        cut = generations(ids, "completion")
    except Unsupported:
        # only a generation opening with <|start|> and another author is refused
        assert ControlToken.START.id in ids
        return
    for generation in cut[:-1]:
        assert generation[-1] in STOP_IDS
    for generation in cut:
        assert not any(token in STOP_IDS for token in generation[:-1])
    joined = [token for generation in cut for token in generation]
    header = [ControlToken.START.id, ASSISTANT_ID]
    assert len(ids) - len(joined) == 2 * sum(1 for g in _raw_cut(ids) if g[:2] == header)


def _raw_cut(ids: list[int]) -> list[list[int]]:
    out: list[list[int]] = [[]]
    for token in ids:
        out[-1].append(token)
        if token in STOP_IDS:
            out.append([])
    return [g for g in out if g]


# -- streamed feeds -----------------------------------------------------------------------

# ids of every kind: control tokens, ASCII words, and pieces of multi-byte characters (the
# byte-level ids of "é" and of an emoji, which a cut between them splits).
_FEED_IDS = st.lists(
    st.sampled_from([*STOP_IDS, ControlToken.CHANNEL.id, 64, 65, *encode_harmony("é😀 x")]),
    max_size=40,
)


@given(_FEED_IDS, st.sampled_from(sorted(STREAM_FEEDS)))
def test_a_feed_cuts_ids_into_deltas_that_join_back(ids: list[int], feed: str) -> None:
    deltas = stream_feed(ids, feed)
    assert [token for delta in deltas for token in delta] == ids
    assert all(deltas)  # no empty delta
    pieces = STREAM_FEEDS[feed]
    assert len(deltas) == (len(ids) if pieces == 0 else min(pieces, len(ids)))
    assert stream_feed(ids, feed) == deltas  # the same cut every run


@given(_FEED_IDS, st.sampled_from(sorted(STREAM_FEEDS)))
def test_streamed_texts_join_to_the_whole_text(ids: list[int], feed: str) -> None:
    """What a text engine is fed: the deltas' texts add up to the generation's text, and no
    delta holds half a character (a detokenizer holds the bytes back)."""
    seen: list[Any] = []

    def read(piece: dict[str, Any]) -> dict[str, Any]:
        seen.append(piece)
        return {"content": None, "reasoning": None, "tool_calls": []}

    adapter = reading_adapter(read, feeds=(feed,))
    try:
        adapter({"kind": "view", "mode": "completion", "tokens": ids})
    except Unsupported:
        assert ControlToken.START.id in ids
        return
    for piece in seen:
        texts = [delta["text"] for delta in piece["deltas"]]
        assert "".join(texts) == piece["text"]
        assert [t for d in piece["deltas"] for t in d["tokens"]] == piece["tokens"]
        whole = load_encoding().decode_bytes(piece["tokens"]).decode("utf-8", "replace")
        assert piece["text"] == whole


def test_a_streamed_answer_is_judged_on_every_feed() -> None:
    expected = {"messages": [_message("final", "Done.")]}
    right = {"view": {"content": "Done.", "reasoning": None, "tool_calls": []}}
    glued = {"view": {"content": "Do ne.", "reasoning": None, "tool_calls": []}}
    refused = {"view": None, "refused": "HTTP 500"}
    assert view_problem(expected, {**right, "feeds": {"each id": right, "2 deltas": right}}) is None
    problem = view_problem(expected, {**right, "feeds": {"each id": right, "3 deltas": glued}})
    assert problem is not None and problem.startswith("[content] fed 3 deltas: content:")
    problem = view_problem(expected, {**right, "feeds": {"each id": refused}})
    assert problem == "[refused] fed each id: HTTP 500"


def test_a_prompt_and_another_authors_completion_are_not_model_output() -> None:
    with pytest.raises(Unsupported):
        generations([200006, 1428], "prompt")
    with pytest.raises(Unsupported):
        generations([64], "completion", role="user")
    with pytest.raises(Unsupported, match="does not open"):
        generations(encode_harmony("<|channel|>final<|message|>x"), "conversation")
    tool_reply = encode_harmony("<|call|><|start|>functions.f to=assistant<|message|>{}")
    with pytest.raises(Unsupported, match="another author"):
        generations(tool_reply, "completion")


def test_view_cases_keep_only_model_output() -> None:
    originals = {case.id: case for case in load_cases()}
    cases = {name: view_case(case) for name, case in originals.items()}
    judged = [case for case in cases.values() if "view" in case.data]
    assert len(judged) > 200
    # a conversation is judged on the assistant's messages only (a completion may hold any
    # author's header: the model wrote it)
    conversations = [case for case in judged if case.data["mode"] == "conversation"]
    assert all(m["role"] == "assistant" for case in conversations for m in case.data["view"])
    # a conversation after a prompt: judged on the assistant's messages, the prompt cut
    tails = [c for c in conversations if "text" in originals[c.id].data and "text" not in c.data]
    assert tails and all(c.data["tokens"][:2] == [200006, ASSISTANT_ID] for c in tails)
    for name, case in cases.items():  # a case with no reading is never judged, and says why
        readings = [originals[name].data.get(k) or {} for k in ("expected", "lenient")]
        if not any(reading.get("valid") for reading in readings):
            assert case.data["unjudged"]


# -- adapters on cases --------------------------------------------------------------------


def _call_case() -> Any:
    record = {
        "id": "call",
        "mode": "completion",
        "text": "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant"
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
        "intended": [
            _message("analysis", "Need weather."),
            _message("commentary", '{"city":"Paris"}', "functions.get_weather"),
        ],
    }
    return wild_case(record)


def _final_case() -> Any:
    record = {
        "id": "final",
        "mode": "completion",
        "text": "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>",
        "intended": [_message("analysis", "Easy."), _message("final", "4")],
    }
    return wild_case(record)


#: The variable .ci/run sets once it has installed an engine.
_REQUIRED = {
    "vllm-chat": "HG_REQUIRE_VLLM",
    "vllm-responses": "HG_REQUIRE_VLLM",
    "vllm-chat-stream": "HG_REQUIRE_VLLM",
    "sglang": "HG_REQUIRE_SGLANG_PARSERS",
    "sglang-stream": "HG_REQUIRE_SGLANG_PARSERS",
    "llamacpp": "HG_REQUIRE_LLAMA_SERVER",
    "llamacpp-stream": "HG_REQUIRE_LLAMA_SERVER",
    "llamacpp-continued": "HG_REQUIRE_LLAMA_SERVER",
}


@pytest.mark.parametrize(
    "name",
    [
        "openai-harmony",
        "openai-harmony-stream",
        "oss-harmony",
        "vllm-chat",
        "vllm-chat-stream",
        "vllm-responses",
        "sglang",
        "sglang-stream",
        "llamacpp",
        "llamacpp-stream",
        "llamacpp-continued",
    ],
)
def test_each_engine_reads_well_formed_output(name: str) -> None:
    """Every engine of the matrix, driven for real on two cases (CI's run of the matrix: .ci/run
    installs every engine and sets the variables below, so a missing one fails, never skips);
    a streaming column on every feed."""
    try:
        adapter = engine_adapter(name)
    except ReferenceUnavailable as exc:
        required = _REQUIRED.get(name)
        if required and os.environ.get(required):
            pytest.fail(f"{required} is set, and: {exc}")
        pytest.skip(str(exc))
    final = run_case(adapter, _final_case())
    assert final.status == "passed", final.reason
    call = run_case(adapter, _call_case())
    if name in ("llamacpp", "llamacpp-stream"):  # a forcing grammar cannot go beside tools
        assert call.status == "skipped" and "llamacpp-continued" in (call.reason or "")
    else:
        assert call.status == "passed", call.reason


def test_an_engine_adapter_answers_only_view_requests() -> None:
    adapter = engine_adapter("openai-harmony")
    with pytest.raises(Unsupported):
        adapter({"kind": "parse", "mode": "completion", "strict": True, "text": "x"})


# -- the script and its page --------------------------------------------------------------


def test_the_matrix_runs_on_a_few_cases_and_writes_the_page(tmp_path: Path) -> None:
    script = _script()
    (tmp_path / "engine-matrix.md").write_text(
        f"old\n{script.FINDINGS_START}\nkept by hand\n{script.FINDINGS_END}\n", encoding="utf-8"
    )
    engines = "harmony-grammar,harmony-grammar-strict,openai-harmony,harmony-grammar-stream"
    report = script.main(
        ["--engines", engines, "--per-topic", "1", "--wild", "2", "--out-dir", str(tmp_path)],
        log=lambda line: None,
    )
    written = json.loads((tmp_path / "engine-matrix.json").read_text(encoding="utf-8"))
    assert written == report
    page = (tmp_path / "engine-matrix.md").read_text(encoding="utf-8")
    assert "kept by hand" in page and "| topic | harmony-grammar |" in page
    assert "## Streamed" in page and "| topic | harmony-grammar-stream |" in page
    for name in engines.split(","):
        rows = report["engines"][name]["results"]
        assert {r["topic"] for r in rows} >= {"envelope", "wild:dev"} - {
            "wild:dev" if not (ROOT.parent / "shared").is_dir() else ""
        }
        for row in rows:
            if row["status"] in ("failed", "errored"):
                assert f"- `{row['id']}` ({row['status']}): " in page
        assert sum(r["status"] == "passed" for r in rows) > 0
    # strict reading refuses what only leniency repairs: never more passes than lenient
    passes = {
        n: sum(r["status"] == "passed" for r in report["engines"][n]["results"])
        for n in ("harmony-grammar", "harmony-grammar-strict")
    }
    assert passes["harmony-grammar"] >= passes["harmony-grammar-strict"]
    # the gateway's whole reply is its stream fed everything: fed in deltas, it reads the same
    statuses = {
        n: [(r["id"], r["status"]) for r in report["engines"][n]["results"]]
        for n in ("harmony-grammar", "harmony-grammar-stream")
    }
    assert statuses["harmony-grammar-stream"] == statuses["harmony-grammar"]
    judged = sum(s not in ("skipped",) for _, s in statuses["harmony-grammar"])
    row = f"| harmony-grammar-stream | harmony-grammar | {judged} | {judged} | — | — |"
    assert "## Columns against each other" in page and row in page


def test_update_replaces_only_the_columns_run(tmp_path: Path) -> None:
    script = _script()
    budget = ["--per-topic", "1", "--wild", "1", "--out-dir", str(tmp_path)]
    first = script.main(["--engines", "harmony-grammar-strict,openai-harmony", *budget], log=str)
    second = script.main(["--engines", "harmony-grammar", "--update", *budget], log=str)
    assert list(second["engines"]) == [
        "harmony-grammar",
        "harmony-grammar-strict",
        "openai-harmony",
    ]
    for name in ("harmony-grammar-strict", "openai-harmony"):
        assert second["engines"][name] == first["engines"][name]
        assert second["versions"][name] == first["versions"][name]
    assert "measured" in second["engines"]["harmony-grammar"]
    page = (tmp_path / "engine-matrix.md").read_text(encoding="utf-8")
    assert "| harmony-grammar-strict |" in page and "| measured |" in page
    with pytest.raises(SystemExit, match="another budget"):
        script.main(["--engines", "harmony-grammar", "--update", *budget[2:], "--per-topic", "2"])


def test_an_unknown_engine_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _script().main(["--engines", "nope", "--out-dir", str(tmp_path)])
    assert exit_info.value.code == 2
