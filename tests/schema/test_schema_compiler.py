"""schema_to_grammar, keyword by keyword, checked on all three targets.

Verdicts come from the JSON Schema meaning of each case (written by hand here), and every
target must agree: llguidance's matcher, Lark's Earley parser, and the GBNF text converted by
llguidance's own GBNF reader.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction

import lark
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.schema import (
    UnsupportedSchemaError,
    canonical_json,
    declared_order,
    schema_to_grammar,
)

llguidance = pytest.importorskip("llguidance")
from harmony_grammar.schema.matcher import SchemaMatcher  # noqa: E402

from ..support.schema_targets import gbnf_matcher  # noqa: E402


def verdicts(schema: object, texts: list[str], *, gbnf_too: bool = True) -> list[bool]:
    """Accept/reject per text; asserts that every target and whitespace mode agrees.

    ``gbnf_too=False`` is for schemas that need an intersection of languages, which GBNF
    cannot state: its emitter must refuse them instead.
    """
    compact = SchemaMatcher(schema)
    flexible = SchemaMatcher(schema, whitespace="flexible")
    parser = lark.Lark(schema_to_grammar(schema, target="lark"))
    if not gbnf_too:
        with pytest.raises(UnsupportedSchemaError, match="GBNF has no intersection"):
            schema_to_grammar(schema, target="gbnf")
    gbnf = gbnf_matcher(schema) if gbnf_too else None
    out = []
    for text in texts:
        got = compact.accepts(text)
        assert flexible.accepts(text) == got, text
        try:
            parser.parse(text)
            assert got, f"lark accepts {text!r}, llguidance does not"
        except lark.exceptions.LarkError:
            assert not got, f"llguidance accepts {text!r}, lark does not"
        if gbnf is not None:
            matcher = gbnf.deep_copy()
            g = matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()
            assert g == got, f"gbnf disagrees on {text!r}"
        out.append(got)
    return out


CASES = [
    ({"type": "null"}, {"null": True, "0": False, '"null"': False}),
    ({"type": ["boolean", "null"]}, {"true": True, "null": True, "1": False}),
    ({"const": "a\"b"}, {'"a\\"b"': True, '"a\\u0022b"': True, '"ab"': False}),
    ({"enum": [1, "x", None, [1]]}, {"1": True, "1.0": True, '"x"': True, "[1]": True, "2": False}),
    ({"type": "integer", "minimum": -3, "exclusiveMaximum": 10},
     {"-3": True, "-4": False, "9": True, "10": False, "9.0": True, "5.5": False, "-0": True,
      "-10": False}),
    ({"type": "number", "exclusiveMinimum": 0, "maximum": 2},
     {"0": False, "-0.0": False, "0.001": True, "2": True, "2.0": True, "2.01": False}),
    ({"type": "number"}, {"1e5": True, "-1.5E-3": True, "01": False, "1.": False, "120": True}),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"},
     {"1": True, "1.0": False}),
    ({"type": "string", "minLength": 2, "maxLength": 3},
     {'"ab"': True, '"a"': False, '"abcd"': False, '"\\u00e9\\n"': True, '"\\ud83d\\ude00x"': True}),
    ({"type": "string", "pattern": "^[a-z]+-\\d{2}$"}, {'"ab-12"': True, '"ab-1"': False}),
    ({"type": "string", "pattern": "b"}, {'"abc"': True, '"ac"': False, '"\\u0062"': True}),
    ({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3},
     {'"abc"': True, '"abcd"': False, '"A"': False}),
    ({"type": "string", "format": "date"},
     {'"2024-02-29"': True, '"2023-02-29"': False, '"2023-13-01"': False}),
    ({"type": "string", "format": "uuid"},
     {'"123e4567-e89b-12d3-a456-426614174000"': True, '"123e4567e89b12d3a456426614174000"': False}),
    ({"type": "string", "format": "ipv4"}, {'"1.2.3.4"': True, '"01.2.3.4"': False}),
    ({"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"},
      "minItems": 1, "maxItems": 3},
     {"[]": False, "[1]": True, '[1,"a","b"]': True, '[1,"a","b","c"]': False, '["a"]': False}),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
      "required": ["b"], "additionalProperties": False},
     {'{"b":"x"}': True, '{"a":1,"b":"x"}': True, "{}": False, '{"b":"x","c":1}': False,
      '{"\\u0061":1,"b":"x"}': True}),
    ({"type": "object", "additionalProperties": {"type": "boolean"}, "minProperties": 1,
      "maxProperties": 2},
     {"{}": False, '{"x":true}': True, '{"x":true,"y":false}': True,
      '{"x":true,"y":false,"z":true}': False, '{"x":1}': False}),
    ({"type": "object", "properties": {"a": {}, "b": {}},
      "dependentRequired": {"b": ["a"]}},
     {'{"b":1}': False, '{"a":1,"b":1}': True, '{"a":1}': True, "{}": True}),
    ({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 5}]},
     {'"x"': True, "5": True, "4": False}),
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, {'"x"': True, "1": True, "null": False}),
    ({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}},
                {"required": ["a"], "properties": {"a": {"minimum": 3}}}]},
     {'{"a":3}': True, '{"a":2}': False, "{}": False}),
    ({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}},
                         "additionalProperties": False}},
      "$ref": "#/$defs/node"},
     {"{}": True, '{"next":{"next":{}}}': True, '{"next":1}': False}),
    ({"type": "string", "nullable": True}, {"null": True, '"x"': True, "1": False}),
    (True, {"[1,{}]": True, '{"a":[null]}': True, "[": False}),
    # enum/const beside keywords the compiler refuses elsewhere: the validator decides each value
    ({"enum": [1, "a", {"k": 2}, [3]], "not": {"type": "string"}, "multipleOf": 1},
     {"1": True, '"a"': False, '{"k":2}': True, "[3]": True}),
    ({"allOf": [{"const": {"b": 1, "a": 2}}, {"not": {"required": ["c"]}}]},
     {'{"a":2,"b":1}': False, '{"b":1,"a":2}': True, '{"b":1}': False}),  # written key order
    ({"type": "number", "minimum": 0.25, "exclusiveMaximum": 1.5},
     {"0.25": True, "0.2500": True, "0.249": False, "0.3": True, "1": True, "1.49": True,
      "1.5": False, "-0.5": False, "0": False}),
    # `not` that only narrows: types removed, or one required name turned into "an object
    # without it" (any non-object satisfies `required`, so it fails the `not`)
    ({"not": {"type": ["object", "array"]}}, {"1": True, '"s"': True, "{}": False, "[]": False}),
    ({"properties": {"a": {"type": "integer"}}, "not": {"required": ["b"]}},
     {"{}": True, '{"a":1}': True, '{"b":1}': False, "1": False}),
    # multipleOf a power of ten: decimal places, in plain decimals like every bounded number
    ({"type": "number", "multipleOf": 0.01, "exclusiveMinimum": 0, "maximum": 1},
     {"0.01": True, "0.5": True, "1.00": True, "0.505": False, "0": False, "1.01": False,
      "0.250000": True}),
    ({"type": "number", "multipleOf": 1}, {"-3": True, "2.0": True, "2.5": False}),
    ({"type": "integer", "multipleOf": 0.1}, {"7": True, "7.5": False}),
    # patternProperties: names matching the pattern, when nothing else is allowed
    ({"type": "object", "patternProperties": {"^x-[a-z]+$": {"type": "integer"}},
      "properties": {"id": {"type": "string"}}, "additionalProperties": False},
     {'{"id":"a","x-b":1}': True, '{"x-b":1,"x-c":2}': True, '{"x-b":"s"}': False,
      '{"x-":1}': False, '{"y":1}': False, '{"id":1}': False}),
    # ... a pattern that every name matches: a named property obeys it and its own schema
    ({"patternProperties": {".*": {"type": "integer"}},
      "properties": {"n": {"minimum": 3}}},
     {'{"n":3,"m":-1}': True, '{"n":2}': False, '{"m":"x"}': False, "{}": True}),
    # oneOf whose branches only require names: exactly one of them present
    ({"type": "object", "properties": {"a": {}, "b": {}, "c": {}},
      "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
     {'{"a":1}': True, '{"b":1,"c":2}': True, '{"a":1,"b":2}': False, '{"c":1}': False}),
    ({"oneOf": [{"required": ["a", "b"]}, {"required": ["a"]}]},
     {'{"a":1}': True, '{"a":1,"b":1}': False, "{}": False}),
    # oneOf told apart through a $ref (types) and through a required property's enum
    ({"$defs": {"obj": {"type": "object"}},
      "oneOf": [{"$ref": "#/$defs/obj"}, {"type": "array", "items": {"$ref": "#/$defs/obj"}}]},
     {"{}": True, "[{}]": True, "[1]": False, "1": False}),
    ({"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"],
      "oneOf": [{"properties": {"kind": {"enum": ["a"]}, "n": {"type": "integer"}}},
                {"properties": {"kind": {"enum": ["b"]}, "n": {"type": "string"}}}]},
     {'{"kind":"a","n":1}': True, '{"kind":"b","n":"x"}': True, '{"kind":"a","n":"x"}': False,
      '{"kind":"c"}': False}),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "expected"), CASES, ids=[json.dumps(c[0])[:60] for c in CASES])
def test_keyword_semantics(schema: object, expected: dict[str, bool]) -> None:
    texts = list(expected)
    assert verdicts(schema, texts) == [expected[t] for t in texts]


#: Schemas whose strings need an intersection (or complement) of regular languages.
INTERSECTIONS = [
    ({"type": "string", "pattern": "^[a-z]+(-[a-z]+)*$", "maxLength": 5},
     {'"ab-cd"': True, '"ab-cde"': False, '"ab-"': False, '"abcde"': True, '""': False}),
    ({"type": "string", "format": "email", "minLength": 8},
     {'"ab@cd.ef"': True, '"a@b.cd"': False, '"abcdefgh"': False}),
    ({"type": "string", "format": "date", "pattern": "^2024"},
     {'"2024-02-29"': True, '"2023-02-28"': False, '"2024-13-01"': False}),
    ({"patternProperties": {"^a": {"type": "string"}, "^b": {"type": "string"}},
      "additionalProperties": False},
     {'{"ab":"x","ba":"y"}': True, '{"c":"x"}': False, '{"a":1}': False}),
    # two patterns with different schemas: a name matching both obeys both
    ({"patternProperties": {"^a": {"type": "integer"}, "z$": {"minimum": 10}},
      "additionalProperties": {"type": "boolean"}},
     {'{"ab":1,"yz":"s","az":10,"q":true}': True, '{"az":9}': False, '{"yz":1}': False,
      '{"q":1}': False, '{"ab":"s"}': False}),
    # names matching no pattern obey additionalProperties
    ({"patternProperties": {"^x-": {"type": "string"}}, "properties": {"id": {"type": "integer"}}},
     {'{"id":1,"x-a":"s","other":[1]}': True, '{"x-a":1}': False, '{"id":"s"}': False}),
    # a named property matching a pattern obeys both, and is not also an additional name
    ({"properties": {"x-a": {"maximum": 5}}, "required": ["x-a"],
      "patternProperties": {"^x-": {"type": "integer"}}, "additionalProperties": False},
     {'{"x-a":5,"x-b":9}': True, '{"x-a":6}': False, '{"x-a":1,"x-b":"s"}': False,
      '{"x-b":1}': False}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("schema", "expected"), INTERSECTIONS, ids=[json.dumps(c[0])[:60] for c in INTERSECTIONS]
)
def test_intersections_in_llguidance_and_lark(schema: object, expected: dict[str, bool]) -> None:
    texts = list(expected)
    assert verdicts(schema, texts, gbnf_too=False) == [expected[t] for t in texts]


def test_flexible_whitespace_accepts_pretty_printed_json() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
    }
    flexible = SchemaMatcher(schema, whitespace="flexible")
    compact = SchemaMatcher(schema)
    text = '\n{ "a" : [ 1 ,\t2 ] }\r\n'
    assert flexible.accepts(text)
    assert not compact.accepts(text)
    assert compact.accepts('{"a":[1,2]}')


@pytest.mark.parametrize(
    ("schema", "keyword", "pointer"),
    [
        ({"not": {"type": "string", "minLength": 3}}, "not", ""),
        ({"type": "number", "not": {"type": "integer"}}, "not", ""),
        (  # llguidance runs out of regex derivatives on this complement (measured)
            {"patternProperties": {"x[a-z]{1,12}y": {"type": "string"}}},
            "patternProperties",
            "",
        ),
        (
            {"patternProperties": {f"^{c}": {"type": "string"} for c in "abcde"}},
            "patternProperties",
            "",
        ),
        ({"oneOf": [{"required": ["a", "b"]}, {"required": ["c", "d"]}]}, "oneOf", ""),
        ({"properties": {"n": {"type": "integer", "multipleOf": 3}}}, "multipleOf", "/properties/n"),
        (
            {"properties": {"a": {"type": "string", "pattern": "(a)\\1"}}},
            "pattern",
            "/properties/a",
        ),
        ({"items": {"uniqueItems": True}}, "uniqueItems", "/items"),
        ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, "oneOf", ""),
        ({"type": "number", "minimum": 0.5, "multipleOf": 0.1}, "minimum", ""),
        ({"$ref": "http://example.com/s.json"}, "$ref", ""),
        ({"type": "string", "format": "idn-hostname"}, "format", ""),
        (False, "false", ""),
    ],
)
def test_refusals_name_keyword_and_pointer(schema: object, keyword: str, pointer: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as info:
        schema_to_grammar(schema)
    assert isinstance(info.value, ValueError)
    assert info.value.keyword == keyword
    assert info.value.pointer == pointer
    assert repr(keyword) in str(info.value)


def test_targets_have_their_own_syntax() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    lg = schema_to_grammar(schema, target="llguidance")
    assert lg.startswith("%llguidance {}\n") and "\nstart: " in lg
    assert schema_to_grammar(schema, target="gbnf").startswith("root ::= start\nstart ::= ")
    assert schema_to_grammar(schema, target="lark").startswith("start: ")
    lark.Lark(schema_to_grammar(schema, target="lark", whitespace="flexible"))
    with pytest.raises(ValueError, match="target"):
        schema_to_grammar(schema, target="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whitespace"):
        schema_to_grammar(schema, whitespace="loose")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("^([-\\w\\.]+)+$", {'"a-b.c"': True, '""': False, '"a b"': False}),
        ("^(a{1,4})?$", {'""': True, '"aaaa"': True, '"aaaaa"': False}),
        ("^(\\d{4})*$", {'""': True, '"12345678"': True, '"123"': False}),
        ("^((a+)?)*b$", {'"b"': True, '"aab"': True, '"ba"': False}),
    ],
)
def test_repeated_repetitions_load_in_every_target(pattern: str, expected: dict[str, bool]) -> None:
    # Lark used to get `_g3++` and GBNF `{1,4}?`/`{4,4}*`: stacked quantifiers neither loads.
    schema = {"type": "string", "pattern": pattern}
    texts = list(expected)
    assert verdicts(schema, texts) == [expected[t] for t in texts]


def test_gbnf_loads_in_xgrammar() -> None:
    xgrammar = pytest.importorskip("xgrammar")  # a benchmark-only dependency
    for pattern in ("^([-\\w\\.]+)+$", "^(a{1,4})?$", "^(\\d{4})*$"):
        xgrammar.Grammar.from_ebnf(schema_to_grammar({"pattern": pattern}, target="gbnf"))
    xgrammar.Grammar.from_ebnf(schema_to_grammar({"type": "object"}, target="gbnf"))



def test_gbnf_escapes_mean_the_same_in_xgrammar() -> None:
    # xgrammar reads every hex digit after `\x` (`[\x2D0-9]` was "U+2D0 to 9", refused; the
    # literal "\x7FA" was U+7FA): escapes are written as four-digit `\u`.
    xgrammar = pytest.importorskip("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string as xgrammar_accepts

    schema = {"enum": ["\x7fA", "-0"], "type": "string"}
    grammar = xgrammar.Grammar.from_ebnf(schema_to_grammar(schema, target="gbnf"))
    assert xgrammar_accepts(grammar, '"\x7fA"')
    assert xgrammar_accepts(grammar, '"\\u007fA"')
    assert xgrammar_accepts(grammar, '"-0"')
    assert not xgrammar_accepts(grammar, '"\u07fa"')
    email = {"type": "string", "format": "email"}
    grammar = xgrammar.Grammar.from_ebnf(schema_to_grammar(email, target="gbnf"))
    assert xgrammar_accepts(grammar, '"bob.smith-jones@example.org"')
    assert not xgrammar_accepts(grammar, '"bob@"')


def test_generation_spells_printable_ascii_only_as_itself() -> None:
    # escaped_ascii=False (generation): no encoder writes "\u0063" for "c", so names, enum
    # values and free strings lose that spelling; everything else keeps every spelling.
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
    }
    exact = SchemaMatcher(schema)
    generation = SchemaMatcher(schema, escaped_ascii=False)
    for text in ('{"city":"Z\\u00fcrich"}', '{"city":"Zürich","unit":"c"}', '{"city":"a\\nb\\"\\\\\\/"}',
                 '{"city":"\\u0001\\ud83d\\ude00"}', '{"city":"😀"}'):
        assert exact.accepts(text) and generation.accepts(text), text
    for text in ('{"\\u0063ity":"x"}', '{"city":"\\u0061"}', '{"unit":"\\u0063"}', '{"city":"\\u0022"}'):
        assert exact.accepts(text) and not generation.accepts(text), text

def test_each_object_keeps_its_own_declared_order() -> None:
    # Two objects declaring the same names in different orders: each is its own order
    # (a document-wide rank used to give both the order of the first).
    schema = {
        "properties": {"b": {"properties": {"y": {}, "x": {}}}, "a": {"$ref": "#/$defs/other"}},
        "$defs": {"other": {"properties": {"x": {}, "y": {}}}},
    }
    text = canonical_json({"a": {"y": 1, "x": 2}, "zz": 0, "b": {"x": 1, "y": 2}}, schema)
    assert text == '{"b":{"y":2,"x":1},"a":{"x":2,"y":1},"zz":0}'
    matcher = SchemaMatcher(schema)
    assert matcher.accepts(text)
    assert matcher.accepts('{"a":{"x":1,"y":2}}')
    assert not matcher.accepts('{"a":{"y":1,"x":2}}')  # declared order, as documented
    assert not matcher.accepts('{"a":1,"b":{}}')
    assert declared_order({"properties": {"q": {}, "p": {}}, "required": ["r", "p"]}) == [
        "q", "p", "r",
    ]


@pytest.mark.parametrize(
    ("fmt", "bad", "good"),
    [
        ("date-time", "x", "2020-02-29T00:00:00Z"),
        ("time", "25:00:00Z", "23:59:59Z"),
        ("hostname", "not a host!", "a.example"),
        ("uri", "http//x", "http://x"),
        ("date", "2021-02-29", "2020-02-29"),
    ],
)
def test_enum_candidates_obey_the_format_as_the_grammar_reads_it(
    fmt: str, bad: str, good: str
) -> None:
    # Found by the differential test: candidates were filtered with jsonschema's format
    # checker, which skips date-time, time, hostname and uri unless optional packages are
    # installed, so the grammar accepted "x" as a date-time.
    schema = {"enum": [bad, good], "format": fmt}
    assert verdicts(schema, [json.dumps(bad), json.dumps(good)]) == [False, True]
    with pytest.raises(UnsupportedSchemaError, match="no JSON value"):
        schema_to_grammar({"const": bad, "format": fmt})


@pytest.mark.parametrize("combinator", ["oneOf", "anyOf"])
def test_all_of_branch_names_come_before_a_later_members(combinator: str) -> None:
    # MaskBench Github_trivial---o64859: allOf [{oneOf: [...]}, {properties: ...}]. The
    # branch's names come first, as declared and as canonical_json writes them (the later
    # member's properties used to be merged in first).
    schema = {
        "allOf": [
            {combinator: [
                {"properties": {"state": {"const": "stopped"}}, "required": ["state"]},
                {"properties": {"current": {"minimum": 0}, "state": {"const": "running"}},
                 "required": ["state"]},
            ]},
            {"properties": {"builder": {"type": "object"}, "id": {"type": "number"}},
             "required": ["builder", "id"]},
        ],
        "type": "object",
    }
    value = {"current": 50, "state": "running", "builder": {}, "id": 1}
    text = canonical_json(value, schema)
    assert text == '{"current":50,"state":"running","builder":{},"id":1}'
    matcher = SchemaMatcher(schema)
    assert matcher.accepts(text)
    assert matcher.accepts('{"state":"stopped","builder":{},"id":2}')
    assert not matcher.accepts('{"builder":{},"id":1,"current":50,"state":"running"}')
    assert not matcher.accepts('{"current":-1,"state":"running","builder":{},"id":1}')
    assert not matcher.accepts('{"state":"running","builder":{}}')  # id is required


def test_canonical_json_puts_merged_properties_before_required_only_names() -> None:
    # Found by the differential test (MaskBench o72111, o6376): the grammar orders a merged
    # object by declared_order of the merge (all properties, then required-only names);
    # canonical_json ranked the root's required-only names before the $ref target's or the
    # branch's properties, and the grammar rejected what it wrote. Files write the former.
    ref = {"$ref": "#/$defs/t", "required": ["rt", "if"],
           "$defs": {"t": {"type": "object", "properties": {"if": {}, "n": {}, "rt": {}}}}}
    branch = {"required": ["req"], "anyOf": [
        {"properties": {"req": {"type": "string"}}, "additionalProperties": False},
        {"properties": {"f": {"type": "string"}, "req": {"type": "string"}},
         "additionalProperties": False},
    ]}  # fmt: skip
    for schema, value, text in (
        (ref, {"rt": 1, "if": 2}, '{"if":2,"rt":1}'),
        (branch, {"req": "a", "f": "b"}, '{"f":"b","req":"a"}'),
    ):
        assert canonical_json(value, schema) == text
        assert SchemaMatcher(schema).accepts(text)


def test_multi_tool_any_of_each_tool_in_its_own_order() -> None:
    # The issue's BFCL-style case: an earlier tool ranks `year` first; the imdb tool
    # declares actor_name, year, category and must be accepted in that order.
    tools = {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "get_movies": {
                        "type": "object",
                        "properties": {"year": {"type": "integer"}, "actor_name": {"type": "string"}},
                        "required": ["year"],
                    }
                },
                "required": ["get_movies"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "imdb.find_movies_by_actor": {
                        "type": "object",
                        "properties": {
                            "actor_name": {"type": "string"},
                            "year": {"type": "integer"},
                            "category": {"type": "string"},
                        },
                        "required": ["actor_name", "year"],
                        "additionalProperties": False,
                    }
                },
                "required": ["imdb.find_movies_by_actor"],
                "additionalProperties": False,
            },
        ]
    }
    instance = {
        "imdb.find_movies_by_actor": {"actor_name": "Leo", "year": 2010, "category": "Drama"}
    }
    text = json.dumps(instance, ensure_ascii=False, separators=(",", ":"))
    assert canonical_json(instance, tools) == text
    texts = [
        text,
        '{"get_movies":{"year":1,"actor_name":"x"}}',
        '{"get_movies":{"actor_name":"x","year":1}}',
        '{"imdb.find_movies_by_actor":{"year":1,"actor_name":"x"}}',
    ]
    assert verdicts(tools, texts) == [True, True, False, False]


_DECIMALS = st.builds(
    lambda sign, whole, fraction: f"{sign}{whole}{'.' + fraction if fraction else ''}",
    st.sampled_from(["", "-"]),
    st.sampled_from([0, 1, 2, 10, 12]),
    st.text("0123456789", max_size=3),
)
_BOUND_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_HOLDS = {
    "minimum": lambda v, b: v >= b,
    "maximum": lambda v, b: v <= b,
    "exclusiveMinimum": lambda v, b: v > b,
    "exclusiveMaximum": lambda v, b: v < b,
}


@given(
    bounds=st.dictionaries(st.sampled_from(_BOUND_KEYWORDS), _DECIMALS, min_size=1, max_size=2),
    texts=st.lists(_DECIMALS, min_size=1, max_size=12),
)
def test_fractional_number_bounds_compare_digit_by_digit(
    bounds: dict[str, str], texts: list[str]
) -> None:
    """Bounds with decimals (``minimum: 0.25``) on ``number``, against exact arithmetic."""
    schema = {"type": "number", **{k: float(v) for k, v in bounds.items()}}
    exact = {k: Fraction(Decimal(v)) for k, v in bounds.items()}
    lows = [(b, k == "exclusiveMinimum") for k, b in exact.items() if k.endswith("inimum")]
    highs = [(b, k == "exclusiveMaximum") for k, b in exact.items() if k.endswith("aximum")]
    empty = any(lo > hi or (lo == hi and (lo_ex or hi_ex)) for lo, lo_ex in lows for hi, hi_ex in highs)
    try:
        matcher = SchemaMatcher(schema)
    except UnsupportedSchemaError as exc:  # an empty range is the one allowed refusal
        assert exc.keyword == "false" and empty, (schema, exc)
        return
    assert not empty, schema
    for text in texts:
        value = Fraction(Decimal(text))
        expected = all(_HOLDS[k](value, b) for k, b in exact.items())
        assert matcher.accepts(text) == expected, (schema, text)

