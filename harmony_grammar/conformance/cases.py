"""Finding and reading the conformance cases (``conformance/*.json`` at the checkout's top).

The cases ship inside the wheel as ``harmony_grammar/conformance_cases/``; in a source checkout
they are read from the repository's top-level ``conformance/`` folder (the same pattern as
:func:`harmony_grammar.format.grammar.grammar_path`). One JSON file holds one topic; its cases
follow ``conformance/schema.json``, described in ``conformance/README.md``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..base.errors import HarmonyGrammarError

__all__ = [
    "PACKAGED_FOLDER",
    "SCHEMA_FILE",
    "Case",
    "CaseFormatError",
    "cases_path",
    "load_cases",
    "load_schema",
]

#: Where the wheel puts the cases, inside the package.
PACKAGED_FOLDER = "conformance_cases"
#: The JSON Schema of a topic file, beside the cases.
SCHEMA_FILE = "schema.json"


class CaseFormatError(HarmonyGrammarError, ValueError):
    """A topic file that is not valid JSON or does not follow ``schema.json``."""


def cases_path() -> Path:
    """The folder of the cases: the installed package's copy first, then the checkout's."""
    packaged = resources.files("harmony_grammar").joinpath(PACKAGED_FOLDER)
    if packaged.joinpath(SCHEMA_FILE).is_file():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "conformance"
    if (checkout / SCHEMA_FILE).is_file():
        return checkout
    raise FileNotFoundError("the conformance cases are not installed with harmony_grammar")


@functools.cache
def load_schema(folder: Path | None = None) -> dict[str, Any]:
    """The JSON Schema every topic file follows."""
    path = (folder or cases_path()) / SCHEMA_FILE
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


@dataclass(frozen=True)
class Case:
    """One case: its topic (the file's stem), its id and the case object as written."""

    topic: str
    id: str
    data: Mapping[str, Any]

    @property
    def is_render(self) -> bool:
        """A rendering case (a conversation in, text and ids expected) rather than a parse."""
        return "conversation" in self.data

    @property
    def description(self) -> str:
        """What the case checks, in a sentence."""
        return str(self.data["description"])


def _read_topic(path: Path, validator: Any) -> list[Case]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CaseFormatError(f"{path.name}: not JSON: {exc}") from None
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(part) for part in first.absolute_path)
        raise CaseFormatError(f"{path.name}: /{where}: {first.message}")
    return [Case(path.stem, case["id"], case) for case in document["cases"]]


def load_cases(folder: Path | None = None, topics: Sequence[str] = ()) -> list[Case]:
    """Every case of every topic file (or of ``topics``), topics in name order.

    Each file is checked against ``schema.json`` and ids must be unique across the suite;
    a problem raises :class:`CaseFormatError` naming the file and the place.
    """
    import jsonschema

    folder = folder or cases_path()
    schema = load_schema(folder)
    validator = jsonschema.Draft202012Validator(schema)
    paths = sorted(p for p in folder.glob("*.json") if p.name != SCHEMA_FILE)
    if topics:
        wanted = set(topics)
        unknown = wanted - {p.stem for p in paths}
        if unknown:
            raise CaseFormatError(f"no such topic: {', '.join(sorted(unknown))}")
        paths = [p for p in paths if p.stem in wanted]
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for path in paths:
        for case in _read_topic(path, validator):
            if case.id in seen:
                raise CaseFormatError(f"{path.name}: id {case.id!r} is also in {seen[case.id]}")
            seen[case.id] = path.name
            cases.append(case)
    return cases
