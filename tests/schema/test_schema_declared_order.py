"""Declared order is the only cause of refused valid instances, on every target.

Issue 43 measured held-out tool schemas: every valid instance the grammar refused was refused
because its keys came in another order than the schema declares, a decision for generation
(docs/schema-grammar.md, "Property order"). This generalises it: schemas drawn in the shapes
real tools use (:mod:`tests.support.tool_schemas`: tagged unions, mixed ``enum``s, Unicode
patterns, formats, ``const``, nested ``$ref``, ``additionalProperties`` schemas,
``dependentRequired``, bounds with ``multipleOf``, ``prefixItems``) and by
hypothesis-jsonschema's own strategies from its random schemas; instances drawn by
hypothesis-jsonschema and kept where the oracle (jsonschema with formats asserted and ECMA-262
patterns, :func:`.test_schema_differential.oracle`) says they are valid; each written compactly
in declared order (``canonical_json``). Every target (llguidance, Lark, GBNF, xgrammar) must
accept it, except the documented float-safe class (a number past 15 significant digits
where the schema bounds it, past 17 anywhere, or past the exponent limit), which is counted.
The opposite holds too: each instance's mutations near the schema's bounds that the oracle
rejects, every target rejects.
"""

from __future__ import annotations

import copy
import json
import re
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from harmony_grammar.schema import UnsupportedSchemaError, canonical_json

from ..support.schema_mutations import mutations
from ..support.schema_targets import legacy_object_generation, target_matchers
from ..support.tool_schemas import tool_schemas

pytest.importorskip("llguidance")
pytest.importorskip("xgrammar")
pytest.importorskip("regress")
hypothesis_jsonschema = pytest.importorskip("hypothesis_jsonschema")

from .test_schema_differential import oracle  # noqa: E402

_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')


def _float_safe_class(text: str) -> bool:
    """Whether ``text`` holds a number the float-safe rule may refuse by design: more than 15
    significant digits, or exponent notation (docs/schema-grammar.md, "Float-safe numbers")."""
    for match in _NUMBER.finditer(text):
        number = match.group(1)
        if number is None:
            continue
        if "e" in number.lower():
            return True
        digits = Decimal(number).normalize().as_tuple().digits
        if len(digits) > 15:
            return True
    return False


@pytest.fixture(autouse=True)
def _object_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    legacy_object_generation(monkeypatch)


#: hypothesis-jsonschema's own schemas, as its tests draw them: any JSON Schema its
#: ``from_schema`` can generate for (drawn here from the meta-schema's main shapes).
_JSONSCHEMA_SCHEMAS = st.deferred(
    lambda: hypothesis_jsonschema.from_schema(
        {
            "type": "object",
            "properties": {
                "type": {"enum": ["object", "array", "string", "integer", "number", "boolean"]},
                "minLength": {"type": "integer", "minimum": 0, "maximum": 5},
                "maxItems": {"type": "integer", "minimum": 0, "maximum": 5},
                "minimum": {"type": "integer", "minimum": -100, "maximum": 100},
                "required": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
                "properties": {
                    "type": "object",
                    "properties": {
                        name: {"enum": [{"type": "integer"}, {"type": "string"}, {}]}
                        for name in ("a", "b", "c")
                    },
                    "additionalProperties": False,
                },
            },
            "additionalProperties": False,
        }
    )
)


def _check(schema: Any, data: st.DataObject) -> None:
    try:
        targets = target_matchers(schema)
    except UnsupportedSchemaError:
        assume(False)  # a drawn combination the compiler refuses (a documented keyword)
        return
    try:
        strategy = hypothesis_jsonschema.from_schema(copy.deepcopy(schema))
    except Exception:  # a keyword hypothesis-jsonschema does not generate
        assume(False)
        return
    validator = oracle(schema)
    value = data.draw(strategy, label="instance")
    assume(validator.is_valid(value))  # hypothesis-jsonschema reads patterns as Python's re
    text = canonical_json(value, schema)
    note(f"schema {json.dumps(schema)}\ntext {text}")
    if not _float_safe_class(text):
        refused = [name for name, accepts in targets.items() if not accepts(text)]
        assert not refused, f"{refused} refuse a valid instance in declared order"
    for variant in mutations(value, schema, schema, 12):
        try:
            written = canonical_json(variant, schema)
            if validator.is_valid(json.loads(written)):
                continue
        except Exception:  # a value no writer spells (NaN, say)
            continue
        accepted = [name for name, accepts in targets.items() if accepts(written)]
        assert not accepted, f"{accepted} accept an invalid text: {written}"


_SETTINGS = settings(suppress_health_check=list(HealthCheck), deadline=None, database=None)


@_SETTINGS
@given(schema=tool_schemas(), data=st.data())
def test_every_target_accepts_valid_instances_of_tool_shapes(schema: Any, data: Any) -> None:
    _check(schema, data)


@_SETTINGS
@given(schema=_JSONSCHEMA_SCHEMAS, data=st.data())
def test_every_target_accepts_valid_instances_of_drawn_schemas(schema: Any, data: Any) -> None:
    _check(schema, data)
