"""Rendering profiles, each against its reference.

* ``oss-harmony-0.0.11`` against oss-harmony 0.0.11 itself, in its own environment
  (``.venv-oss-harmony``, made by ``scripts/oss-harmony-venv.sh``; a subprocess speaks JSON
  lines to it);
* ``hf-chat-template`` against the model repo's template as TRL ships it, run by
  transformers' ``apply_chat_template`` with ``strftime_now`` pinned;
* ``omp`` against the rules of harmony-format.md §8, spelled out here.

Token-exact on every rendering case of the conformance suite and on generated conversations
(tools with nested schemas, tool loops, analysis kept and dropped, multi-byte text). Where the
HF template cannot be given a conversation, the profile raises RenderError, and the test
shows the template would indeed have lost something.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from harmony_grammar import parse
from harmony_grammar.conformance.adapters import render_with_harmony_grammar
from harmony_grammar.conformance.cases import load_cases
from harmony_grammar.conformance.interface import Unsupported
from harmony_grammar.conformance.references import (
    ReferenceUnavailable,
    hf_template_adapter,
    oss_harmony_adapter,
)
from harmony_grammar.conformance.requests import render_request
from harmony_grammar.conformance.runner import requests_for
from harmony_grammar.format.model import Message, RecipientPosition, Role
from harmony_grammar.rendering.conversation import Conversation, SystemContent, tool_call_message
from harmony_grammar.rendering.omp import (
    render_assistant_tool_calls,
    render_thinking,
    render_tool_call,
    render_tool_results,
    render_transcript,
)
from harmony_grammar.rendering.options import RenderOptions
from harmony_grammar.rendering.profiles import PROFILES, get_profile
from harmony_grammar.rendering.renderer import RenderError, render, rendered_messages
from tests.support.profile_conversations import generated_requests

OSS = "oss-harmony-0.0.11"
HF = "hf-chat-template"
RENDER_CASES = [c for c in load_cases() if c.is_render and "profile" not in c.data]
GENERATED = generated_requests(200)
#: Suite cases the HF template cannot be given, and why (the profile refuses them).
HF_REFUSED = {
    "rendering/prompt-for-user": "generation prompt is <|start|>assistant only",
    "rendering/two-calls": "one call per assistant message",
}


def _reference(name: str) -> Any:
    try:
        return oss_harmony_adapter() if name == OSS else hf_template_adapter()
    except ReferenceUnavailable as exc:
        pytest.skip(str(exc))


def _request(request: dict[str, Any], profile: str) -> dict[str, Any]:
    out = {**request, "profile": profile, "current_date": request.get("current_date", "2026-12-01")}
    if "auto_drop_analysis" in get_profile(profile).fixed_options:  # its own rule, always
        out.pop("auto_drop_analysis", None)
    return out


def _first_difference(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    a, b = ours["text"], theirs["text"]
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"text at {at}: ours {a[max(0, at - 60) : at + 60]!r}, reference {b[max(0, at - 60) : at + 60]!r}"


# -- token-exact against the references -------------------------------------------------


@pytest.mark.parametrize("profile", [OSS, HF])
@pytest.mark.parametrize("case", RENDER_CASES, ids=lambda c: c.id)
def test_every_suite_rendering_case_is_token_exact_with_the_reference(case: Any, profile: str) -> None:
    reference = _reference(profile)
    request = _request(requests_for(case)[0].request, profile)
    if profile == HF and case.id in HF_REFUSED:
        with pytest.raises(RenderError, match=rf"^hf-chat-template: .*{HF_REFUSED[case.id]}"):
            render_with_harmony_grammar(request)
        return
    ours, theirs = render_with_harmony_grammar(request), reference(request)
    assert ours["tokens"] == theirs["tokens"], _first_difference(ours, theirs)
    assert ours["text"] == theirs["text"]


@pytest.mark.parametrize("profile", [OSS, HF])
def test_generated_conversations_are_token_exact_with_the_reference(profile: str) -> None:
    reference = _reference(profile)
    compared, failures = 0, []
    for index, generated in enumerate(GENERATED):
        request = _request(generated, profile)
        ours, theirs = render_with_harmony_grammar(request), reference(request)
        compared += 1
        if ours["tokens"] != theirs["tokens"]:
            failures.append(f"#{index} ({request['mode']}): {_first_difference(ours, theirs)}")
    assert not failures, f"{len(failures)} of {compared} differ; first: {failures[0]}"
    assert compared == 200


def test_the_generated_conversations_cover_what_the_issue_asks_for() -> None:
    """Nested schemas, tool loops, analysis dropped and kept, multi-byte text: counted on the
    renderings themselves, so the generator cannot quietly stop producing them."""
    nested = loops = dropped = kept = multibyte = 0
    for request in GENERATED:
        conversation, options = render_request(_request(request, HF))
        text = render(conversation, options)
        body = request["conversation"]
        nested += any('"properties"' in json.dumps(t["function"].get("parameters", {}))[14:] for t in body.get("tools", []))
        loops += sum(m["role"] == "tool" for m in body["messages"]) >= 2
        thoughts = [m["reasoning_content"] for m in body["messages"] if "reasoning_content" in m]
        dropped += any(f"<|channel|>analysis<|message|>{t}<|end|>" not in text for t in thoughts)
        kept += any(f"<|channel|>analysis<|message|>{t}<|end|>" in text for t in thoughts)
        multibyte += any(ord(ch) > 0x7F for ch in text)
    assert min(nested, loops, dropped, kept, multibyte) >= 20, (nested, loops, dropped, kept, multibyte)


def test_the_hf_refusals_are_real_losses_in_the_template() -> None:
    """Two calls in one assistant message: the template writes only the first (so the profile
    refuses rather than render something the template would not)."""
    reference = _reference(HF)
    two_calls = next(c for c in RENDER_CASES if c.id == "rendering/two-calls")
    request = _request(requests_for(two_calls)[0].request, HF)
    calls = next(m for m in request["conversation"]["messages"] if m.get("tool_calls"))["tool_calls"]
    text = reference(request)["text"]
    assert len(calls) == 2
    assert text.count("<|call|>") == 1  # the second call is gone


def test_the_oss_reference_renders_its_own_profile_only() -> None:
    reference = _reference(OSS)
    with pytest.raises(Unsupported):
        reference({"kind": "render", "conversation": {"messages": []}, "mode": "conversation"})


# -- what each profile renders differently (docs/rendering.md's table) --------------------


def _call_conversation() -> Conversation:
    return Conversation(
        (
            Message(Role.USER, "Weather in Zürich?"),
            Message(Role.ASSISTANT, "Look it up.", channel="analysis"),
            tool_call_message("functions.get_weather", '{"city": "Zürich"}', content_type="json"),
            Message(Role.TOOL, '{"t": 20}', name="functions.get_weather", recipient="assistant", channel="commentary"),
            Message(Role.ASSISTANT, "20 °C", channel="final"),
        )
    )


def test_oss_harmony_moves_commentary_recipients_and_constrains_every_content_type() -> None:
    text = render(_call_conversation(), profile=OSS)
    assert "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" in text
    assert "<|start|>functions.get_weather<|channel|>commentary to=assistant<|message|>" in text
    python_call = Conversation((tool_call_message("python", "print(1)", channel="analysis", content_type="code"),))
    assert render(python_call, profile=OSS) == "<|start|>assistant to=python<|channel|>analysis <|constrain|>code<|message|>print(1)<|call|>"
    assert render(python_call) == "<|start|>assistant to=python<|channel|>analysis code<|message|>print(1)<|call|>"


def test_omp_renders_history_by_the_format_notes() -> None:
    assert render_tool_call("get_weather", {"city": "Zürich"}) == (
        '<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{"city":"Zürich"}<|call|>'
    )
    assert render_assistant_tool_calls([("a", "{}"), ("functions.b", '{"x": [1, 2]}')]) == (
        "<|start|>assistant<|channel|>commentary to=functions.a<|message|>{}<|call|>"
        '<|start|>assistant<|channel|>commentary to=functions.b<|message|>{"x":[1,2]}<|call|>'
    )
    assert render_tool_results([("a", '{"ok": 1}'), ("functions.b", "plain é")]) == (
        '<|start|>functions.a to=assistant<|channel|>commentary<|message|>{"ok": 1}<|end|>'
        "<|start|>functions.b to=assistant<|channel|>commentary<|message|>plain é<|end|>"
    )
    assert render_thinking("hmm") == "<|start|>assistant<|channel|>analysis<|message|>hmm<|end|>"


def test_omp_transcript_orders_each_generation_thinking_text_calls() -> None:
    conversation = Conversation(
        (
            Message(Role.USER, "go"),
            Message(Role.ASSISTANT, "I will check.", channel="commentary"),  # a preamble
            tool_call_message("functions.f", '{"a": 1}'),
            Message(Role.ASSISTANT, "thinking", channel="analysis"),
        )
    )
    assert render_transcript(conversation) == (
        "<|start|>user<|message|>go<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>thinking<|end|>"
        "<|start|>assistant<|channel|>final<|message|>I will check.<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.f<|message|>{"a":1}<|call|>'
    )


def test_omp_refuses_arguments_that_are_not_json() -> None:
    conversation = Conversation((Message(Role.USER, "x"), tool_call_message("python", "print(1)")))
    with pytest.raises(RenderError, match=r"^omp: messages\[1\]: .*compact JSON"):
        render(conversation, profile="omp")


@pytest.mark.parametrize(
    ("messages", "where", "why"),
    [
        (
            [tool_call_message("functions.f", "{}"), tool_call_message("functions.g", "{}")],
            2,
            "one call per assistant message",
        ),
        (
            [
                tool_call_message("functions.f", "{}"),
                Message(Role.TOOL, "r", name="functions.g", recipient="assistant", channel="commentary"),
            ],
            2,
            "latest call",
        ),
        ([Message(Role.ASSISTANT, "t", channel="analysis"), Message(Role.USER, "u")], 1, "analysis with no call"),
        ([Message(Role.USER, "u", name="alice")], 1, "author names"),
        ([Message(Role.DEVELOPER, "more rules")], 1, "one system or developer message"),
    ],
)
def test_hf_template_refusals_name_the_profile_and_the_message(messages: list[Message], where: int, why: str) -> None:
    conversation = Conversation((SystemContent(), *messages))
    with pytest.raises(RenderError, match=rf"^hf-chat-template: messages\[{where}\]: .*{why}"):
        render(conversation, profile=HF)


def test_hf_template_writes_todays_date_when_the_conversation_has_none() -> None:
    import datetime

    text = render(Conversation((SystemContent(), Message(Role.USER, "hi"))), profile=HF)
    assert f"Current date: {datetime.date.today():%Y-%m-%d}\n" in text


@pytest.mark.parametrize("profile", list(PROFILES))
def test_every_profile_reads_back_as_its_rendered_messages(profile: str) -> None:
    for generated in GENERATED[:60]:
        conversation, options = render_request(_request(generated, profile))
        options = dataclasses.replace(options, next_turn=None)
        ids = render(conversation, options, tokens=True)
        want = rendered_messages(conversation, options)
        got = parse(ids).messages
        assert [dataclasses.replace(m, span=None) for m in got] == list(want)


# -- the options object ------------------------------------------------------------------


def test_render_options_are_one_frozen_object_behind_the_keywords() -> None:
    conversation = _call_conversation()
    options = RenderOptions(profile=OSS, next_turn=Role.ASSISTANT)
    assert options.profile is get_profile(OSS) and options.next_turn == "assistant"
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.training = True  # type: ignore[misc]
    assert render(conversation, options) == render(conversation, profile=OSS, next_turn="assistant")
    # Keywords given beside the object replace its fields.
    assert render(conversation, options, profile="openai-harmony-0.0.8") == render(conversation, next_turn="assistant")
    assert RenderOptions(drop_rule="every-final", recipient_position="channel").position is RecipientPosition.CHANNEL


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"profile": "nope"}, "unknown profile 'nope': use one of openai-harmony-0.0.8"),
        ({"profile": OSS, "json_content_type": "bare"}, "json_content_type is decided by the profile oss-harmony-0.0.11"),
        ({"profile": HF, "auto_drop_analysis": False}, "auto_drop_analysis is decided by the profile hf-chat-template"),
        ({"profile": "omp", "drop_rule": "every-final"}, "drop_rule is decided by the profile omp"),
        ({"training": True, "next_turn": "assistant"}, "next_turn must be None"),
    ],
)
def test_options_that_do_not_go_together_are_refused(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RenderOptions(**keywords)


# -- the suite's profile cases -------------------------------------------------------------


@pytest.mark.parametrize(("impl", "profile"), [("oss-harmony", OSS), ("hf-chat-template", HF)])
def test_the_suites_profile_cases_pass_against_their_reference(impl: str, profile: str) -> None:
    from harmony_grammar.conformance.adapters import load_adapter
    from harmony_grammar.conformance.runner import run_suite

    _reference(profile)  # skip, with the reason, when it is not installed
    cases = [c for c in load_cases() if c.topic == "profiles"]
    card = run_suite(load_adapter(impl), cases, implementation=impl)
    mine = {c.id for c in cases if c.data["profile"] == profile}
    assert {r.case.id for r in card.results if r.status == "passed"} == mine
    assert {r.case.id for r in card.results if r.status == "skipped"} == {c.id for c in cases} - mine
    assert len(mine) >= 3


# -- training examples in each profile (prepare --profile) ---------------------------------


@pytest.mark.parametrize("profile", list(PROFILES))
def test_training_ids_are_the_profiles_rendering(profile: str) -> None:
    from harmony_grammar.training.render import render_training

    for generated in GENERATED[:40]:
        conversation, _ = render_request(_request(generated, profile))
        example = render_training(conversation, profile=profile, drop_scope="conversation", train_on="all")
        assert example.input_ids == render(conversation, profile=profile, training=True, tokens=True)


def test_hf_training_masks_what_the_model_writes_after_its_start() -> None:
    from harmony_grammar.format.vocabulary import load_encoding
    from harmony_grammar.training.render import render_training

    encoding = load_encoding()
    conversation = Conversation(
        (
            SystemContent(conversation_start_date="2026-12-01"),
            Message(Role.USER, "go"),
            Message(Role.ASSISTANT, "plan", channel="analysis"),
            tool_call_message("functions.f", '{"a":1}'),
            Message(Role.TOOL, "ok", name="functions.f", recipient="assistant", channel="commentary"),
            Message(Role.ASSISTANT, "why", channel="analysis"),
            Message(Role.ASSISTANT, "done", channel="final"),
        )
    )
    example = render_training(conversation, profile=HF, train_on="all")
    trained = [encoding.decode(example.input_ids[start:end]) for start, end in example.spans]
    assert trained == [
        # The call's analysis is dropped (a final follows); the call's to= is the model's own.
        ' to=functions.f<|channel|>commentary json<|message|>{"a": 1}<|call|>',
        "<|channel|>analysis<|message|>why<|end|><|start|>assistant<|channel|>final<|message|>done<|return|>",
    ]


def test_prepare_takes_a_profile(tmp_path, capsys) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from harmony_grammar.training.render import render_training
    from tests.support.cli_helpers import run_cli

    record = {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = tmp_path / "out.parquet"
    status, _, err = run_cli(capsys, "prepare", str(source), "-o", str(out), "--profile", HF)
    assert status == 0, err
    conversation, _ = render_request({"conversation": record, "mode": "training"})
    want = render_training(conversation, profile=HF).input_ids
    assert want != render_training(conversation).input_ids  # the template's system message
    assert pq.read_table(out).column("input_ids").to_pylist() == [want]


def test_text_spelling_a_control_token_stays_text_where_the_template_would_forge_it() -> None:
    """The one place the profile differs from the template on purpose (docs/rendering.md):
    the template's output is tokenized whole, so a user who types <|end|> ends the message."""
    reference = _reference(HF)
    request = _request({"kind": "render", "conversation": {"messages": [{"role": "user", "content": "a<|end|>b"}]}, "mode": "prompt"}, HF)
    ours, theirs = render_with_harmony_grammar(request)["tokens"], reference(request)["tokens"]
    end = 200007
    assert ours.count(end) == 2 and theirs.count(end) == 3  # system, user (+ the forged one)


def test_random_histories_render_as_the_template_writes_them_or_are_refused() -> None:
    """Random sequences of user messages, analysis, preambles, finals, calls and results
    (most of them nothing a host would send): wherever the profile renders, the template
    writes the very same text; everything else is a RenderError."""
    import random

    from harmony_grammar.conformance.references import hf_template_text
    from harmony_grammar.declarations.spec import ToolSpec
    from harmony_grammar.rendering.conversation import DeveloperContent

    _reference(HF)
    rng = random.Random(26)

    def message(kind: str) -> Message:
        if kind == "user":
            return Message(Role.USER, "u é")
        if kind in ("analysis", "commentary", "final"):
            return Message(Role.ASSISTANT, kind[:3], channel=kind)
        if kind.startswith("call"):
            return tool_call_message("functions." + kind[-1], '{"a": [1, "x"]}')
        return Message(Role.TOOL, '{"r": 1}', name="functions." + kind[-1], recipient="assistant", channel="commentary")

    kinds = ["user", "analysis", "commentary", "final", "call_f", "call_g", "tool_f", "tool_g"]
    tools = (ToolSpec("f", "F", {"type": "object", "properties": {"a": {"type": "array"}}}), ToolSpec("g", "G"))
    rendered = refused = 0
    for _ in range(600):
        messages = [message(rng.choice(kinds)) for _ in range(rng.randint(1, 7))]
        developer = DeveloperContent("inst" if rng.random() < 0.5 else None, tools)
        conversation = Conversation((SystemContent(conversation_start_date="2026-01-02"), developer, *messages))
        next_turn = rng.choice([None, "assistant"])
        try:
            ours = render(conversation, profile=HF, next_turn=next_turn)
        except RenderError:
            refused += 1
            continue
        rendered += 1
        assert ours == hf_template_text(conversation, next_turn), [(m.role.value, m.channel, m.recipient) for m in messages]
    assert rendered >= 100 and refused >= 100, (rendered, refused)


def test_random_header_fields_render_as_oss_harmony_renders_them() -> None:
    """Every author, channel, recipient and content type (built-in calls on analysis, results
    on other channels, named authors, ``code``), as messages no chat request can carry, each
    conversation sent to oss-harmony 0.0.11 itself."""
    import random

    from harmony_grammar.conformance.adapters import message_fields

    reference = _reference(OSS)
    rng = random.Random(11)
    roles = [Role.USER, Role.ASSISTANT, Role.ASSISTANT, Role.TOOL, Role.DEVELOPER]
    for _ in range(150):
        messages = []
        for _ in range(rng.randint(1, 5)):
            role = rng.choice(roles)
            name = "functions.f" if role is Role.TOOL else rng.choice([None, None, "bob"])
            messages.append(
                Message(
                    role,
                    rng.choice(["x", "é 東京", '{"a": 1}']),
                    name=name,
                    recipient=rng.choice([None, "functions.f", "python", "assistant", "browser.search"]),
                    channel=rng.choice([None, "analysis", "commentary", "final"]),
                    content_type=rng.choice([None, "json", "code", "<|constrain|>json", "text"]),
                )
            )
        conversation = Conversation(tuple(messages))
        ours = render(conversation, profile=OSS, auto_drop_analysis=False, tokens=True)
        fields = [{k: v for k, v in message_fields(m).items() if k != "terminator"} for m in messages]
        theirs = reference({"kind": "render_messages", "profile": OSS, "messages": fields})["tokens"]
        assert ours == theirs, [(m.role.value, m.recipient, m.channel, m.content_type) for m in messages]
