"""render_training: ids token-exact with openai-harmony, and a mask that is exactly what the
model samples.

* Differential: the ids equal openai-harmony's ``render_conversation_for_training`` on the
  renderer's generated conversations (every mode of dropping) and on agent conversations.
* The mask, checked from outside: the masked-in spans, decoded and parsed as completions, are
  exactly the assistant messages of the chosen turns; no token of a system, developer, user
  or tool message (located by parsing the ids) is ever masked in; labels follow the mask.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar import render_training
from harmony_grammar.format.model import Message, Role
from harmony_grammar.format.parser import parse
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.rendering.conversation import (
    Conversation,
    ConversationItem,
    DeveloperContent,
    SystemContent,
    ToolSpec,
    assistant_message,
    tool_call_message,
    tool_result_message,
    user_message,
)
from harmony_grammar.rendering.interop import to_openai_harmony
from harmony_grammar.rendering.renderer import RenderError
from harmony_grammar.training.render import IGNORE_INDEX, TrainingExample
from tests.rendering.test_render_properties import (
    _assert_unreadable,
    _inert_tools,
    conversations,
    texts,
    well_formed_conversations,
)

openai_harmony = pytest.importorskip("openai_harmony")

TRAIN_ON = ["all", "last", "final"]

# -- agent conversations: turns of analysis, preambles, tool loops and finals -------------

WEATHER = ToolSpec(
    "get_weather",
    "Current weather.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@st.composite
def generations(draw: st.DrawFn, *, last: bool) -> list[ConversationItem]:
    """One run the model samples: maybe analysis, maybe a preamble, then a call or a final."""
    out: list[ConversationItem] = []
    if draw(st.booleans()):
        out.append(assistant_message(draw(texts), channel="analysis"))
    ends_with_call = not last and draw(st.booleans())
    if ends_with_call:
        if draw(st.booleans()):
            out.append(assistant_message(draw(texts), channel="commentary"))  # a preamble
        out.append(tool_call_message("functions.get_weather", draw(texts)))
        out.append(tool_result_message("functions.get_weather", draw(texts)))
    else:
        out.append(assistant_message(draw(texts)))
    return out


@st.composite
def agent_conversations(draw: st.DrawFn) -> Conversation:
    items: list[ConversationItem] = [SystemContent()]
    if draw(st.booleans()):
        items.append(DeveloperContent(draw(texts), (WEATHER,)))
    for _ in range(draw(st.integers(1, 3))):
        items.append(user_message(draw(texts)))
        for _ in range(draw(st.integers(0, 2))):
            items += draw(generations(last=False))
        items += draw(generations(last=True))
    return Conversation.from_messages(items)


# -- helpers ------------------------------------------------------------------------------


def _oracle(oracle: Any, items: Any, drop: bool) -> list[int]:
    config = openai_harmony.RenderConversationConfig(auto_drop_analysis=drop)
    return list(oracle.render_conversation_for_training(to_openai_harmony(items), config))


def _channel(item: ConversationItem) -> str | None:
    return item.channel if isinstance(item, Message) else None


def _breaks_turn(item: ConversationItem) -> bool:
    return not isinstance(item, Message) or item.role in (Role.USER, Role.SYSTEM, Role.DEVELOPER)


def _without_earlier_analysis(
    items: list[ConversationItem], rule: str = "harmony"
) -> list[ConversationItem]:
    """The spec of drop_scope="earlier-turns", written out: the drop rule evaluated on the
    items before the last turn (the last turn starts after the last user, system or developer
    message preceding the last assistant message)."""
    assistants = [
        i for i, m in enumerate(items) if isinstance(m, Message) and m.role == "assistant"
    ]
    if not assistants:
        return items
    cut = next((i + 1 for i in range(assistants[-1] - 1, -1, -1) if _breaks_turn(items[i])), 0)
    prompt = items[:cut]
    last = [m for m in prompt if isinstance(m, Message) and m.role == "assistant"]
    if rule == "every-final":
        # vLLM's: every analysis before the last assistant final.
        finals = [
            i
            for i, m in enumerate(prompt)
            if _channel(m) == "final" and m.role == "assistant"  # type: ignore[union-attr]
        ]
        limit = finals[-1] if finals else 0
    elif not last or last[-1].channel != "final":
        return items
    else:
        # openai-harmony's: only when the last assistant message is final, and then only
        # what precedes the first message of any role on the final channel.
        limit = next(i for i, m in enumerate(prompt) if _channel(m) == "final")
    return [m for i, m in enumerate(items) if not (i < limit and _channel(m) == "analysis")]


def _expected_trained(conversation: Conversation, train_on: str, **options: Any) -> list[Message]:
    """The assistant messages of the chosen turns, as the example renders them."""
    from harmony_grammar.rendering.renderer import rendered_messages

    items = list(conversation.messages)
    if options.get("auto_drop_analysis", True) and options.get("drop_scope") != "conversation":
        items = _without_earlier_analysis(items, options.pop("drop_rule", "harmony"))
        options = {**options, "auto_drop_analysis": False}
    options.pop("drop_scope", None)
    messages = list(rendered_messages(Conversation.from_messages(items), training=True, **options))
    if train_on == "final":
        return [m for m in messages if m.role == "assistant" and m.channel == "final"]
    if train_on == "last":
        last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
        if last is None:
            return []
        cut = next((i + 1 for i in range(last, -1, -1) if _breaks_turn(messages[i])), 0)
        messages = messages[cut:]
    return [m for m in messages if m.role == "assistant"]


def _check_mask(example: TrainingExample, expected: list[Message], encoding: Any) -> None:
    ids, mask = example.input_ids, example.assistant_masks
    assert len(mask) == len(ids) and set(mask) <= {0, 1}
    assert example.labels == [t if m else IGNORE_INDEX for t, m in zip(ids, mask)]
    assert example.trained_tokens == sum(mask)
    # The spans are the runs of ones, each right after a prompt's <|start|>assistant.
    runs = [(s, e) for s, e in example.spans]
    assert [i for s, e in runs for i in range(s, e)] == [i for i, m in enumerate(mask) if m]
    assistant_ids = encoding.encode("assistant")
    parsed: list[Message] = []
    for start, end in runs:
        assert ids[start - 1 - len(assistant_ids) : start] == [
            ControlToken.START.id,
            *assistant_ids,
        ]
        result = parse(ids[start:end], start="completion", role=Role.ASSISTANT)
        assert result.ok, result.diagnostics
        parsed += result.messages
    assert parsed == expected
    # No token of a system, developer, user or tool message is masked in.
    whole = parse(ids)
    assert whole.ok, whole.diagnostics
    for message in whole.messages:
        assert message.span is not None
        if message.role is not Role.ASSISTANT:
            assert not any(mask[message.span.start : message.span.end]), message


# -- ids ----------------------------------------------------------------------------------


@given(conversations(), st.sampled_from(TRAIN_ON), st.booleans())
def test_ids_match_openai_harmony_whole_conversation_drop(
    harmony_oracle: Any, encoding: Any, conversation: Conversation, train_on: str, drop: bool
) -> None:
    expected = _oracle(harmony_oracle, conversation, drop)
    try:
        example = render_training(
            conversation,
            train_on=train_on,
            auto_drop_analysis=drop,
            drop_scope="conversation",
            encoding=encoding,
        )
    except RenderError as exc:
        # A header field the parser cannot read back is refused (tests/rendering/test_render_properties).
        _assert_unreadable(str(exc), conversation, harmony_oracle.decode_utf8(expected))
        return
    if not _inert_tools(conversation):
        return  # tool text escaped by design (issue 27): openai-harmony writes it raw
    assert example.input_ids == expected
    assert example.text == harmony_oracle.decode_utf8(example.input_ids)


@given(st.one_of(conversations(), agent_conversations()), st.sampled_from(TRAIN_ON))
def test_ids_match_openai_harmony_with_earlier_turns_dropped(
    harmony_oracle: Any, encoding: Any, conversation: Conversation, train_on: str
) -> None:
    expected_items = _without_earlier_analysis(list(conversation.messages))
    expected = _oracle(harmony_oracle, expected_items, False)
    try:
        example = render_training(conversation, train_on=train_on, encoding=encoding)
    except RenderError as exc:
        _assert_unreadable(str(exc), conversation, harmony_oracle.decode_utf8(expected))
        return
    if not _inert_tools(conversation):
        return  # tool text escaped by design (issue 27): openai-harmony writes it raw
    assert example.input_ids == expected


@given(agent_conversations())
def test_multi_turn_default_equals_openai_harmony_default(
    harmony_oracle: Any, encoding: Any, conversation: Conversation
) -> None:
    # Once a final answer precedes the last turn, both scopes drop the same analysis.
    items = conversation.messages
    users = [i for i, m in enumerate(items) if isinstance(m, Message) and m.role == "user"]
    if not any(_channel(m) == "final" for m in items[: users[-1]]):
        return
    example = render_training(conversation, encoding=encoding)
    assert example.input_ids == _oracle(harmony_oracle, conversation, True)


# -- the mask -----------------------------------------------------------------------------


@given(
    st.one_of(agent_conversations(), well_formed_conversations),
    st.sampled_from(TRAIN_ON),
    st.sampled_from(
        [
            {},
            {"auto_drop_analysis": False},
            {"drop_scope": "conversation"},
            {"drop_rule": "every-final"},
        ]
    ),
)
def test_masked_spans_parse_back_to_the_chosen_assistant_messages(
    encoding: Any, conversation: Conversation, train_on: str, options: dict[str, Any]
) -> None:
    try:
        example = render_training(conversation, train_on=train_on, encoding=encoding, **options)
    except RenderError as exc:  # tool text no escape keeps inert (issue 27)
        assert not _inert_tools(conversation), exc
        return
    _check_mask(example, _expected_trained(conversation, train_on, **options), encoding)


# -- examples -----------------------------------------------------------------------------


def _tool_loop() -> Conversation:
    return Conversation.from_messages(
        [
            SystemContent(),
            DeveloperContent("Be brief.", (WEATHER,)),
            user_message("Weather in Paris?"),
            assistant_message("Call get_weather.", channel="analysis"),
            assistant_message("Checking.", channel="commentary"),
            tool_call_message("functions.get_weather", '{"city":"Paris"}'),
            tool_result_message("functions.get_weather", '{"sunny":true}'),
            assistant_message("It is sunny.", channel="analysis"),
            assistant_message("Sunny."),
        ]
    )


def _decoded_spans(example: TrainingExample, encoding: Any) -> list[str]:
    return [encoding.decode(example.input_ids[s:e]) for s, e in example.spans]


def test_a_tool_loop_masks_two_generations(encoding: Any) -> None:
    example = render_training(_tool_loop(), encoding=encoding)
    assert _decoded_spans(example, encoding) == [
        "<|channel|>analysis<|message|>Call get_weather.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
        '<|message|>{"city":"Paris"}<|call|>',
        "<|channel|>analysis<|message|>It is sunny.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>",
    ]


def test_final_only_masks_the_answer_after_its_header(encoding: Any) -> None:
    example = render_training(_tool_loop(), train_on="final", encoding=encoding)
    assert _decoded_spans(example, encoding) == ["<|channel|>final<|message|>Sunny.<|return|>"]


def test_a_single_turn_keeps_its_analysis_unless_scoped_like_openai_harmony(
    encoding: Any, harmony_oracle: Any
) -> None:
    conversation = Conversation.from_messages(
        [
            SystemContent(),
            user_message("2+2?"),
            assistant_message("Add.", channel="analysis"),
            assistant_message("4"),
        ]
    )
    ours = render_training(conversation, encoding=encoding)
    assert "Add." in _decoded_spans(ours, encoding)[0]
    theirs = render_training(conversation, drop_scope="conversation", encoding=encoding)
    assert theirs.input_ids == _oracle(harmony_oracle, conversation, True)
    assert "Add." not in theirs.text


def test_last_trains_only_the_last_turn(encoding: Any) -> None:
    conversation = Conversation.from_messages(
        [
            user_message("One?"),
            assistant_message("first thought", channel="analysis"),
            assistant_message("1"),
            user_message("Two?"),
            assistant_message("second thought", channel="analysis"),
            assistant_message("2"),
        ]
    )
    last = _decoded_spans(render_training(conversation, encoding=encoding), encoding)
    assert last == [
        "<|channel|>analysis<|message|>second thought<|end|>"
        "<|start|>assistant<|channel|>final<|message|>2<|return|>"
    ]
    every = render_training(conversation, train_on="all", encoding=encoding)
    # The first turn's analysis was dropped from the context, so its generation is the answer.
    assert _decoded_spans(every, encoding)[0] == "<|channel|>final<|message|>1<|end|>"
    kept = render_training(
        conversation, train_on="all", auto_drop_analysis=False, encoding=encoding
    )
    assert "first thought" in _decoded_spans(kept, encoding)[0]


def test_no_assistant_message_masks_nothing(encoding: Any) -> None:
    example = render_training(Conversation.from_messages([user_message("hi")]), encoding=encoding)
    assert example.spans == () and not any(example.assistant_masks)
    assert set(example.labels) == {IGNORE_INDEX}


def test_truncation_cuts_ids_mask_and_spans_together(encoding: Any) -> None:
    example = render_training(_tool_loop(), encoding=encoding)
    cut = example.truncated(example.spans[0][0] + 3)
    assert cut.input_ids == example.input_ids[: len(cut)]
    assert cut.assistant_masks == example.assistant_masks[: len(cut)]
    assert cut.spans == ((example.spans[0][0], example.spans[0][0] + 3),)
    assert example.truncated(len(example)) is example
    assert cut.text == example.text  # no encoding: the text stays whole
    decoded = example.truncated(len(cut), encoding)
    assert decoded.input_ids == cut.input_ids and decoded.text == encoding.decode(cut.input_ids)


def test_bad_options_raise_value_error() -> None:
    with pytest.raises(ValueError):
        render_training(Conversation(), train_on="everything")
    with pytest.raises(ValueError):
        render_training(Conversation(), drop_scope="nowhere")


# -- goldens ------------------------------------------------------------------------------


def test_cookbook_tool_loop_matches_openai_harmony(encoding: Any, harmony_oracle: Any) -> None:
    from tests.rendering.test_render import _cookbook

    conversation = _cookbook(
        assistant_message("Need to use function get_weather.", channel="analysis"),
        tool_call_message("functions.get_weather", '{"location":"San Francisco"}'),
        tool_result_message("functions.get_weather", '{"sunny": true, "temperature": 20}'),
        assistant_message("It is sunny.", channel="analysis"),
        assistant_message("Sunny and 20 °C in San Francisco."),
    )
    for drop in (True, False):
        example = render_training(
            conversation, auto_drop_analysis=drop, drop_scope="conversation", encoding=encoding
        )
        assert example.input_ids == _oracle(harmony_oracle, conversation, drop)
        _check_mask(
            example,
            _expected_trained(
                conversation, "last", auto_drop_analysis=drop, drop_scope="conversation"
            ),
            encoding,
        )


@pytest.mark.parametrize(
    "name", ["python_tool_conversation", "builtin_browser_completion", "readme_prompt"]
)
def test_spec_goldens_match_openai_harmony(encoding: Any, harmony_oracle: Any, name: str) -> None:
    from pathlib import Path

    from harmony_grammar.training.importers import import_record

    text = (Path(__file__).parents[1] / "fixtures" / "spec" / f"{name}.harmony").read_text(encoding="utf-8")
    imported = import_record(text.removesuffix("<|start|>assistant"), lenient=True)
    if imported.conversation is None:  # a completion golden: read it after <|start|>assistant
        imported = import_record("<|start|>assistant" + text, lenient=True)
    assert imported.conversation is not None, imported.diagnostics
    conversation = imported.conversation
    # openai-harmony writes every to= in the role section (a golden's own position has no
    # field in its classes).
    options: dict[str, Any] = {"auto_drop_analysis": False, "recipient_position": "role"}
    for train_on in TRAIN_ON:
        example = render_training(conversation, train_on=train_on, encoding=encoding, **options)
        assert example.input_ids == _oracle(harmony_oracle, conversation, False)
        _check_mask(example, _expected_trained(conversation, train_on, **options), encoding)
