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
