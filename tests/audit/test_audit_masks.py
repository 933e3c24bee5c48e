"""audit-masks on masks made by real tools.

* TRL's training template (``trl/chat_templates/gptoss_training.jinja``) through
  transformers' ``apply_chat_template(..., return_assistant_tokens_mask=True)``, with the
  project's offline Hugging Face tokenizer: the audit's segment counts must equal what this
  file computes on its own, with its own walk over the ids.
* The project's ``prepare``: its masks are the exact mask (no finding).
* Masks built the way Unsloth's and NeMo's published recipes describe them. These are the
  recipes re-done here in a few lines, NOT those projects' code (neither is installed):
  Unsloth's notebooks call ``train_on_responses_only`` with
  ``instruction_part="<|start|>user<|message|>"`` and
  ``response_part="<|start|>assistant<|channel|>final<|message|>"`` (train from after each
  response part up to the next instruction part); NeMo infers the mask from ``<|channel|>``
  (each assistant message is trained from its ``<|channel|>`` through its terminator).
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.audit import SEGMENTS, AuditOptions, audit_batch, audit_record
from harmony_grammar.cli.main import main
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.training.importers import import_record
from harmony_grammar.training.render import TrainOn, render_training

START, MESSAGE, CHANNEL = ControlToken.START.id, ControlToken.MESSAGE.id, ControlToken.CHANNEL.id
TERMINATOR_NAMES = {
    ControlToken.END.id: "end",
    ControlToken.RETURN.id: "return",
    ControlToken.CALL.id: "call_token",
}

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "units": {"type": "string", "enum": ["c", "f"]},
                "when": {"type": "object", "properties": {"day": {"type": "integer"}}},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}
TEXTS = ["Sunny.", "Il fait beau à Paris — 20 °C.", "東京は晴れ", "ok 👍", "two\nlines"]


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def generated_conversations(count: int, seed: int = 26) -> list[list[dict[str, Any]]]:
    """Chats TRL's template takes: single answers, tool loops, several turns, multi-byte."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        messages: list[dict[str, Any]] = []
        if rng.random() < 0.5:
            messages.append({"role": "system", "content": rng.choice(["Be brief.", "Réponds."])})
        for _turn in range(rng.randint(1, 3)):
            messages.append({"role": "user", "content": rng.choice(TEXTS)})
            for _ in range(rng.randint(0, 2)):
                step: dict[str, Any] = {
                    "role": "assistant",
                    "tool_calls": [
                        rng.choice(
                            [
                                _call("get_weather", {"city": rng.choice(TEXTS)}),
                                _call("search", {"q": rng.choice(TEXTS)}),
                            ]
                        )
                    ],
                }
                if rng.random() < 0.7:
                    step["thinking"] = rng.choice(TEXTS)
                messages.append(step)
                messages.append({"role": "tool", "content": json.dumps({"r": rng.choice(TEXTS)})})
            answer: dict[str, Any] = {"role": "assistant", "content": rng.choice(TEXTS)}
            if rng.random() < 0.7:
                answer["thinking"] = rng.choice(TEXTS)
            messages.append(answer)
        out.append(messages)
    return out


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    pytest.importorskip("transformers")
    from harmony_grammar.generation.hf import hf_tokenizer

    return hf_tokenizer()


@pytest.fixture(scope="module")
def trl_template() -> str:
    trl = pytest.importorskip("trl")
    path = Path(trl.__file__).parent / "chat_templates" / "gptoss_training.jinja"
    if not path.is_file():
        pytest.skip(f"this trl ({trl.__version__}) ships no gptoss_training.jinja")
    return path.read_text(encoding="utf-8")


def trl_masks(tokenizer: Any, template: str, chats: list[list[dict[str, Any]]]) -> list[Any]:
    rows = []
    for chat in chats:
        out = tokenizer.apply_chat_template(
            chat,
            tools=[WEATHER, SEARCH],
            chat_template=template,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        rows.append((list(out["input_ids"]), list(out["assistant_masks"])))
    return rows


def independent_segments(
    tokenizer: Any, ids: list[int], mask: list[int]
) -> dict[str, tuple[int, int]]:
    """Segment counts by a walk of this test's own: headers decoded with the HF tokenizer and
    read with string operations, nothing from harmony_grammar."""
    counts: Counter[str] = Counter()
    trained: Counter[str] = Counter()
    i = 0
    while i < len(ids):
        assert ids[i] == START, f"token {i} is not <|start|>"
        body = ids.index(MESSAGE, i) + 1
        header = tokenizer.decode(ids[i + 1 : body - 1])
        end = next(j for j in range(body, len(ids)) if ids[j] in TERMINATOR_NAMES)
        role_part, _, channel_part = header.partition("<|channel|>")
        author = role_part.split(" ")[0]
        channel = channel_part.split(" ")[0]
        recipient = next(
            (w[3:] for w in header.replace("<|channel|>", " ").split() if w.startswith("to=")),
            None,
        )
        if author in ("system", "developer", "user"):
            segment = author
        elif author != "assistant":
            segment = "tool_result"
        elif recipient is not None:
            segment = "call"
        elif channel == "analysis":
            segment = "analysis"
        elif channel == "final":
            segment = "final"
        else:
            segment = "preamble"
        for name, start, stop in (
            ("header", i, body),
            (segment, body, end),
            (TERMINATOR_NAMES[ids[end]], end, end + 1),
        ):
            counts[name] += stop - start
            trained[name] += sum(mask[start:stop])
        i = end + 1
    return {name: (counts[name], trained[name]) for name in SEGMENTS}


def test_trl_template_segment_counts_equal_an_independent_count(
    tokenizer, trl_template, tmp_path, capsys
):
    chats = generated_conversations(40)
    rows = trl_masks(tokenizer, trl_template, chats)
    batch = {"input_ids": [r[0] for r in rows], "assistant_masks": [r[1] for r in rows]}
    results = audit_batch(batch, AuditOptions())
    kinds: Counter[str] = Counter()
    totals: dict[str, list[int]] = {name: [0, 0] for name in SEGMENTS}
    for (ids, mask), segments, error in zip(rows, results["segments"], results["error"]):
        assert error is None
        expected = independent_segments(tokenizer, ids, mask)
        assert {name: tuple(c[:2]) for name, c in segments.items()} == expected
        kinds.update(name for name, (tokens, _) in expected.items() if tokens)
        for name, (tokens, trained) in expected.items():
            totals[name][0] += tokens
            totals[name][1] += trained
    # the command, on the same masks written as TRL's SFTTrainer would read them (Parquet)
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table(batch), tmp_path / "trl.parquet")
    main(["audit-masks", str(tmp_path / "trl.parquet"), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["records"] == data["audited"] == len(rows)
    assert {n: [s["tokens"], s["trained"]] for n, s in data["segments"].items()} == totals
    # the sample exercised every segment TRL's template writes
    assert set(kinds) >= {"system", "developer", "user", "tool_result", "analysis", "call"}
    assert {"final", "header", "end", "return", "call_token"} <= set(kinds)


def test_trl_template_findings(tokenizer, trl_template):
    chats = generated_conversations(20)
    rows = trl_masks(tokenizer, trl_template, chats)
    for (ids, mask), chat in zip(rows, chats):
        audit = audit_record(ids, mask)
        # TRL's {% generation %} starts before <|start|>assistant: the host's tokens are trained
        assert "generation-start-trained" in audit.findings
        assert "differs-from-exact" in audit.findings
        for clean in (
            "return-untrained",
            "call-untrained",
            "prompt-trained",
            "tool-result-trained",
        ):
            assert clean not in audit.findings
        # exactly the <|start|>assistant of each generation is off: 2 tokens per generation
        generations = sum(
            1
            for i, m in enumerate(chat)
            if m["role"] == "assistant" and (i == 0 or chat[i - 1]["role"] != "assistant")
        )
        assert audit.differing == 2 * generations
        assert audit.segments["header"][1] - audit.segments["header"][2] == 2 * generations


def _render(
    chat: list[dict[str, Any]], train_on: str = "all", keep_analysis: bool = False
) -> tuple[list[int], list[int]]:
    imported = import_record({"messages": chat, "tools": [WEATHER, SEARCH]})
    assert imported.conversation is not None, imported.diagnostics
    example = render_training(
        imported.conversation, train_on=train_on, auto_drop_analysis=not keep_analysis
    )
    return example.input_ids, example.assistant_masks


def unsloth_recipe(ids: list[int], encode: Any) -> list[int]:
    """train_on_responses_only as Unsloth's gpt-oss notebooks configure it (a re-done recipe)."""
    instruction = encode("<|start|>user<|message|>")
    response = encode("<|start|>assistant<|channel|>final<|message|>")

    def find(needle: list[int], start: int) -> int:
        for i in range(start, len(ids) - len(needle) + 1):
            if ids[i : i + len(needle)] == needle:
                return i
        return -1

    mask = [0] * len(ids)
    at = find(response, 0)
    while at >= 0:
        begin = at + len(response)
        stop = find(instruction, begin)
        stop = len(ids) if stop < 0 else stop
        mask[begin:stop] = [1] * (stop - begin)
        at = find(response, stop)
    return mask


def nemo_recipe(ids: list[int], encode: Any) -> list[int]:
    """Every assistant message from its <|channel|> through its terminator (a re-done recipe)."""
    assistant = encode("<|start|>assistant")
    mask = [0] * len(ids)
    for i in range(len(ids)):
        if ids[i : i + len(assistant)] == assistant:
            channel = ids.index(CHANNEL, i)
            end = next(j for j in range(channel, len(ids)) if ids[j] in TERMINATOR_NAMES)
            mask[channel : end + 1] = [1] * (end + 1 - channel)
    return mask


@pytest.fixture(scope="module")
def encode() -> Any:
    from harmony_grammar.format.vocabulary import load_encoding

    encoding = load_encoding()
    return lambda text: encoding.encode(text, allowed_special="all")


TOOL_LOOP = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "thinking": "Use the tool.", "tool_calls": [_call("get_weather", {"city": "Paris"})]},
    {"role": "tool", "content": "sunny"},
    {"role": "assistant", "thinking": "Say it.", "content": "Sunny."},
    {"role": "user", "content": "And Rome?"},
    {"role": "assistant", "thinking": "Again.", "tool_calls": [_call("get_weather", {"city": "Rome"})]},
]  # fmt: skip


def test_unsloth_recipe_never_trains_analysis_or_calls(encode):
    ids, _ = _render(TOOL_LOOP)
    audit = audit_record(ids, unsloth_recipe(ids, encode))
    assert audit.segments["analysis"][1] == 0 < audit.segments["analysis"][2]
    assert audit.segments["call"][1] == 0 < audit.segments["call"][2]
    assert audit.segments["final"][1] == audit.segments["final"][0]
    assert "call-untrained" in audit.findings  # the last turn stops at a call it never learns
    assert "differs-from-exact" in audit.findings
    assert "analysis-trained-unseen" not in audit.findings


def test_nemo_recipe_trains_earlier_analysis(encode):
    # Every channel of every turn, earlier turns' reasoning kept in the data (prepare
    # --keep-analysis; a template that keeps reasoning)
    ids, _ = _render(TOOL_LOOP, keep_analysis=True)
    mask = nemo_recipe(ids, encode)
    audit = audit_record(ids, mask)
    assert "analysis-trained-unseen" in audit.findings  # turn 1's analysis, dropped later
    assert audit.segments["analysis"][1] == audit.segments["analysis"][0]
    assert "differs-from-exact" in audit.findings
    assert "prompt-trained" not in audit.findings and "tool-result-trained" not in audit.findings


def test_exact_masks_have_no_findings_and_shifts_are_off_by_one():
    for chat in generated_conversations(15, seed=3):
        for train_on in TrainOn:
            ids, mask = _render(chat, train_on.value)
            audit = audit_record(ids, mask, train_on)
            assert audit.differing == 0
            if train_on is TrainOn.FINAL and audit.segments["call_token"][0]:
                # the policy itself never trains calls: flagged whatever --train-on says
                assert audit.findings in ((), ("call-untrained",))
            else:
                assert audit.findings == ()
            if train_on is TrainOn.ALL:
                assert all(c[1] == c[2] for c in audit.segments.values())
                assert audit.segments["return"] == (1, 1, 1)
        ids, mask = _render(chat)
        shifted = audit_record(ids, [0, *mask[:-1]])
        assert "off-by-one" in shifted.findings and "differs-from-exact" in shifted.findings


def test_everything_trained_and_unreadable_records():
    ids, mask = _render(TOOL_LOOP[:4])
    audit = audit_record(ids, [1] * len(ids))
    assert {"prompt-trained", "tool-result-trained", "generation-start-trained"} <= set(
        audit.findings
    )
    untrained_return = list(mask)
    untrained_return[-1] = 0
    assert "return-untrained" in audit_record(ids, untrained_return).findings
    assert audit_record(ids, mask[:-1]).findings == ("mask-invalid",)
    assert audit_record(ids, [2] * len(ids)).findings == ("mask-invalid",)
    assert audit_record(ids, None).findings == ("mask-invalid",)
    assert audit_record("text", mask).findings == ("undecodable",)
    broken = audit_record([START, 1000, 2000], [0, 0, 0])
    assert broken.findings == ("undecodable",) and broken.error and "HG" in broken.error


# ------------------------------------------------------------------------------- the CLI


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_cli_on_prepare_output_is_clean(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    chats = generated_conversations(12, seed=5)
    source = _jsonl(
        tmp_path / "chats.jsonl", [{"messages": c, "tools": [WEATHER, SEARCH]} for c in chats]
    )
    out = tmp_path / "train.parquet"
    assert main(["prepare", str(source), "-o", str(out)]) == 0
    capsys.readouterr()
    report = tmp_path / "audit.html"
    status = main(["audit-masks", str(out), "--train-on", "last", "--format", "json",
                   "--report", str(report)])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    assert data["records"] == data["audited"] == 12 and data["findings"] == []
    assert set(data["segments"]) == set(SEGMENTS)
    assert all(s["trained"] == s["expected"] for s in data["segments"].values())
    page = report.read_text(encoding="utf-8")
    embedded = page.split('id="data-segments">')[1].split("</script>")[0]
    assert json.loads(embedded) == data["segments"]
    cards = json.loads(page.split('id="data-summary">')[1].split("</script>")[0])
    assert cards == {"records": 12, "audited": 12, "with_findings": 0, "differing_tokens": 0}


def test_cli_json_text_output_and_jsonl(tmp_path, capsys, encode):
    rows = []
    for chat in generated_conversations(6, seed=9):
        ids, _ = _render(chat)
        rows.append({"input_ids": ids, "assistant_masks": unsloth_recipe(ids, encode)})
    rows.append({"input_ids": [START, 5, 6], "assistant_masks": [0, 0, 0]})
    rows.append({"input_ids": [1, 2]})
    data_path = _jsonl(tmp_path / "d.jsonl", rows)
    output = tmp_path / "per-record.jsonl"
    status = main(["audit-masks", str(data_path), "--format", "json", "--output", str(output)])
    data = json.loads(capsys.readouterr().out)
    assert status == 1
    assert data["records"] == 8 and data["audited"] == 6
    found = {f["code"]: f["records"] for f in data["findings"]}
    assert found["undecodable"] == 1 and found["mask-invalid"] == 1
    assert found["differs-from-exact"] == 6
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["record"] for r in records] == list(range(1, 9))  # JSONL lines, 1-based
    assert records[6]["findings"] == ["undecodable"] and records[6]["segments"] == {}
    total = sum(r["segments"]["final"]["trained"] for r in records if r["segments"])
    assert total == data["segments"]["final"]["trained"]
    status = main(["audit-masks", str(data_path)])
    text = capsys.readouterr().out
    assert status == 1 and "differs-from-exact" in text and f"{data_path}:7: undecodable" in text


def test_cli_reads_save_to_disk_and_reports_bad_columns(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    ids, mask = _render(TOOL_LOOP[:4])
    datasets.Dataset.from_dict({"ids": [ids, ids], "m": [mask, mask]}).save_to_disk(
        str(tmp_path / "saved")
    )
    status = main(["audit-masks", str(tmp_path / "saved"), "--ids", "ids", "--mask", "m",
                   "--format", "json"])  # fmt: skip
    assert status == 0 and json.loads(capsys.readouterr().out)["audited"] == 2
    status = main(["audit-masks", str(tmp_path / "saved"), "--ids", "ids", "--mask", "nope"])
    err = capsys.readouterr().err
    assert status == 2 and "no column 'nope'" in err and len(err.splitlines()) == 1
    assert main(["audit-masks", os.fspath(tmp_path / "missing.parquet")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_trailing_generation_prompt_is_header(encode):
    ids, mask = _render(TOOL_LOOP[:4])
    plain = audit_record(ids, mask)
    prompt = encode("<|start|>assistant")
    audit = audit_record(ids + prompt, mask + [0, 0])
    assert audit.findings == () and audit.error is None
    assert audit.segments["header"][0] == plain.segments["header"][0] + 2


_SPECIALS = [ControlToken.START.id, ControlToken.MESSAGE.id, ControlToken.CHANNEL.id,
             ControlToken.END.id, ControlToken.CALL.id, ControlToken.RETURN.id, 200_001, -1]  # fmt: skip


@given(st.data())
def test_any_ids_and_mask_give_an_audit_never_an_exception(data):
    ids, _ = _render(TOOL_LOOP[:4])
    cut = data.draw(st.integers(0, len(ids)))
    noise = data.draw(
        st.lists(st.one_of(st.sampled_from(_SPECIALS), st.integers(0, 201_100)), max_size=6)
    )
    where = data.draw(st.integers(0, cut))
    mutated = ids[:where] + noise + ids[where:cut]
    mask = data.draw(st.lists(st.integers(0, 1), min_size=len(mutated), max_size=len(mutated)))
    audit = audit_record(mutated, mask)
    assert (audit.error is None) == bool(audit.segments)
    if audit.segments:
        assert sum(c[0] for c in audit.segments.values()) == len(mutated)
        assert sum(c[1] for c in audit.segments.values()) == sum(mask)


def test_a_record_tokenized_another_way_gets_the_exact_mask_laid_on_its_own_tokens(encode):
    # The answer's text as one id per character: the same text, ids render_training would
    # never produce, so the exact mask is laid on the record message by message.
    answer = [i for ch in "Sunny day, 20 °C." for i in encode(ch)]
    prompt = encode("<|start|>user<|message|>Weather?<|end|><|start|>assistant")
    generated = encode("<|channel|>final<|message|>") + answer + [ControlToken.RETURN.id]
    ids = prompt + generated
    mask = [0] * len(prompt) + [1] * len(generated)
    assert render_training(import_record({"messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Sunny day, 20 °C."},
    ]}).conversation, train_on="all").input_ids != ids  # fmt: skip
    audit = audit_record(ids, mask)
    assert audit.findings == () and audit.differing == 0
    assert audit.segments["final"] == (len(answer), len(answer), len(answer))
    host = audit_record(ids, [0] * (len(prompt) - 2) + [1] * (len(generated) + 2))
    assert host.findings == ("generation-start-trained", "differs-from-exact")
    assert host.differing == 2


def test_an_unreadable_piece_is_one_undecodable_audit_per_record_and_crosses_processes():
    from harmony_grammar.audit import AuditTask
    from harmony_grammar.data.read import Failure

    task = AuditTask(AuditOptions())
    batch = task.unreadable(Failure("f.parquet", 5, 3, "f.parquet row group 0", "corrupt page"))
    assert batch.records == [5, 6, 7]
    assert all(a.findings == ("undecodable",) and "corrupt page" in (a.error or "")
               for a in batch.audits)  # fmt: skip
    pytest.importorskip("pyarrow")
    assert list(task.unpack(task.pack([batch, batch]))) == [batch, batch]
