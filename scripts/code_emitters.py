"""Which functions emit each diagnostic code: found in the source, written into the records.

    python scripts/code_emitters.py          # rewrite format/codes.json's emitted_by
    python scripts/code_emitters.py --check  # exit 1 when a record's emitted_by differs

A code's ``emitted_by`` (``harmony_grammar/format/codes.json``) is generated, not written by
hand: every module-level definition of the package whose body holds a code literal outside
a comparison emits it (a rule of ``validation.rules.RULES`` is emitted by its function; the
repair table only declares codes). ``scripts/diagnostics_doc.py`` runs this first;
``tests/format/test_codes.py`` checks the records against :func:`scan`.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path

from harmony_grammar.validation.rules import RULES

__all__ = ["emitted_by", "scan", "write"]

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harmony_grammar"
CODES = PACKAGE / "format" / "codes.json"
_CODE = re.compile(r"HG\d{3}")
#: Where codes are declared rather than emitted: the repair table (its rows list the codes
#: their functions report). The records themselves are data (``format/codes.json``).
_DECLARING = {"format.repairs.LENIENT"}


def _code_literals(node: ast.AST) -> list[ast.Constant]:
    return [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _CODE.fullmatch(n.value)
    ]


def _top_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


@cache
def scan() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Code -> the places that emit it, and code -> the places that compare with it.

    A place is ``module.name`` of a module-level definition; a code in the rule table
    (``validation.rules.RULES``) is emitted by its rule.
    """
    emitted: dict[str, set[str]] = defaultdict(set)
    compared: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for top in ast.parse(path.read_text(encoding="utf-8")).body:
            name = _top_name(top)
            if name is None:
                assert not _code_literals(top), f"{module}: a code outside any definition"
                continue
            place = f"{module}.{name}"
            in_comparisons = {
                id(literal)
                for node in ast.walk(top)
                if isinstance(node, ast.Compare)
                for literal in _code_literals(node)
            }
            for literal in _code_literals(top):
                code = literal.value
                if id(literal) in in_comparisons:
                    compared[code].add(place)
                elif place == "validation.rules.RULES":
                    emitted[code].add(f"validation.rules.{RULES[code].__name__}")
                elif place not in _DECLARING:
                    emitted[code].add(place)
    return emitted, compared


def emitted_by() -> dict[str, list[str]]:
    """Each code's emitters, sorted (the value its record's ``emitted_by`` must hold)."""
    return {code: sorted(places) for code, places in scan()[0].items()}


def _formatted(places: list[str]) -> str:
    one_line = "[" + ", ".join(json.dumps(p) for p in places) + "]"
    if len(one_line) + len('      "emitted_by": ,') <= 100:
        return one_line
    inner = ",\n".join(f"        {json.dumps(p)}" for p in places)
    return "[\n" + inner + "\n      ]"


def write(check: bool = False) -> list[str]:
    """Rewrite each record's ``emitted_by`` in codes.json (its other text untouched); the
    codes whose list changed (``check``: nothing is written)."""
    text = CODES.read_text(encoding="utf-8")
    found = emitted_by()
    changed: list[str] = []
    for record in json.loads(text)["codes"]:
        code = record["code"]
        want = found.get(code, [])
        if want == record["emitted_by"] or not want:
            continue
        changed.append(code)
        at = text.index(f'"code": "{code}"')
        start = text.index('"emitted_by": ', at) + len('"emitted_by": ')
        end = text.index("]", start) + 1
        text = text[:start] + _formatted(want) + text[end:]
    if changed and not check:
        json.loads(text)
        CODES.write_text(text, encoding="utf-8")
    return changed


def main(argv: list[str]) -> int:
    changed = write(check=argv == ["--check"])
    if argv == ["--check"] and changed:
        print(f"emitted_by differs for {', '.join(changed)}: run python scripts/code_emitters.py")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
