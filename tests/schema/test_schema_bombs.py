"""Schema bombs: shapes whose cost grew faster than the schema (issue 27).

No timed assertions: each test counts the work the compiler does (calls, bytes held, dict
copies), which grows with the schema's size exactly as the time did, and fails on the old
code in well under a second.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import jsonschema
import pytest

pytest.importorskip("llguidance")

from harmony_grammar.schema import compiler as compiler_module
from harmony_grammar.schema import emit_common, schema_to_grammar
from harmony_grammar.schema.errors import UnsupportedSchemaError
from harmony_grammar.schema.matcher import SchemaMatcher


def ref_chain(depth: int, *, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A root ``$ref`` (or an anyOf under ``base``) into ``anyOf[ref, ref]`` ``depth`` deep."""
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(depth)
    }
    defs[f"d{depth}"] = {"type": "string"}
    if base is None:
        return {"$ref": "#/$defs/d0", "$defs": defs}
    return {**base, "anyOf": [{"$ref": "#/$defs/d0"}], "$defs": defs}


def _count_values(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    original = compiler_module.Compiler.value

    def counting(self: Any, schema: Any, pointer: str) -> Any:
        calls[0] += 1
        return original(self, schema, pointer)

    monkeypatch.setattr(compiler_module.Compiler, "value", counting)
    return calls


@pytest.mark.parametrize("base", [None, {"type": "string", "minLength": 1}])
def test_a_chain_of_anyof_refs_is_shared_not_re_expanded(monkeypatch, base):
    calls = _count_values(monkeypatch)
    schema_to_grammar(ref_chain(12, base=base), target="gbnf")
    # Before: 8,191 calls at depth 12 (doubling per level); shared, a few per level.
    assert calls[0] < 12 * 12


@pytest.mark.parametrize("target", ["lark", "llguidance", "gbnf", "xgrammar"])
def test_a_deep_chain_compiles_on_every_target(target):
    text = schema_to_grammar(ref_chain(30), target=target)
    assert len(text) < 5_000  # was exponential: depth 30 never finished


@pytest.mark.parametrize("base", [None, {"type": "string", "minLength": 2}])
def test_the_shared_chain_means_what_the_schema_says(base):
    # Every level is anyOf of two refs to the same next level, so the chain means its last
    # level, a string (under base's own keywords). The oracle validates that flat schema:
    # jsonschema walks the chain itself along every path, 2**20 of them at depth 20 (issue
    # 33 measured minutes); the flat schema is one path. A depth-2 chain, four paths, checks
    # that the flat schema is the chain's meaning to jsonschema too.
    flat = {**(base or {}), "type": "string"}
    schema = ref_chain(20, base=base)
    matcher = SchemaMatcher(schema)
    for doc in ['"ab"', '"a"', '""', "1", "null", '["ab"]']:
        value = json.loads(doc)
        valid = jsonschema.Draft202012Validator(flat).is_valid(value)
        assert jsonschema.Draft202012Validator(ref_chain(2, base=base)).is_valid(value) == valid
        assert matcher.accepts(doc) == valid, doc


def test_a_chain_too_deep_is_refused_with_the_limit_named():
    with pytest.raises(UnsupportedSchemaError, match="too deeply"):
        schema_to_grammar(ref_chain(400), target="gbnf")


def _peak(schema: dict[str, Any]) -> int:
    tracemalloc.start()
    try:
        schema_to_grammar(schema, target="lark", closed_objects=True)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _required(n: int) -> dict[str, Any]:
    names = [f"p{i}" for i in range(n)]
    return {
        "type": "object",
        "properties": {name: {"type": "integer"} for name in names},
        "required": names,
    }


def test_closed_object_memory_is_linear_in_required_properties():
    small, large = _peak(_required(600)), _peak(_required(1200))
    # Before: each of n states held a set of up to n owed names (ratio near 4).
    assert large / small < 2.8


def test_required_and_dependent_properties_still_decide_the_language():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer"},
            "c": {"type": "integer"},
        },
        "required": ["b"],
        "dependentRequired": {"a": ["c"]},
        "additionalProperties": False,
    }
    matcher = SchemaMatcher(schema, closed_objects=True)
    docs = ['{"b":1}', '{"a":1,"b":2,"c":3}', '{"a":1,"b":2}', '{"a":1}', "{}", '{"b":1,"c":2}']
    for doc in docs:
        valid = jsonschema.Draft202012Validator(schema).is_valid(json.loads(doc))
        assert matcher.accepts(doc) == valid, doc


class _CountingDict(dict):  # type: ignore[type-arg]
    copies = 0

    def items(self):  # type: ignore[override]
        type(self).copies += 1
        return super().items()


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(300)}},
        {"enum": [f"v{i}" for i in range(3000)]},
        {"type": "array", "prefixItems": [{"type": "integer"} for _ in range(300)]},
    ],
    ids=["plain-properties", "enum", "prefix-items"],
)
def test_gbnf_writes_its_tokens_once(monkeypatch, schema):
    original = emit_common.TokenNames.__init__

    def init(self: Any, prefix: str) -> None:
        original(self, prefix)
        self.names = _CountingDict()

    _CountingDict.copies = 0
    monkeypatch.setattr(emit_common.TokenNames, "__init__", init)
    schema_to_grammar(schema, target="gbnf")
    # Before: the token table was copied once per token (quadratic in the tokens).
    assert _CountingDict.copies <= 3


def test_running_out_of_memory_is_a_refusal_naming_the_limit(monkeypatch):
    def exhausted(self: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(compiler_module.Compiler, "compile", exhausted)
    with pytest.raises(UnsupportedSchemaError, match="does not fit in the memory"):
        schema_to_grammar({"type": "string"}, target="gbnf")


def test_a_rule_chain_llguidance_would_crash_on_is_refused_naming_the_limit():
    # llguidance (the library) dies with a segmentation fault past about 2,500 chained rules;
    # the llguidance target refuses first. The other targets still compile it.
    schema = _required(3000)
    with pytest.raises(UnsupportedSchemaError, match="limit is 2000"):
        schema_to_grammar(schema, target="llguidance")
    assert schema_to_grammar(schema, target="gbnf")
    SchemaMatcher(_required(1500))  # under the limit, llguidance builds it


def test_rule_depth_follows_chains_and_stops_at_recursion():
    from harmony_grammar.schema.emit_common import rule_depth
    from harmony_grammar.schema.ir import Grammar, Lit, Ref, seq

    rules: dict[str, Any] = {f"r{i}": seq(Lit("a"), Ref(f"r{i + 1}")) for i in range(5000)}
    rules["r5000"] = seq(Lit("b"), Ref("r0"))  # back to the start: recursion, not depth
    rules["start"] = Ref("r0")
    assert rule_depth(Grammar(rules, "start")) == 5002
