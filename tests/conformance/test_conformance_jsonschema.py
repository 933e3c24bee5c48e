"""The JSON-Schema-Test-Suite (draft 2020-12 and draft 7) against the compiled grammars.

For every test group the compiler accepts, the grammar's verdict on each instance must equal
the suite's ``valid`` in both whitespace modes: zero wrong accepts, zero wrong rejects.
Instances are serialised in the schema's canonical key order (docs/schema-grammar.md).
``format.json`` tests annotation-only behaviour while this compiler asserts formats: there, the
strings the suite calls "invalid ... only an annotation by default" must be rejected.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from harmony_grammar.schema import UnsupportedSchemaError, canonical_json

from ..conftest import shared_data_dir

pytest.importorskip("llguidance")
from harmony_grammar.schema.matcher import SchemaMatcher

DRAFTS = {
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
    "draft7": "http://json-schema.org/draft-07/schema#",
}


def _oracle(path: Path, test: dict[str, Any]) -> bool:
    # format.json marks the strings that are invalid for their format as "only an
    # annotation by default"; asserting formats, the grammar must reject exactly those.
    if path.name == "format.json" and "only an annotation by default" in test["description"]:
        return False
    return bool(test["valid"])


@pytest.mark.parametrize("draft", sorted(DRAFTS))
def test_suite_verdicts_match(draft: str) -> None:
    folder = shared_data_dir("json-schema-test-suite") / "tests" / draft
    refused: collections.Counter[str] = collections.Counter()
    accepted = 0
    wrong: list[str] = []
    for path in sorted(folder.glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = group["schema"]
            if isinstance(schema, dict) and "$schema" not in schema:
                schema = {"$schema": DRAFTS[draft], **schema}
            try:
                compact = SchemaMatcher(schema)
                flexible = SchemaMatcher(schema, whitespace="flexible")
            except UnsupportedSchemaError as exc:
                refused[exc.keyword] += 1
                continue
            accepted += 1
            for test in group["tests"]:
                expected = _oracle(path, test)
                got = (
                    compact.accepts(canonical_json(test["data"], schema)),
                    flexible.accepts(canonical_json(test["data"], schema, indent=2)),
                )
                if got != (expected, expected):
                    wrong.append(f"{path.name}: {group['description']}: {test['description']}")
    print(f"\n{draft}: {accepted} groups compiled, refused by keyword: {dict(refused)}")
    assert not wrong, "\n".join(wrong)
    assert accepted > 150  # the suite's core groups must compile, not just be refused
