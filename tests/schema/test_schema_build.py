"""What the build-time work (issue 15) must not change: the languages, and which schemas
are valid.

The compiler's IR hashes itself once per node, the llguidance emitter writes large repeated
parts of a terminal once under a name, ``\\uXXXX`` escapes for "every character but a few
ASCII ones" share one expression for U+0100 on, and the meta-schema check asks a copy of the
meta-schema whose references are resolved once. Each is checked here against the plain form
it replaced. No timings: ``benchmarks/bench_schema_compile.py`` measures speed.
"""

from __future__ import annotations

import json
import pickle
import re

import jsonschema
import pytest

from harmony_grammar.schema import schema_to_grammar
from harmony_grammar.schema.check import _linked_meta_validator
from harmony_grammar.schema.ir import Alt, Both, Chars, Lit, Repeat, Seq, Token
from harmony_grammar.schema.regex import complement
from harmony_grammar.schema.render_regex import render_regex
from harmony_grammar.schema.strings import _hex4, _unit

from ..conftest import shared_data_dir
from .test_schema_compiler import verdicts

pytest.importorskip("llguidance")


def test_ir_hash_is_cached_and_agrees_with_equality() -> None:
    leaf = Chars(((0x61, 0x7A),))
    a = Seq((Lit("x"), Repeat(leaf, 0, None), Alt((Lit("y"), Token(leaf)))))
    b = Seq((Lit("x"), Repeat(Chars(((0x61, 0x7A),)), 0, None), Alt((Lit("y"), Token(leaf)))))
    assert a == b and a is not b
    assert hash(a) == hash(b) == hash(a)  # the second call reads the cached value
    assert Seq((leaf,)) != Alt((leaf,)) and len({Seq((leaf,)), Alt((leaf,))}) == 2
    # Both compares (and so hashes) without its keyword and pointer: they only name errors.
    one = Both((leaf,), (Lit("a"),), "pattern", "/p")
    other = Both((leaf,), (Lit("a"),), "format", "/q")
    assert one == other and hash(one) == hash(other)
    assert "_hash" not in repr(a)
    # The cached hash is not pickled: read back elsewhere (another hash seed), it is redone.
    again = pickle.loads(pickle.dumps(a))
    assert again == a and not hasattr(again, "_hash") and hash(again) == hash(a)


def _all_u_escapes() -> list[str]:
    """Every ``\\uXXXX`` escape, in upper and in lower case hex digits."""
    return [f"\\u{c:04X}" for c in range(0x10000)] + [f"\\u{c:04x}" for c in range(0x10000)]


@pytest.mark.parametrize("excluded", ["e", "adinprs", "\x00\x1f", "\u00ff", "A_z"])
def test_u_escapes_of_a_set_with_ascii_holes_are_unchanged(excluded: str) -> None:
    # The set a names-not-declared trie needs at a node: every character but a few.
    ranges = tuple(complement(tuple((ord(c), ord(c)) for c in sorted(excluded))))
    bmp = [r for r in ((max(lo, 0), min(hi, 0xD7FF)) for lo, hi in ranges) if r[0] <= r[1]]
    bmp += [r for r in ((max(lo, 0xE000), min(hi, 0xFFFF)) for lo, hi in ranges) if r[0] <= r[1]]
    plain = re.compile("\\\\u(?:" + render_regex(_hex4(bmp), "python") + ")")
    shared = re.compile(render_regex(_unit(ranges, True), "python"))
    for escape in _all_u_escapes():
        assert bool(plain.fullmatch(escape)) == bool(shared.fullmatch(escape)), escape


def test_open_object_names_are_written_once_per_terminal() -> None:
    # Thirty declared names and additionalProperties: the names not declared were a trie
    # whose every node ended in "any characters" (one regex of 33k characters, then named
    # parts). llguidance's target now writes them as any name minus the declared ones
    # (issue 43: a token inside such a name masked in ~2 ms), each name's spellings once.
    schema = {
        "type": "object",
        "properties": {f"field_{i}": {"type": "string"} for i in range(30)},
        "additionalProperties": {"type": "integer"},
    }
    text = schema_to_grammar(schema, target="llguidance")
    assert " & ~" in text
    assert len(text) < 4000 + 30 * 250  # linear in the names, not a trie
    texts = {
        '{"field_1":"a","other":1}': True,
        '{"field_1":1}': False,  # declared: a string, not an additional integer
        '{"field_":1}': True,  # a proper prefix of declared names
        '{"field_30":1}': True,  # one character past a declared name
        '{"field_3":1}': False,
        '{"field_3x":1}': True,
        '{"fielD_3":1}': True,
        '{"field_\\u0033":1}': False,  # a declared name, escaped
        '{"field_\\u0033":"s"}': True,
        '{"\\u0066ield_0":"s","\\u00e9":2}': True,
        '{"field_1\\u0100":2,"\\ud83d\\ude00":3}': True,
        '{"field_1\\ud83d":2}': False,  # a lone surrogate is never a name
        '{"":1,"\\"":2}': True,
        '{"p":"x"}': False,
    }
    assert verdicts(schema, list(texts)) == list(texts.values())


def test_shared_parts_inside_an_intersection_are_grouped() -> None:
    # A patternProperties region needs "not a declared name" inside `&`: a named or
    # spelled-out part there must be one operand (`~(A B)`, not `~A B`).
    schema = {
        "patternProperties": {"^x-": {"type": "string"}},
        "properties": {f"name{i}": {"type": "integer"} for i in range(12)},
    }
    texts = {
        '{"name1":1,"x-a":"s","other":[1]}': True,
        '{"x-a":1}': False,
        '{"name1":"s"}': False,
        '{"name12":"s","x-name1":"t"}': True,
    }
    assert verdicts(schema, list(texts), gbnf_too=False) == list(texts.values())


#: The suite's folders and the validator class whose meta-schema each one's schemas meet.
_SUITE_DRAFTS = {
    "draft4": jsonschema.Draft4Validator,
    "draft6": jsonschema.Draft6Validator,
    "draft7": jsonschema.Draft7Validator,
    "draft2019-09": jsonschema.Draft201909Validator,
    "draft2020-12": jsonschema.Draft202012Validator,
}


@pytest.mark.parametrize("draft", sorted(_SUITE_DRAFTS))
def test_linked_meta_schema_decides_like_the_meta_schema(draft: str) -> None:
    # check_schema asks a copy of the meta-schema with references resolved once; it must
    # say yes exactly when the meta-schema does. Candidates: every schema of the draft's
    # JSON-Schema-Test-Suite folder and every instance there (mostly not schemas at all).
    cls = _SUITE_DRAFTS[draft]
    linked = _linked_meta_validator(cls)
    assert linked.schema is not cls.META_SCHEMA  # linking worked for this meta-schema
    meta = cls(cls.META_SCHEMA)
    folder = shared_data_dir("json-schema-test-suite") / "tests" / draft
    candidates: list[object] = [
        {"type": 5}, {"properties": {"a": {"minLength": -1}}}, {"items": [{"type": "x"}]},
        {"$defs": {"a": {"enum": []}}}, {"allOf": []}, {"required": ["a", "a"]},
        {"$ref": 5}, {"dependentRequired": {"a": [1]}}, {"prefixItems": {}}, {"$id": "#x"},
    ]  # fmt: skip
    for path in sorted(folder.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            candidates.append(group["schema"])
            candidates.extend(test["data"] for test in group["tests"])
    valid = 0
    for candidate in candidates:
        expected = meta.is_valid(candidate)
        assert linked.is_valid(candidate) == expected, json.dumps(candidate)[:200]
        valid += expected
    assert 0 < valid < len(candidates)


def test_a_choice_of_tokens_is_one_llguidance_terminal() -> None:
    # An enum's strings (and anyOf's number ranges) were one lexeme each: a rule
    # `v0: T4 | T5 | ... | T91`. One terminal holds the same strings.
    schema = {
        "type": "object",
        "properties": {
            "enc": {"enum": ["UTF-8", "UTF-16", "UCS-2"]},
            "n": {"anyOf": [{"type": "integer", "maximum": -5}, {"type": "integer", "minimum": 5}]},
        },
    }
    text = schema_to_grammar(schema, target="llguidance")
    rules = dict(line.split(": ", 1) for line in text.splitlines()[2:])
    assert not any(re.fullmatch(r"T\d+( \| T\d+)+", body) for body in rules.values())
    texts = {
        '{"enc":"UTF-8","n":5}': True,
        '{"enc":"UTF-16","n":-5}': True,
        '{"enc":"\\u0055CS-2"}': True,
        '{"enc":"UTF-1"}': False,
        '{"enc":"UTF-8x"}': False,
        '{"n":4}': False,
        '{"n":-4}': False,
        '{"n":50}': True,
    }
    assert verdicts(schema, list(texts)) == list(texts.values())
