"""The names an object did not declare, written for llguidance as a complement (issue 43).

An open object's additional member names are "any name but the declared ones". The
llguidance target writes that as llguidance's own ``"any" & ~("a" | "b")`` with the quotes
inside each operand (llguidance masks it at its JSON-string speed; the trie of the names it
replaced cost about 2 ms per token inside a name). The language must stay exact: a declared
name is never an additional member, in any of its JSON spellings (``\\u0061`` is ``a``), and
every other name is one. GBNF and xgrammar have no complement and keep the trie.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.schema import schema_to_grammar
from harmony_grammar.schema.matcher import SchemaMatcher

NAMES = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=4)


def _escaped(name: str) -> str:
    """``name`` as a JSON string with every character spelled ``\\uXXXX`` (pairs as two)."""
    units = name.encode("utf-16-be")
    return (
        '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'
    )


def _schema(declared: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in declared},
        "additionalProperties": {"type": "integer"},
    }


@given(st.lists(NAMES, min_size=1, max_size=4, unique=True), NAMES)
def test_a_declared_name_is_never_an_additional_member(declared: list[str], other: str) -> None:
    schema = _schema(declared)
    matcher = SchemaMatcher(schema)  # every spelling (escaped_ascii=True)
    validator = jsonschema.Draft202012Validator(schema)
    for name in [*declared, other]:
        for spelled in (json.dumps(name), json.dumps(name, ensure_ascii=False), _escaped(name)):
            text = "{" + spelled + ":1}"
            # An integer under a declared (string) name is invalid; under any other, valid.
            assert matcher.accepts(text) == validator.is_valid({name: 1}), text


@given(st.lists(NAMES, min_size=1, max_size=6, unique=True))
def test_llguidance_writes_the_complement_and_gbnf_the_trie(declared: list[str]) -> None:
    schema = _schema(declared)
    llguidance_text = schema_to_grammar(schema, target="llguidance")
    assert " & ~" in llguidance_text
    # A trie's size grows with the names; the complement lists each name once.
    longer = schema_to_grammar(_schema([n * 8 for n in declared]), target="llguidance")
    assert len(longer) - len(llguidance_text) <= 60 * sum(7 * len(n) + 8 for n in declared)
    # GBNF refuses an intersection (naming its keyword): it still gets the trie, so compiles.
    assert schema_to_grammar(schema, target="gbnf").startswith("root ::=")
