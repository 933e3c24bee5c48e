"""The whole-turn GBNF for llama.cpp (generation/turn_gbnf.py): free text without
special-token spellings and JSON strings without a raw ``<`` (read by llguidance's GBNF
reader over bytes, each ``<[id]>`` as its spelling, as llama.cpp's character rules see it),
and the stop and banned ids. The turn's shapes are checked on a real llama-server
(tests/gateway/test_engines_real.py): llguidance's lexer reads adjacent GBNF literals differently
from llama.cpp's character walk, so it is no model of the whole turn."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

llguidance = pytest.importorskip("llguidance")

from harmony_grammar.format.tokens import ControlToken  # noqa: E402
from harmony_grammar.format.vocabulary import load_encoding  # noqa: E402
from harmony_grammar.generation import TurnOptions, completion_grammar  # noqa: E402
from harmony_grammar.generation.turn_gbnf import (  # noqa: E402
    FREE_TEXT_RULES,
    SPECIAL_SPELLING,
    banned_ids,
)
from harmony_grammar.schema.matcher import byte_tokenizer  # noqa: E402

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}, "required": ["q"]}
TOOLS = {"lookup": SCHEMA}
_TOKEN = re.compile(r"<\[(\d+)\]>")


def _matcher(gbnf: str) -> Any:
    """llguidance reading ``gbnf`` over bytes, each ``<[id]>`` as its token's spelling: as
    llama.cpp's character rules see a special token (llguidance's GBNF reader has no ids)."""
    spelling = {token.id: token.value for token in ControlToken}
    text = _TOKEN.sub(lambda m: json.dumps(spelling[int(m.group(1))]), gbnf)
    lark = llguidance.gbnf_to_lark.gbnf_to_lark(text)
    assert llguidance.LLMatcher.validate_grammar(lark, byte_tokenizer()) == ""
    return llguidance.LLMatcher(byte_tokenizer(), lark, log_level=0)


def _accepts(matcher: Any, text: str) -> bool:
    matcher = matcher.deep_copy()
    ok = bool(matcher.consume_tokens(list(text.encode("utf-8"))))
    return ok and bool(matcher.is_accepting())


def test_every_special_token_is_spelled_as_free_text_excludes() -> None:
    encoding = load_encoding()
    specials = encoding.special_tokens_set
    assert len(specials) > 1000
    assert all(SPECIAL_SPELLING.fullmatch(name) for name in specials)


_FREE = _matcher("root ::= text\n" + "\n".join(FREE_TEXT_RULES) + "\n")


@given(st.text(alphabet="<|>az_9 Z-\n\u00e9", max_size=24))
def test_free_text_is_any_text_without_a_special_spelling(text: str) -> None:
    assert _accepts(_FREE, text) == (SPECIAL_SPELLING.search(text) is None)


def _body_matcher(schema: Any) -> Any:
    gbnf = completion_grammar({"f": schema}, target="gbnf", tool_choice="required",
                              allow_analysis=False, allow_preamble=False)
    return _matcher(gbnf), "<|channel|>commentary to=functions.f <|constrain|>json<|message|>"


@given(st.text(alphabet="<|>ab\"\\\u00e9\n", max_size=12))
def test_json_strings_spell_lt_only_escaped(value: str) -> None:
    matcher, header = _body_matcher({"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]})
    plain = json.dumps({"s": value}, separators=(",", ":"), ensure_ascii=False)
    escaped = plain.replace("<", "\\u003c")
    assert _accepts(matcher, header + escaped)
    assert json.loads(escaped) == {"s": value}  # the same value
    assert _accepts(matcher, header + plain) == ("<" not in value)


def test_stop_tokens_are_never_named_and_the_unused_ones_are_banned() -> None:
    for choice, banned_stop in (("auto", set()), ("required", {200002}), ("none", {200012})):
        gbnf = completion_grammar(TOOLS, target="gbnf", tool_choice=choice)
        assert "<[200012]>" not in gbnf and "<[200002]>" not in gbnf
        banned = set(banned_ids(TOOLS if choice != "none" else {}, TurnOptions(tool_choice=choice)))
        assert banned & {200002, 200012} == banned_stop
        assert 199999 in banned and not banned & {200005, 200006, 200007, 200008}


def test_gbnf_rule_names_are_llama_cpp_names() -> None:
    # llama.cpp's rule names are letters, digits and '-' (no '_').
    gbnf = completion_grammar(TOOLS, target="gbnf", recipient_position="either")
    names = [line.split(" ::= ")[0] for line in gbnf.splitlines()]
    assert all(re.fullmatch(r"[A-Za-z0-9-]+", name) for name in names)
