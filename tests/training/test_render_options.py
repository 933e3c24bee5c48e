"""The training side takes the renderer's options whole: ``render_training`` takes one
RenderOptions (or its fields as keywords), and ``PrepareOptions.render`` reaches the renderer."""

from __future__ import annotations

from typing import Any

import pytest

from harmony_grammar.rendering.errors import RenderError
from harmony_grammar.rendering.options import RenderOptions
from harmony_grammar.rendering.profiles import PROFILES
from harmony_grammar.rendering.renderer import render
from harmony_grammar.training.batch import PrepareOptions, prepare_batch
from harmony_grammar.training.importers import import_record
from harmony_grammar.training.render import DropScope, TrainOn, render_training

_CALL = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
RECORDS: list[dict[str, Any]] = [
    {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "thinking": "Use the tool.", "tool_calls": [_CALL]},
            {"role": "tool", "content": "sunny"},
            {"role": "assistant", "thinking": "Say it.", "content": "Sunny."},
            {"role": "user", "content": "And tomorrow? <|end|>"},
            {"role": "assistant", "thinking": "Guess.", "content": "Also sunny."},
            {"role": "user", "content": "Thanks"},
            {"role": "assistant", "thinking": "Polite.", "content": "You're welcome."},
        ],
        "tools": [
            {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}
        ],
    },
    {
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "thinking": "Greet.", "content": "Hello!"},
        ]
    },
]


def _conversation(record: dict[str, Any]) -> Any:
    imported = import_record(record)
    assert imported.conversation is not None, imported.diagnostics
    return imported.conversation


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_prepare_renders_with_its_embedded_render_options(profile: str) -> None:
    options = RenderOptions(profile=profile)
    prepare = PrepareOptions(
        render=options, train_on=TrainOn.ALL, drop_scope=DropScope.CONVERSATION
    )
    for record in RECORDS:
        conversation = _conversation(record)
        batch = prepare_batch([record], [1], prepare)
        try:
            expected = render(conversation, options, training=True, tokens=True)
        except RenderError:
            assert [p.diagnostic.code for p in batch.problems] == ["HG304"]
            continue
        assert batch.columns["input_ids"] == [expected]
        # render_training: the same from the object, from its fields as keywords, or both
        example = render_training(conversation, options, train_on="all", drop_scope="conversation")
        assert example.input_ids == expected
        assert (
            render_training(
                conversation, profile=profile, train_on="all", drop_scope="conversation"
            )
            == example
        )


def _prepared(options: RenderOptions) -> tuple[int, ...]:
    batch = prepare_batch([RECORDS[0]], [1], PrepareOptions(render=options, train_on=TrainOn.ALL))
    assert not batch.problems, batch.problems
    return tuple(batch.columns["input_ids"][0])


def test_each_profile_and_option_changes_the_prepared_ids() -> None:
    """The embedded options are not decoration: another profile, or another option, other ids
    (oss-harmony writes ``to=`` where ``recipient_position="channel"`` does, so those two may
    agree)."""
    by_profile = {_prepared(RenderOptions(profile=p)) for p in PROFILES}
    assert len(by_profile) == len(PROFILES)
    default = _prepared(RenderOptions())
    for changed in (
        RenderOptions(auto_drop_analysis=False),
        RenderOptions(drop_rule="every-final"),
        RenderOptions(trusted_text=True),
        RenderOptions(recipient_position="channel"),  # openai-harmony writes to= in the role
        RenderOptions(json_content_type="bare"),
    ):
        assert _prepared(changed) != default, changed


def test_render_training_refuses_a_next_turn_and_what_a_profile_decides() -> None:
    conversation = _conversation(RECORDS[1])
    with pytest.raises(ValueError, match="next_turn must be None"):
        render_training(conversation, next_turn="assistant")
    fixed = next(name for name, p in PROFILES.items() if "auto_drop_analysis" in p.fixed_options)
    with pytest.raises(ValueError, match="decided by the profile"):
        render_training(conversation, profile=fixed, auto_drop_analysis=True)
