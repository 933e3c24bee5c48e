"""No amplification: every target's grammar is within a constant factor of its schema.

A repetition count (``minLength``, ``minItems``, ``minProperties`` and their maxima) is a
repetition in every target, never that many copies: the xgrammar target once wrote
``minLength: 100000000`` as a hundred million copies (47 s, 2.4 GB; a 243-byte request made a
60 MB engine request). Two properties over the shapes real tools use
(:mod:`tests.support.tool_schemas`): each grammar is at most :data:`FACTOR` times its schema's
JSON plus :data:`BASE` characters, and, from counts past the xgrammar target's unrolling
limit (32), multiplying every count by ``10**k`` grows a grammar by at most a few characters
per count and digit (docs/schema-grammar.md, "Compile time").
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from harmony_grammar.generation.turn_grammar import completion_grammar
from harmony_grammar.schema import UnsupportedSchemaError, schema_to_grammar

from ..support.schema_targets import TARGETS
from ..support.tool_schemas import COUNT_KEYWORDS, tool_schemas

#: Characters of grammar per character of schema, at most, plus :data:`BASE`. The large
#: constants are the fixed languages a short keyword names (``"format": "ipv6"``, an unbounded
#: number's float-safe digits); they are per keyword, so still a constant factor.
FACTOR = 400
BASE = 20_000
#: Characters a grammar may grow by per count keyword and per digit its value gains.
PER_DIGIT = 64


def _sizes(schema: Any) -> dict[str, int]:
    out = {}
    for target in TARGETS:
        try:
            out[target] = len(schema_to_grammar(schema, target=target))  # type: ignore[arg-type]
        except UnsupportedSchemaError:
            continue  # GBNF alone refuses what needs an intersection (documented)
    return out


def _scaled(node: Any, factor: int) -> tuple[Any, int]:
    """``node`` with every count multiplied by ``factor``, and how many counts there were."""
    if isinstance(node, list):
        pairs = [_scaled(item, factor) for item in node]
        return [p[0] for p in pairs], sum(p[1] for p in pairs)
    if not isinstance(node, dict):
        return node, 0
    out, counts = {}, 0
    for key, value in node.items():
        if key in COUNT_KEYWORDS and isinstance(value, int) and not isinstance(value, bool):
            out[key], counts = value * factor, counts + 1
        elif key in ("const", "enum"):
            out[key] = value
        else:
            out[key], inner = _scaled(value, factor)
            counts += inner
    return out, counts


_SETTINGS = settings(suppress_health_check=list(HealthCheck), deadline=None, database=None)


@_SETTINGS
@given(schema=tool_schemas(), digits=st.integers(1, 7))
def test_grammars_stay_within_a_constant_factor_of_their_schema(schema: Any, digits: int) -> None:
    plain = _sizes(schema)
    assume(plain)
    budget = FACTOR * len(json.dumps(schema)) + BASE
    assert all(size <= budget for size in plain.values()), (plain, budget)
    # From counts past the xgrammar target's unrolling of bounded repetitions (at most 32
    # links, a constant), growing them must only add digits.
    base, _ = _scaled(schema, 100)
    small = _sizes(base)
    big, counts = _scaled(schema, 100 * 10**digits)
    grown = _sizes(big)
    for target, size in grown.items():
        assert size <= FACTOR * len(json.dumps(big)) + BASE, (target, size)
        if target in small:
            slack = PER_DIGIT * counts * digits
            assert size <= small[target] + slack, (target, small[target], size, counts, digits)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 10**8},
        {"type": "string", "minLength": 10**8, "maxLength": 2 * 10**8},
        {"type": "string", "pattern": "^[a-z]+$", "minLength": 10**8},
        {"type": "string", "pattern": "^(ab){100000000,}$"},
        {"type": "array", "minItems": 10**8},
        {"type": "array", "items": {"type": "integer"}, "minItems": 10**8},
        {"type": "object", "minProperties": 10**8},
    ],
)
@pytest.mark.parametrize("target", TARGETS)
def test_huge_counts_are_counts(schema: Any, target: str) -> None:
    try:
        text = schema_to_grammar(schema, target=target)  # type: ignore[arg-type]
    except UnsupportedSchemaError:
        pytest.skip("GBNF has no intersection")  # only the pattern + minLength case
    # The size is the property (a count written as a count, not unrolled); no time budget.
    assert len(text) < 10_000, (len(text), target)


def test_the_structural_tag_of_a_huge_count_is_small() -> None:
    # Issue 40's request: 243 bytes made a 60 MB engine request with --grammar structural-tag.
    tools = {"f": {"type": "object", "properties": {"a": {"type": "string", "minLength": 10**8}}}}
    plain = {"f": {"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}}}
    for target in ("xgrammar", "gbnf", "llguidance"):
        huge = len(completion_grammar(tools, target=target))
        assert huge <= len(completion_grammar(plain, target=target)) + 200, target
