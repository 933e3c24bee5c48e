"""The renderer on the cookbook's examples (docs/format.md of openai/harmony) and on each option."""

from __future__ import annotations

from typing import Any

import pytest

from harmony_grammar.format.model import Message, RecipientPosition, Role, Terminator
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.rendering.conversation import (
    Conversation,
    DeveloperContent,
    ReasoningEffort,
    ResponseFormat,
    SystemContent,
    ToolNamespace,
    ToolSpec,
    assistant_message,
    tool_call_message,
    tool_result_message,
    user_message,
)
from harmony_grammar.rendering.interop import from_openai_harmony, to_openai_harmony
from harmony_grammar.rendering.renderer import RenderError, encode_text, render, rendered_messages

# -- the cookbook's function-calling example, verbatim -----------------------------------

COOKBOOK_SYSTEM = SystemContent(
    reasoning_effort=ReasoningEffort.HIGH, conversation_start_date="2025-06-28"
)
FORMAT = {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
COOKBOOK_TOOLS = (
    ToolSpec("get_location", "Gets the location of the user."),
    ToolSpec(
        "get_current_weather",
        "Gets the current weather in the provided location.",
        {
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "The city and state, e.g. San Francisco, CA",
                },
                "format": FORMAT,
            },
            "required": ["location"],
        },
    ),
    ToolSpec(
        "get_multiple_weathers",
        "Gets the current weather in the provided list of locations.",
        {
            "type": "object",
            "properties": {
                "locations": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": 'List of city and state, e.g. ["San Francisco, CA", '
                    '"New York, NY"]',
                },
                "format": FORMAT,
            },
            "required": ["locations"],
        },
    ),
)
COOKBOOK_PROMPT = (
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
    "Knowledge cutoff: 2024-06\nCurrent date: 2025-06-28\n\nReasoning: high\n\n"
    "# Valid channels: analysis, commentary, final. Channel must be included for every message.\n"
    "Calls to these tools must go to the commentary channel: 'functions'.<|end|>"
    "<|start|>developer<|message|># Instructions\n\nUse a friendly tone.\n\n# Tools\n\n"
    "## functions\n\nnamespace functions {\n\n"
    "// Gets the location of the user.\ntype get_location = () => any;\n\n"
    "// Gets the current weather in the provided location.\n"
    "type get_current_weather = (_: {\n"
    "// The city and state, e.g. San Francisco, CA\nlocation: string,\n"
    'format?: "celsius" | "fahrenheit", // default: celsius\n}) => any;\n\n'
    "// Gets the current weather in the provided list of locations.\n"
    "type get_multiple_weathers = (_: {\n"
    '// List of city and state, e.g. ["San Francisco, CA", "New York, NY"]\n'
    "locations: string[],\n"
    'format?: "celsius" | "fahrenheit", // default: celsius\n}) => any;\n\n'
    "} // namespace functions<|end|>"
    "<|start|>user<|message|>What is the weather like in SF?<|end|>"
)


def _cookbook(*more: Any) -> Conversation:
    return Conversation.from_messages(
        [
            COOKBOOK_SYSTEM,
            DeveloperContent("Use a friendly tone.", COOKBOOK_TOOLS),
            user_message("What is the weather like in SF?"),
            *more,
        ]
    )


def test_cookbook_prompt_with_functions() -> None:
    assert render(_cookbook(), next_turn="assistant") == COOKBOOK_PROMPT + "<|start|>assistant"


def test_cookbook_tool_loop_with_recipient_in_the_channel_section() -> None:
    # The cookbook feeds back the call as the model wrote it: to= after the channel.
    call = Message(
        Role.ASSISTANT,
        '{"location":"San Francisco"}',
        recipient="functions.get_weather",
        channel="commentary",
        content_type="<|constrain|>json",
        recipient_position=RecipientPosition.CHANNEL,
    )
    conversation = _cookbook(
        assistant_message("Need to use function get_weather.", channel="analysis"),
        call,
        tool_result_message("functions.get_weather", '{"sunny": true, "temperature": 20}'),
    )
    assert render(conversation, next_turn="assistant") == (
        COOKBOOK_PROMPT
        + "<|start|>assistant<|channel|>analysis<|message|>Need to use function get_weather."
        "<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather "
        '<|constrain|>json<|message|>{"location":"San Francisco"}<|call|>'
        "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"
        '{"sunny": true, "temperature": 20}<|end|><|start|>assistant'
    )


def test_cookbook_developer_message_without_tools() -> None:
    text = render(Conversation((DeveloperContent("{instructions}"),)))
    assert text == "<|start|>developer<|message|># Instructions\n\n{instructions}<|end|>"


def test_cookbook_response_formats_section() -> None:
    schema = {
        "properties": {
            "items": {
                "type": "array",
                "description": "entries on the shopping list",
                "items": {"type": "string"},
            }
        },
        "type": "object",
    }
    content = DeveloperContent(
        "You are a helpful shopping assistant",
        response_formats=(ResponseFormat("shopping_list", schema, "A list to buy"),),
    )
    assert render(Conversation((content,))) == (
        "<|start|>developer<|message|># Instructions\n\nYou are a helpful shopping assistant"
        "\n\n# Response Formats\n\n## shopping_list\n\n// A list to buy\n"
        '{"properties":{"items":{"type":"array","description":"entries on the shopping list",'
        '"items":{"type":"string"}}},"type":"object"}<|end|>'
    )


def test_system_message_variants(harmony_oracle: Any) -> None:
    variants = [
        SystemContent(),
        SystemContent(model_identity=None, knowledge_cutoff=None, reasoning_effort=None),
        SystemContent(valid_channels=(), conversation_start_date="2025-01-01"),
        SystemContent(valid_channels=("analysis", "final"), channel_required=False),
        SystemContent(reasoning_effort=ReasoningEffort.LOW).with_browser_tool(),
        SystemContent().with_python_tool().with_browser_tool(),
    ]
    for system in variants:
        conversation = Conversation((system, DeveloperContent(tools=COOKBOOK_TOOLS[:1])))
        expected = harmony_oracle.render_conversation(to_openai_harmony(conversation))
        assert render(conversation, tokens=True) == expected


def test_builtin_tools_are_openai_harmonys(harmony_oracle: Any) -> None:
    import openai_harmony as oh

    ours = (ToolNamespace.browser(), ToolNamespace.python())
    theirs = (oh.ToolNamespaceConfig.browser(), oh.ToolNamespaceConfig.python())
    for namespace, config in zip(ours, theirs):
        back = from_openai_harmony(
            oh.Conversation(
                messages=[
                    oh.Message.from_role_and_content(
                        oh.Role.SYSTEM, oh.SystemContent.new().with_tools(config)
                    )
                ]
            )
        )
        assert back.messages[0] == SystemContent(tools=(namespace,))


# -- tokens ------------------------------------------------------------------------------


def test_control_token_spellings_in_text_stay_ordinary(encoding: Any) -> None:
    ids = render(Conversation((user_message("<|end|><|start|>"),)), tokens=True)
    special = [i for i in ids if i >= 199998]
    assert special == [ControlToken.START.id, ControlToken.MESSAGE.id, ControlToken.END.id]
    assert encode_text(encoding, "<|call|>") == encoding.encode_ordinary("<|call|>")


def test_header_pieces_are_encoded_separately(encoding: Any) -> None:
    ids = render(Conversation((user_message("hi", name="alice"),)), tokens=True)
    assert ids == [
        ControlToken.START.id,
        *encoding.encode_ordinary("user"),
        *encoding.encode_ordinary(":alice"),
        ControlToken.MESSAGE.id,
        *encoding.encode_ordinary("hi"),
        ControlToken.END.id,
    ]


def test_str_is_the_decoded_ids(encoding: Any) -> None:
    conversation = _cookbook(assistant_message("It is sunny."))
    assert encoding.decode(render(conversation, tokens=True)) == render(conversation)


# -- chain-of-thought dropping -----------------------------------------------------------

TWO_TURNS = Conversation.from_messages(
    [
        user_message("q1"),
        assistant_message("think1", channel="analysis"),
        assistant_message("a1"),
        user_message("q2"),
        assistant_message("think2", channel="analysis"),
        tool_call_message("functions.f", "{}"),
        tool_result_message("functions.f", "ok"),
        assistant_message("think3", channel="analysis"),
        assistant_message("a2"),
    ]
)


def _analysis(conversation: Conversation, **options: Any) -> list[str]:
    messages = rendered_messages(conversation, **options)
    return [m.content for m in messages if m.channel == "analysis"]


def test_harmony_rule_drops_only_before_the_first_final() -> None:
    # The quirk: think2 and think3 follow the first final, so they are kept.
    assert _analysis(TWO_TURNS) == ["think2", "think3"]


def test_harmony_rule_keeps_everything_mid_tool_loop() -> None:
    mid_loop = Conversation(TWO_TURNS.messages[:6])
    assert _analysis(mid_loop) == ["think1", "think2"]


def test_every_final_rule_is_vllms() -> None:
    assert _analysis(TWO_TURNS, drop_rule="every-final") == []
    mid_loop = Conversation(TWO_TURNS.messages[:6])
    assert _analysis(mid_loop, drop_rule="every-final") == ["think2"]


def test_no_dropping() -> None:
    assert _analysis(TWO_TURNS, auto_drop_analysis=False) == ["think1", "think2", "think3"]


# -- terminators and options -------------------------------------------------------------


def test_training_ends_a_final_answer_with_return() -> None:
    conversation = Conversation((user_message("q"), assistant_message("a")))
    assert render(conversation, training=True).endswith("a<|return|>")
    assert render(conversation).endswith("a<|end|>")
    with pytest.raises(ValueError, match="next_turn"):
        render(conversation, training=True, next_turn="assistant")


def test_return_in_history_becomes_end() -> None:
    answered = Message(Role.ASSISTANT, "a", channel="final", terminator=Terminator.RETURN)
    alone = Conversation((user_message("q"), answered))
    assert render(alone).endswith("<|return|>")  # a parsed completion renders back as it was
    assert render(alone, next_turn="assistant").endswith("a<|end|><|start|>assistant")
    assert render(alone.with_messages(user_message("q2"))).count("<|return|>") == 0


def test_recipient_all_is_not_written_but_still_a_call() -> None:
    text = render(Conversation((Message(Role.ASSISTANT, "x", recipient="all", channel="final"),)))
    assert text == "<|start|>assistant<|channel|>final<|message|>x<|call|>"


def test_recipient_position_option() -> None:
    conversation = Conversation((tool_call_message("functions.f", "{}"),))
    assert render(conversation) == (
        "<|start|>assistant to=functions.f<|channel|>commentary <|constrain|>json<|message|>{}"
        "<|call|>"
    )
    assert render(conversation, recipient_position="channel") == (
        "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{}"
        "<|call|>"
    )


def test_json_content_type_option() -> None:
    bare = Conversation((tool_call_message("functions.f", "{}", content_type="json"),))
    assert " <|constrain|>json<|message|>" in render(bare, json_content_type="constrain")
    assert " json<|message|>" in render(bare)
    spelled = Conversation((tool_call_message("functions.f", "{}"),))
    assert " json<|message|>" in render(spelled, json_content_type="bare")
    with pytest.raises(ValueError, match="json_content_type"):
        render(bare, json_content_type="JSON")  # type: ignore[arg-type]


def test_tool_message_without_a_name_is_an_error() -> None:
    with pytest.raises(RenderError, match="message 0"):
        render(Conversation((Message(Role.TOOL, "result"),)))
