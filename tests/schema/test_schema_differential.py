"""Differential test: the schema grammars against jsonschema, on generated and mutated texts.

For a fixed, evenly spread sample of MaskBench dev schemas that the compiler does not refuse,
``hypothesis-jsonschema`` generates instances and :mod:`tests.support.schema_mutations` moves them
onto and just past the schemas' bounds. Each text (written in declared key order by
``canonical_json``, the order the grammar fixes) is judged by the generation grammar
(:class:`SchemaMatcher`) and by the oracle: jsonschema's validator for the schema's draft,
with formats asserted, ``pattern``/``patternProperties`` decided by ``regress`` (an
ECMA-262 engine, not the compiler's own reading) and ``multipleOf`` decided exactly on the
decimals, since Python's float division rejects ``0.07`` as a multiple of ``0.01``
(docs/schema-grammar.md, "One regex dialect"; such disagreements are counted and printed),
and OpenAPI's ``nullable: true`` read as the compiler reads it (docs/schema-grammar.md).
CI checks 100 schemas, 3 instances each (about 20 s); ``HARMONY_GRAMMAR_FULL_DIFFERENTIAL=1``
checks the whole split with 4 instances each.

No text may be accepted by the grammar and rejected by the oracle. Texts the oracle accepts
and the grammar rejects are counted and printed, not failed: the grammar writes bounded
numbers in plain float-safe decimals and leaves some formats' corners out by design.
"""

from __future__ import annotations

import collections
import copy
import functools
import json
import os
from decimal import Decimal
from fractions import Fraction
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from harmony_grammar.schema import UnsupportedSchemaError, canonical_json
from harmony_grammar.schema.ecma_search import ecma_validator_class

from ..conftest import shared_data_dir
from ..support.schema_mutations import mutations
from ..support.schema_targets import legacy_object_generation

pytest.importorskip("llguidance")
regress = pytest.importorskip("regress")
hypothesis_jsonschema = pytest.importorskip("hypothesis_jsonschema")

from harmony_grammar.schema.matcher import SchemaMatcher  # noqa: E402


@pytest.fixture(autouse=True)
def _object_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    legacy_object_generation(monkeypatch)


#: ``HARMONY_GRAMMAR_FULL_DIFFERENTIAL=1`` checks every file, with more instances each.
FULL = os.environ.get("HARMONY_GRAMMAR_FULL_DIFFERENTIAL") == "1"
#: Schemas in the sample: every n-th MaskBench dev file with instances, in name order.
SAMPLE = 100_000 if FULL else 100
#: Instances hypothesis generates per schema (each also mutated, up to MUTATIONS times).
EXAMPLES = 4 if FULL else 3
MUTATIONS = 30


@functools.lru_cache(maxsize=1024)
def _regress(pattern: str) -> Any:
    return regress.Regex(pattern)


def regress_search(pattern: str, text: str) -> bool:
    """Whether the ECMA-262 ``pattern`` finds a match in ``text``, by regress."""
    return _regress(pattern).find(text) is not None


#: Texts where Python's float division and the exact decimal reading of multipleOf disagree.
FLOAT_DIVISION: collections.Counter[str] = collections.Counter()


def _exact(number: int | float) -> Fraction:
    return Fraction(Decimal(repr(number))) if isinstance(number, float) else Fraction(number)


def _multiple_of(validator: Any, step: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "number"):
        return
    exact = _exact(instance) % _exact(step) == 0
    if isinstance(step, float):  # what jsonschema itself decides
        quotient = instance / step
        by_float = quotient == int(quotient) if abs(quotient) < 1e300 else False
    else:
        by_float = instance % step == 0
    if exact != by_float:
        FLOAT_DIVISION[f"{instance!r} multipleOf {step!r}"] += 1
    if not exact:
        yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {step!r}")


def _nullable_type(check_type: Any) -> Any:
    def type_(validator: Any, types: Any, instance: Any, schema: Any) -> Any:
        if instance is None and schema.get("nullable") is True:
            return  # OpenAPI's `nullable: true` beside `type`, as the grammar reads it
        yield from check_type(validator, types, instance, schema)

    return type_


def oracle(schema: Any) -> Any:
    """jsonschema's validator for ``schema``'s draft: formats asserted, ECMA-262 patterns by
    regress, ``multipleOf`` exact, and ``nullable: true`` (OpenAPI's keyword, which the
    Harmony rendering shows as ``| null``) letting ``null`` pass ``type``, as documented."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls = jsonschema.validators.extend(
        ecma_validator_class(cls, regress_search),
        {"multipleOf": _multiple_of, "type": _nullable_type(cls.VALIDATORS["type"])},
    )
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _sample() -> list[Any]:
    folder = shared_data_dir("maskbench-dev")
    files = [p for p in sorted(folder.glob("*.json"))
             if json.loads(p.read_text(encoding="utf-8"))["tests"]]  # fmt: skip
    return files[:: max(1, len(files) // SAMPLE)][:SAMPLE]


def _has_exponent(value: Any) -> bool:
    if isinstance(value, float):
        return "e" in repr(value)
    if isinstance(value, dict):
        return any(_has_exponent(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_exponent(v) for v in value)
    return False


def _significant(value: Any) -> int:
    """The most significant digits of any number in ``value``."""
    if isinstance(value, float):
        return len(Decimal(repr(value)).normalize().as_tuple().digits)
    if isinstance(value, int) and not isinstance(value, bool):
        return len(str(abs(value)).rstrip("0") or "0")
    if isinstance(value, dict):
        return max(map(_significant, value.values()), default=0)
    if isinstance(value, list):
        return max(map(_significant, value), default=0)
    return 0


#: A text llguidance's lexer gave up on (see SchemaMatcher.lexer_limits), not the grammar.
_LEXER_GAVE_UP = "llguidance's lexer gave up (a string of many thousand characters)"


def _reject_reason(value: Any) -> str:
    digits = _significant(value)
    if digits > 17:
        return "a number of more than 17 significant digits"
    if _has_exponent(value):
        return "exponent notation (past 1e±280, or on a bounded number)"
    if digits > 15:
        return "16-17 significant digits (bounded numbers take 15)"
    return "other"


class Tally:
    """Counts and examples over the whole sample."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.wrong_accepts: list[str] = []
        self.rejects: dict[str, list[str]] = collections.defaultdict(list)

    def judge(self, name: str, value: Any, schema: Any, matcher: Any, validator: Any) -> None:
        """One text in declared order, judged by the grammar and the oracle."""
        try:
            text = canonical_json(value, schema)
            valid = validator.is_valid(json.loads(text))
        except Exception:  # a pattern regress does not read, say
            self.counts["oracle error"] += 1
            return
        self.counts["texts"] += 1
        self.counts["valid" if valid else "invalid"] += 1
        limits = matcher.lexer_limits
        accepted = matcher.accepts(text)
        gave_up = matcher.lexer_limits > limits
        if accepted and not valid:
            error = jsonschema.exceptions.best_match(validator.iter_errors(json.loads(text)))
            self.wrong_accepts.append(f"{name}: {text[:300]} ({error.message[:200]})")
        elif valid and not accepted:
            reason = _LEXER_GAVE_UP if gave_up else _reject_reason(json.loads(text))
            self.rejects[reason].append(f"{name}: {text[:200]}")


def _check_schema(tally: Tally, name: str, schema: Any) -> None:
    try:
        matcher = SchemaMatcher(schema)
    except UnsupportedSchemaError:
        tally.counts["refused"] += 1
        return
    try:
        # from_schema rewrites the schema it is given in place (properties sorted, say).
        strategy = hypothesis_jsonschema.from_schema(copy.deepcopy(schema))
        validator = oracle(schema)
    except Exception:  # a draft or keyword hypothesis-jsonschema does not generate
        tally.counts["not generated"] += 1
        return

    @settings(max_examples=EXAMPLES, derandomize=True, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def run(value: Any) -> None:
        tally.judge(name, value, schema, matcher, validator)
        for variant in mutations(value, schema, schema, MUTATIONS):
            tally.judge(name, variant, schema, matcher, validator)

    try:
        run()
    except Exception as exc:  # generation itself failed (unsatisfiable, unsupported, ...)
        tally.counts[f"generation failed ({type(exc).__name__})"] += 1
        return
    tally.counts["schemas"] += 1


def test_no_text_the_grammar_accepts_is_invalid() -> None:
    tally = Tally()
    for path in _sample():
        schema = json.loads(path.read_text(encoding="utf-8"))["schema"]
        _check_schema(tally, path.name, schema)
    print(f"\ndifferential: {dict(tally.counts)}")
    print(f"formats the oracle asserts: {sorted(jsonschema.FormatChecker().checkers)}")
    print(f"multipleOf where float division and exact decimals disagree: {len(FLOAT_DIVISION)}")
    for reason, texts in sorted(tally.rejects.items()):
        print(f"grammar rejects, oracle accepts ({reason}): {len(texts)}, e.g. {texts[:3]}")
    assert not tally.wrong_accepts, "\n".join(tally.wrong_accepts)
    assert tally.counts["schemas"] >= 40 and tally.counts["invalid"] >= 100
