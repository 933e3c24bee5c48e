"""The tool kinds agents send: namespaces, custom tools (free or under a Lark/regex grammar),
hosted tools; rendered as Harmony, constrained by the turn grammar, read back as the SDK's
items.

The grammar checks run the turn grammar itself (llguidance over o200k_harmony) on whole turns,
and compare a custom tool's body language with the client's grammar compiled alone, so the
nesting can neither widen nor narrow what the client asked for.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harmony_grammar.bridges.chat import ChatCompletionStream
from harmony_grammar.bridges.responses import ResponsesStream, to_responses
from harmony_grammar.declarations.custom import CustomBody
from harmony_grammar.declarations.toolset import tool_schemas, tool_targets
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.tokens import ControlToken
from harmony_grammar.generation.custom_grammar import custom_body_rules
from harmony_grammar.generation.options import TurnGrammarError
from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.rendering.chat import from_chat_completions
from harmony_grammar.rendering.renderer import render
from harmony_grammar.rendering.responses import ResponsesError, from_responses

from ..support.openai_sdk import check_chunk, check_event, check_response

llguidance = pytest.importorskip("llguidance")

OBJECT = {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}
PATCH_GRAMMAR = (
    "start: begin_patch hunk+ end_patch\n"
    'begin_patch: "*** Begin Patch" LF\n'
    'end_patch: "*** End Patch" LF?\n'
    "hunk: add_hunk | delete_hunk\n"
    'add_hunk: "*** Add File: " filename LF add_line+\n'
    'delete_hunk: "*** Delete File: " filename LF\n'
    "filename: /(.+)/\n"
    'add_line: "+" /(.*)/ LF -> line\n'
    "%import common.LF\n"
)
NUMBER_RE = "[0-9]+(-[a-z]{1,3})?"
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "name": "run", "parameters": OBJECT},
    {
        "type": "namespace",
        "name": "agents",
        "description": "Sub-agents.",
        "tools": [
            {"type": "function", "name": "spawn", "description": "Start one.", "parameters": OBJECT}
        ],
    },
    {
        "type": "custom",
        "name": "apply_patch",
        "description": "Edit files.",
        "format": {"type": "grammar", "syntax": "lark", "definition": PATCH_GRAMMAR},
    },
    {"type": "custom", "name": "note"},
    {
        "type": "custom",
        "name": "ticket",
        "format": {"type": "grammar", "syntax": "regex", "definition": NUMBER_RE},
    },
    {"type": "web_search", "external_web_access": False},
]
CALLABLE = [t for t in TOOLS if t["type"] != "web_search"]


# -- what the tools read as ---------------------------------------------------------------


def test_targets_are_keyed_by_the_recipient_a_call_is_written_to() -> None:
    targets = tool_targets(CALLABLE)
    assert list(targets) == [
        "functions.run",
        "functions.apply_patch",
        "functions.note",
        "functions.ticket",
        "agents.spawn",
    ]
    assert targets["functions.note"] == CustomBody()
    assert targets["functions.ticket"] == CustomBody("regex", NUMBER_RE)
    # The functions namespace, as the parser checks calls: custom bodies are not JSON.
    assert set(tool_schemas(CALLABLE)) == {"run", "apply_patch", "note", "ticket"}


def test_two_tools_with_one_recipient_are_refused() -> None:
    twice = [
        *CALLABLE,
        {"type": "namespace", "name": "agents", "tools": [{"type": "function", "name": "spawn"}]},
    ]
    with pytest.raises(ValueError, match=re.escape("agents.spawn")):
        tool_targets(twice)


# -- rendering ----------------------------------------------------------------------------


def _developer(request: dict[str, Any]) -> str:
    text = render(from_responses(request), next_turn="assistant")
    start = text.index("<|start|>developer<|message|>")
    return text[start : text.index("<|end|>", start)]


def test_a_namespace_is_its_own_section_and_a_custom_tool_takes_raw_text() -> None:
    developer = _developer({"input": "hi", "tools": TOOLS})
    assert (
        "## agents\n\n// Sub-agents.\nnamespace agents {\n\n// Start one.\ntype spawn = (_: {\n"
        "task: string,\n}) => any;\n\n} // namespace agents"
    ) in developer
    assert (
        "// Edit files.\n// The input is raw text, not JSON: write it as is.\n"
        "// It must match this Lark grammar:\n// start: begin_patch hunk+ end_patch\n"
    ) in developer
    assert "type apply_patch = (_: string) => any;" in developer
    assert (
        "// It must match this regular expression:\n// [0-9]+(-[a-z]{1,3})?\ntype ticket"
        in developer
    )
    assert "web_search" not in developer  # hosted: left out


# Half the profile's budget: each example compiles a turn grammar and walks it.
@settings(max_examples=settings.default.max_examples // 2)
@given(
    description=st.text(max_size=40),
    definition=st.text(min_size=1, max_size=40).filter(str.strip),
)
def test_request_text_in_namespaces_and_custom_tools_never_makes_structure(
    description: str, definition: str
) -> None:
    request = {
        "input": "hi",
        "tools": [
            {
                "type": "namespace",
                "name": "ns",
                "description": description,
                "tools": [{"type": "function", "name": "f", "description": description}],
            },
            {
                "type": "custom",
                "name": "c",
                "description": description,
                "format": {"type": "grammar", "syntax": "regex", "definition": definition},
            },
        ],
    }
    plain = {"input": "hi", "tools": [{"type": "function", "name": "f"}]}
    specials = {token.id for token in ControlToken}

    def structure(body: dict[str, Any]) -> list[int]:
        ids = render(from_responses(body), next_turn="assistant", tokens=True)
        return [i for i in ids if i in specials]

    # Whatever the text spells, the prompt has exactly the control tokens of a plain one.
    assert structure(request) == structure(plain)


def test_calls_sent_back_render_with_their_recipients() -> None:
    request = {
        "tools": TOOLS,
        "input": [
            {"role": "user", "content": "go"},
            {
                "type": "custom_tool_call",
                "call_id": "c1",
                "name": "apply_patch",
                "input": "*** Begin Patch\n",
            },
            {"type": "custom_tool_call_output", "call_id": "c1", "output": "Done!"},
            {
                "type": "function_call",
                "call_id": "c2",
                "namespace": "agents",
                "name": "spawn",
                "arguments": '{"task":"x"}',
            },
            {"type": "function_call_output", "call_id": "c2", "output": "started"},
        ],
    }
    text = render(from_responses(request), next_turn="assistant")
    assert (
        "<|start|>assistant to=functions.apply_patch<|channel|>commentary<|message|>"
        "*** Begin Patch\n<|call|>"
        "<|start|>functions.apply_patch to=assistant<|channel|>commentary<|message|>Done!<|end|>"
        '<|start|>assistant to=agents.spawn<|channel|>commentary <|constrain|>json<|message|>{"task":"x"}<|call|>'
        "<|start|>agents.spawn to=assistant<|channel|>commentary<|message|>started<|end|>"
    ) in text


@pytest.mark.parametrize(
    ("choice", "declared"),
    [
        ({"type": "custom", "name": "note"}, "type note"),
        ({"type": "function", "name": "spawn", "namespace": "agents"}, "type spawn"),
        ({"type": "function", "name": "spawn"}, "type spawn"),
    ],
)
def test_a_named_tool_choice_keeps_only_that_tool(choice: dict[str, Any], declared: str) -> None:
    developer = _developer({"input": "hi", "tools": TOOLS, "tool_choice": choice})
    assert declared in developer
    assert developer.count("type ") == 1


def test_a_missing_named_choice_is_an_error_with_a_path() -> None:
    with pytest.raises(ResponsesError) as caught:
        from_responses(
            {"input": "hi", "tools": TOOLS, "tool_choice": {"type": "custom", "name": "nope"}}
        )
    assert caught.value.path == "tool_choice"


def test_chat_names_with_a_namespace_render_and_call_as_namespaces() -> None:
    request = {
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "agents.spawn", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "ok"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "agents.spawn", "parameters": OBJECT}},
            {"type": "function", "function": {"name": "run"}},
        ],
    }
    text = render(from_chat_completions(request), next_turn="assistant")
    assert "## agents\n\nnamespace agents {\n\ntype spawn = (_: {" in text
    assert "## functions\n\nnamespace functions {\n\ntype run = () => any;" in text
    assert (
        "<|start|>assistant to=agents.spawn<|channel|>commentary <|constrain|>json<|message|>{}<|call|>"
        in text
    )
    assert "<|start|>agents.spawn to=assistant<|channel|>commentary<|message|>ok<|end|>" in text
    # And the model's call comes back under the name the client declared.
    stream = ChatCompletionStream(namespaces=["agents"], id_factory=lambda i: f"call_{i}")
    chunks = stream.feed(
        "<|channel|>commentary to=agents.spawn <|constrain|>json<|message|>{}<|call|>"
    )
    chunks += stream.close()
    for chunk in chunks:
        check_chunk(chunk)
    calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls", [])]
    assert [c["function"]["name"] for c in calls] == ["agents.spawn"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


# -- the turn grammar ---------------------------------------------------------------------


def _matcher(grammar: str) -> Any:
    from harmony_grammar.generation.outlines_export import harmony_lltokenizer

    matcher = llguidance.LLMatcher(harmony_lltokenizer(), grammar, log_level=0)
    assert not matcher.is_error(), matcher.get_error()
    return matcher


def _accepts(matcher: Any, turn: str) -> bool:
    copy = matcher.deep_copy()
    ids = encode_harmony(turn)
    if copy.validate_tokens(ids) != len(ids):
        return False
    return bool(copy.consume_tokens(ids)) and bool(copy.is_accepting())


@pytest.fixture(scope="module")
def turn() -> Any:
    return _matcher(completion_grammar(CALLABLE))


def _call(recipient: str, body: str, *, json_body: bool) -> str:
    content_type = " <|constrain|>json" if json_body else ""
    return f"<|channel|>commentary to={recipient}{content_type}<|message|>{body}<|call|>"


def test_the_turn_calls_each_tool_at_its_recipient(turn: Any) -> None:
    assert _accepts(turn, _call("agents.spawn", '{"task":"a"}', json_body=True))
    assert not _accepts(turn, _call("functions.spawn", '{"task":"a"}', json_body=True))
    assert not _accepts(turn, _call("agents.run", '{"task":"a"}', json_body=True))
    assert _accepts(turn, _call("functions.note", "any text { at all", json_body=False))
    # A custom tool's input is raw text: no JSON content type.
    assert not _accepts(turn, _call("functions.note", "x", json_body=True))
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n"
    assert _accepts(turn, _call("functions.apply_patch", patch, json_body=False))
    assert not _accepts(
        turn, _call("functions.apply_patch", patch.replace("+hi", "hi"), json_body=False)
    )


@given(st.text(alphabet="0123456789-abcz x", max_size=10))
@example("12-ab")
def test_a_regex_tool_takes_exactly_what_its_regex_matches(turn: Any, body: str) -> None:
    expected = re.fullmatch(NUMBER_RE, body) is not None
    assert _accepts(turn, _call("functions.ticket", body, json_body=False)) is expected


_PATCH_PIECES = st.lists(
    st.sampled_from(
        [
            "*** Begin Patch\n",
            "*** End Patch\n",
            "*** End Patch",
            "*** Add File: ",
            "a.txt",
            "\n",
            "+",
            "line",
            "*** Delete File: ",
            "x",
        ]
    ),
    max_size=9,
)


@given(_PATCH_PIECES)
@example(["*** Begin Patch\n", "*** Add File: ", "a.txt", "\n", "+", "line", "\n", "*** End Patch"])
@example(["*** Begin Patch\n", "*** Delete File: ", "x", "\n", "*** End Patch\n"])
def test_a_lark_tool_takes_exactly_its_grammars_language(turn: Any, pieces: list[str]) -> None:
    body = "".join(pieces)
    alone = llguidance.LLMatcher(llguidance.LLTokenizer("byte"), PATCH_GRAMMAR, log_level=0)
    expected = alone.consume_tokens(list(body.encode())) and alone.is_accepting()
    assert _accepts(turn, _call("functions.apply_patch", body, json_body=False)) is expected


@pytest.mark.parametrize(
    ("definition", "problem"),
    [
        ('start: "a" <|call|>', "names a token"),
        ("start: <[200012]>", "names a token"),
        ('%llguidance {}\nstart: "a"', "sets llguidance options"),
        ('start: "a"\n}\nsneaky: "b"', "closes a brace"),
        ('start: x\nx: %json {"type": "string"', "brace open"),
        ("start: undefined_rule", "llguidance rejects"),
    ],
)
def test_a_lark_grammar_that_reaches_outside_its_body_is_refused(
    definition: str, problem: str
) -> None:
    with pytest.raises(TurnGrammarError, match=problem):
        custom_body_rules(CustomBody("lark", definition), "a0_")


def test_comments_and_literals_may_hold_braces_and_angles() -> None:
    definition = 'start: "}" "<|call|>" /[{<]/ // a } comment\n# and < another\n'
    start, rules = custom_body_rules(CustomBody("lark", definition), "a0_")
    matcher = llguidance.LLMatcher(
        llguidance.LLTokenizer("byte"), "\n".join([f"start: {start}", *rules]), log_level=0
    )
    assert matcher.consume_tokens(list(b"}<|call|><")) and matcher.is_accepting()


def test_a_bad_regex_is_refused() -> None:
    with pytest.raises(TurnGrammarError, match="regex"):
        custom_body_rules(CustomBody("regex", "(unclosed"), "a0_")


# -- reading the model's calls back -------------------------------------------------------


def test_calls_come_back_as_the_sdks_items() -> None:
    request = {"model": "gpt-oss", "input": "go", "tools": TOOLS}
    completion = _call("agents.spawn", '{"task":"a"}', json_body=True)
    response = to_responses(completion, request=request)
    check_response(response)
    (item,) = response["output"]
    assert (item["type"], item["namespace"], item["name"]) == ("function_call", "agents", "spawn")
    assert response["status"] == "completed"

    stream = ResponsesStream(request=request)
    events = stream.feed(_call("functions.ticket", "12-ab", json_body=False)) + stream.close()
    for event in events:
        check_event(event)
    kinds = [e["type"] for e in events]
    assert "response.custom_tool_call_input.delta" in kinds
    done = next(e for e in events if e["type"] == "response.custom_tool_call_input.done")
    assert done["input"] == "12-ab"
    final = events[-1]["response"]
    (call,) = final["output"]
    assert (call["type"], call["name"], call["input"]) == ("custom_tool_call", "ticket", "12-ab")
    assert "namespace" not in call and final["status"] == "completed"
    assert final["diagnostics"] == []  # the raw input is not checked as JSON


def test_reasoning_is_sealed_only_when_a_sealer_is_given() -> None:
    text = "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>"
    plain = to_responses(text)
    assert "encrypted_content" not in plain["output"][0]
    stream = ResponsesStream(seal=lambda t: f"sealed:{t}")
    events = stream.feed(text) + stream.close()
    for event in events:
        check_event(event)
    assert events[-1]["response"]["output"][0]["encrypted_content"] == "sealed:think"
    assert json.dumps(events).count("sealed:think") == 2  # output_item.done and the final


def test_the_structural_tag_says_namespaces_and_regex_tools_and_refuses_lark() -> None:
    from harmony_grammar.generation.xgrammar_tag import xgrammar_structural_tag

    without_lark = [t for t in CALLABLE if t["name"] != "apply_patch"]
    tag = json.dumps(xgrammar_structural_tag(without_lark))
    assert " to=agents.spawn" in tag and '"pattern": "[0-9]+(-[a-z]{1,3})?"' in tag
    with pytest.raises(TurnGrammarError, match="llguidance"):
        xgrammar_structural_tag(CALLABLE)


@pytest.mark.parametrize(
    "tools",
    [
        [{"type": "namespace", "name": "functions", "tools": [{"type": "function", "name": "y"}]}],
        [
            {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "a"}]},
            {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "b"}]},
        ],
    ],
)
def test_a_namespace_that_would_replace_another_is_refused(tools: list[dict[str, Any]]) -> None:
    # One section per name: a second would silently take the first one's tools away.
    with pytest.raises(ResponsesError) as caught:
        from_responses({"input": "hi", "tools": tools})
    assert caught.value.path is not None and caught.value.path.endswith(".name")


def test_a_chat_tool_named_into_the_functions_namespace_is_refused() -> None:
    from harmony_grammar.rendering.chat import ChatCompletionError

    tools = [{"type": "function", "function": {"name": "functions.run"}}]
    with pytest.raises(ChatCompletionError, match="name it 'run'"):
        from_chat_completions({"messages": [{"role": "user", "content": "x"}], "tools": tools})
