"""The ``xgrammar`` target against the llguidance one: the same verdict on every text.

``emit_xgrammar`` reshapes the IR for xgrammar's matcher (loops as right-recursive rules, a
repetition followed by a literal folded into one rule, bounded ones unrolled); each reshape
must keep the language. xgrammar is a benchmark-only dependency: skipped without it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harmony_grammar.schema import schema_to_grammar
from harmony_grammar.schema.matcher import SchemaMatcher

xgrammar = pytest.importorskip("xgrammar")
pytest.importorskip("llguidance")
from xgrammar.testing import _is_grammar_accept_string as xgrammar_accepts  # noqa: E402

STRING_CASES: list[tuple[dict[str, Any], list[str]]] = [
    ({"type": "string"}, ["", "a", "ab\\n", '\\u00e9\\"', "x" * 40]),
    ({"type": "string", "maxLength": 3}, ["", "a", "abc", "abcd", "\\n\\n\\n", "é😀x"]),
    ({"type": "string", "minLength": 2, "maxLength": 3}, ["a", "ab", "abc", "abcd", "\\u0041b"]),
    ({"type": "string", "minLength": 3}, ["ab", "abc", "abcdefgh"]),
    ({"type": "string", "minLength": 40, "maxLength": 40}, ["y" * 39, "y" * 40, "y" * 41]),
    ({"type": "string", "pattern": "^a{2,4}b$"}, ["ab", "aab", "aaaab", "aaaaab", "aa"]),
    ({"enum": ["USD", "EUR", 'x"y']}, ["USD", "EUR", "EU", 'x\\"y', "US"]),
]


def _texts(cases: list[tuple[dict[str, Any], list[str]]]) -> list[tuple[dict[str, Any], str]]:
    return [(schema, f'"{body}"') for schema, bodies in cases for body in bodies]


@pytest.mark.parametrize(("schema", "text"), _texts(STRING_CASES))
@pytest.mark.parametrize("generation", [False, True])
def test_string_verdicts_match_llguidance(
    schema: dict[str, Any], text: str, generation: bool
) -> None:
    options = {"closed_objects": generation, "escaped_ascii": not generation}
    expected = SchemaMatcher(schema, **options).accepts(text)
    grammar = xgrammar.Grammar.from_ebnf(schema_to_grammar(schema, target="xgrammar", **options))
    assert xgrammar_accepts(grammar, text) == expected, (json.dumps(schema), text)


def test_arrays_and_objects_match_llguidance() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 2}, "maxItems": 3},
            "code": {"type": "string", "minLength": 1, "maxLength": 2},
        },
        "required": ["code"],
    }
    grammar = xgrammar.Grammar.from_ebnf(schema_to_grammar(schema, target="xgrammar"))
    matcher = SchemaMatcher(schema)
    texts = [
        '{"code":"a"}',
        '{"code":""}',
        '{"code":"abc"}',
        '{"tags":[],"code":"ab"}',
        '{"tags":["a","bc","d"],"code":"x"}',
        '{"tags":["a","b","c","d"],"code":"x"}',
        '{"tags":["abc"],"code":"x"}',
        '{"code":"x","tags":[]}',
    ]
    verdicts = [(text, matcher.accepts(text)) for text in texts]
    assert {ok for _, ok in verdicts} == {True, False}  # the texts exercise both verdicts
    for text, expected in verdicts:
        assert xgrammar_accepts(grammar, text) == expected, text


@pytest.fixture(scope="module")
def harmony_compiler() -> Any:
    from harmony_grammar.generation.xgrammar_tag import harmony_tokenizer_info

    info = harmony_tokenizer_info()
    return xgrammar.GrammarCompiler(info, cache_enabled=False), info


MASK_CASES: list[tuple[dict[str, Any], Any]] = [
    ({"type": "string"}, "a string at the root, then the stop token"),
    ({"type": "string", "maxLength": 3}, "abc"),
    (
        {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string", "maxLength": 4}},
                "code": {"enum": ["USD", "EUR"]},
            },
        },
        {"city": 'San Francisco, "CA"\n', "tags": ["ab", "", "wxyz"], "code": "EUR"},
    ),
]


@pytest.mark.parametrize(("schema", "value"), MASK_CASES)
@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
def test_masks_allow_every_token_of_a_valid_text(
    harmony_compiler: Any, schema: dict[str, Any], value: Any, whitespace: str
) -> None:
    # The lookahead on a string's closing rule is a hint for xgrammar's mask cache that the
    # matcher does not check: a wrong hint would hide a valid token from the mask (and a
    # model could never write it), which accept/reject tests cannot see. So: the mask before
    # each token of valid texts, and the stop token at the end, must allow it.
    from harmony_grammar.format.tokens import ControlToken
    from harmony_grammar.format.vocabulary import load_encoding

    compiler, info = harmony_compiler
    grammar = schema_to_grammar(
        schema, target="xgrammar", whitespace=whitespace, closed_objects=True, escaped_ascii=False
    )
    compiled = compiler.compile_grammar(grammar)
    separators = (",", ":") if whitespace == "compact" else (", ", ": ")
    text = json.dumps(value, separators=separators, ensure_ascii=False)
    matcher = xgrammar.GrammarMatcher(compiled)
    bitmask = xgrammar.allocate_token_bitmask(1, info.vocab_size)
    for token in [*load_encoding().encode(text), ControlToken.CALL.id]:
        matcher.fill_next_token_bitmask(bitmask)
        allowed = bool((int(bitmask[0, token // 32]) >> (token % 32)) & 1)
        assert allowed, (text, token)
        assert matcher.accept_token(token), (text, token)
    assert matcher.is_terminated()
