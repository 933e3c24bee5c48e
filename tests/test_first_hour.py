"""A new user's first hour (issue 35): the obvious ways of building a conversation work or
fail at once naming the fix, and every usage mistake of the CLI is exit 2 and one line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar import Conversation, Message, from_chat_completions, render
from harmony_grammar.format.model import RecipientPosition, Role, Terminator

# -- item 3: building a conversation -------------------------------------------------------


@given(role=st.sampled_from([r.value for r in Role]), content=st.text(max_size=20))
@settings(max_examples=30)
def test_message_takes_a_role_as_a_string(role, content):
    message = Message(role=role, content=content)
    assert message.role is Role(role) and message == Message(Role(role), content)


@given(role=st.text(max_size=12).filter(lambda s: s not in {r.value for r in Role}))
@settings(max_examples=30)
def test_message_refuses_an_unknown_role_when_made_listing_the_roles(role):
    with pytest.raises(ValueError) as caught:
        Message(role=role, content="hi")
    assert all(repr(r.value) in str(caught.value) for r in Role)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"role": 1, "content": "hi"}, "role"),
        ({"role": None, "content": "hi"}, "role"),
        ({"role": "user", "content": None}, "content"),
        ({"role": "assistant", "content": {"city": "Paris"}}, "json.dumps"),
        ({"role": "user", "content": "hi", "channel": 3}, "channel"),
        ({"role": "user", "content": "hi", "recipient": ["x"]}, "recipient"),
        ({"role": "user", "content": "hi", "terminator": "stop"}, "'end', 'call', 'return'"),
        ({"role": "user", "content": "hi", "recipient_position": "header"}, "'role'"),
    ],
)
def test_message_checks_every_field_when_made(fields, named):
    with pytest.raises((TypeError, ValueError)) as caught:
        Message(**fields)
    assert named in str(caught.value)


def test_message_converts_enum_fields_given_as_strings():
    message = Message(
        "assistant",
        "{}",
        recipient="functions.f",
        channel="commentary",
        terminator="call",
        recipient_position="channel",
    )
    assert message.terminator is Terminator.CALL
    assert message.recipient_position is RecipientPosition.CHANNEL
    assert render(Conversation.from_messages([message])) == (
        "<|start|>assistant<|channel|>commentary to=functions.f<|message|>{}<|call|>"
    )


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "hi"}],
        [Message("user", "hi"), {"role": "assistant", "content": "hello"}],
    ],
)
def test_from_messages_with_chat_dicts_names_from_chat_completions(messages):
    with pytest.raises(TypeError) as caught:
        Conversation.from_messages(messages)
    assert "from_chat_completions" in str(caught.value)


@pytest.mark.parametrize("item", ["hi", 3, ("user", "hi"), None])
def test_from_messages_with_other_items_names_message(item):
    with pytest.raises(TypeError) as caught:
        Conversation.from_messages([item])
    assert "Message(role=" in str(caught.value)


@given(
    st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=12)}
        ),
        min_size=1,
        max_size=4,
    )
)
@settings(max_examples=20, deadline=None)
def test_render_takes_a_request_dict_as_from_chat_completions_reads_it(messages):
    request = {"messages": messages}
    assert render(request) == render(from_chat_completions(request))
    assert render(request, next_turn="assistant", tokens=True) == render(
        from_chat_completions(request), next_turn="assistant", tokens=True
    )


def test_render_takes_a_responses_request_dict():
    from harmony_grammar import from_responses

    request = {"input": "Weather in Paris?", "instructions": "Be brief."}
    assert render(request) == render(from_responses(request))


@pytest.mark.parametrize("value", [[{"role": "user", "content": "hi"}], "hi", None])
def test_render_refuses_what_is_no_conversation_nor_request(value):
    with pytest.raises(TypeError) as caught:
        render(value)
    assert "Conversation.from_messages" in str(caught.value)
