"""The documentation is true to the code: every diagnostic code the code can emit is listed,
and docs/architecture.md names only identifiers and files that exist."""

from __future__ import annotations

import ast
import builtins
import importlib
import re
import typing
from pathlib import Path

from harmony_grammar.format.diagnostics import CATALOGUE

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_code_is_documented():
    documented = set()
    for name in ("diagnostics.md", "rules.md"):
        path = DOCS / name
        if path.is_file():
            documented |= set(re.findall(r"\bHG\d{3}\b", path.read_text(encoding="utf-8")))
    missing = sorted(set(CATALOGUE) - documented)
    assert not missing, f"undocumented diagnostic codes: {missing}"


def test_parser_codes_documented_with_their_severity():
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    for code, entry in CATALOGUE.items():
        if code.startswith("HG1"):
            row = next(line for line in text.splitlines() if line.startswith(f"| {code} |"))
            assert f"| {entry.slug} | {entry.severity.value} |" in row


def test_the_repair_table_is_documented_as_it_is():
    from harmony_grammar.format.repairs import LENIENT

    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    shown = text.split("<!-- repair-table:start -->\n", 1)[1].split("<!-- repair-table:end -->")[0]
    assert shown == LENIENT.markdown(), "docs/diagnostics.md: paste LENIENT.markdown()"


def test_every_lenient_code_is_reported_by_a_row():
    """HG15x-HG17x are the repairs' codes; each is a row's (the engine itself reports
    HG153 and HG170, which are findings of a well-read message, not repairs)."""
    from harmony_grammar.format.repairs import LENIENT

    repair_codes = {c for c in CATALOGUE if "HG150" <= c <= "HG179"} - {"HG153", "HG162", "HG170"}
    assert repair_codes - LENIENT.codes() == set()


# --------------------------------------------- docs/architecture.md names what exists

ROOT = Path(__file__).resolve().parents[1]
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?")
_FILE = re.compile(r"[\w./*-]+\.(?:py|lark|json|md|toml|html|jsonl)")


def _backticked(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return re.findall(r"`([^`\n]+)`", text)


def _package_names() -> set[str]:
    """Every name the package defines (modules, classes, functions, methods, module and class
    variables, attributes it sets), and the names of tests/test_layering.py's graph."""
    names = {"harmony_grammar"}
    sources = [*(ROOT / "harmony_grammar").rglob("*.py"), ROOT / "tests" / "test_layering.py"]
    for source in sources:
        names.update(part for part in source.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
    return names


def _other_names() -> set[str]:
    """Names the doc may use that are not Python of the package: the grammars' symbols and
    the JSON Schema keywords the compiler handles (quoted in its source)."""
    names: set[str] = set()
    for grammar in (ROOT / "grammars").glob("*.lark"):
        text = grammar.read_text(encoding="utf-8")
        names.update(re.findall(r"^\s*[?!]?(\w+)\s*[.:]", text, re.M))
        names.update(re.findall(r"\w+", " ".join(re.findall(r"^%declare (.*)$", text, re.M))))
    for source in (ROOT / "harmony_grammar" / "schema").glob("*.py"):
        names.update(re.findall(r'"(\$?[a-zA-Z]+)"', source.read_text(encoding="utf-8")))
    return names


def _importable(dotted: str) -> bool:
    """``dotted`` names a module of an installed package, or an attribute under one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(value, part):
                return False
            value = getattr(value, part)
        return True
    return hasattr(builtins, dotted) or hasattr(typing, dotted)


def test_every_python_identifier_in_the_architecture_doc_exists():
    package, other = _package_names(), _other_names()
    missing = []
    for span in sorted(set(_backticked(ROOT / "docs" / "architecture.md"))):
        if not _IDENTIFIER.fullmatch(span) or _FILE.fullmatch(span):
            continue  # not an identifier: code, a call with arguments, a file name
        dotted = span.removesuffix("()")
        first = dotted.split(".")[0]
        if first in package and all(part in package for part in dotted.split(".")):
            continue
        if first not in package and (dotted in other or _importable(dotted)):
            continue
        missing.append(span)
    assert not missing, f"docs/architecture.md names what the code does not hold: {missing}"


def test_every_file_the_architecture_doc_names_exists():
    missing = []
    for span in sorted(set(_backticked(ROOT / "docs" / "architecture.md"))):
        if not _FILE.fullmatch(span) or "*" in span:
            continue
        places = [ROOT / span, ROOT / "harmony_grammar" / span]
        if "/" not in span:  # a bare name: a module of the package, or a top folder's file
            places += [*(ROOT / "harmony_grammar").rglob(span), *ROOT.glob(f"*/{span}")]
        if not any(place.exists() for place in places):
            missing.append(span)
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"
