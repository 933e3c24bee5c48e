"""``harmony-grammar schema-grammar``: output, refusals (exit 1) and bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import lark
import pytest

from harmony_grammar.cli.main import main


def _write(tmp_path: Path, value: object) -> str:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


def test_prints_a_loadable_lark_grammar(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, {"type": "object", "properties": {"n": {"type": "integer"}}})
    assert main(["schema-grammar", path]) == 0
    parser = lark.Lark(capsys.readouterr().out)
    parser.parse('{"n":12}')
    with pytest.raises(lark.exceptions.LarkError):
        parser.parse('{"n":"12"}')


@pytest.mark.parametrize(
    ("target", "head"),
    [("llguidance", "%llguidance {}"), ("gbnf", "root ::="), ("xgrammar", "root ::=")],
)
def test_target_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, head: str
) -> None:
    path = _write(tmp_path, {"type": "boolean"})
    assert main(["schema-grammar", path, "--target", target, "--whitespace", "flexible"]) == 0
    assert capsys.readouterr().out.startswith(head)



def test_generation_grammar_is_closed_and_plain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, {"type": "object", "properties": {"n": {"type": "integer"}}})
    assert main(["schema-grammar", path, "--generation"]) == 0
    parser = lark.Lark(capsys.readouterr().out)
    parser.parse('{"n":12}')
    for text in ('{"n":1,"m":2}', '{"\\u006e":1}'):  # open objects and escaped ASCII: exact only
        with pytest.raises(lark.exceptions.LarkError):
            parser.parse(text)
    assert main(["schema-grammar", path]) == 0
    lark.Lark(capsys.readouterr().out).parse('{"\\u006e":1,"m":2}')

def test_refused_schema_exits_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, {"properties": {"a": {"not": {"minLength": 2}}}})
    assert main(["schema-grammar", path]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'not'" in err


@pytest.mark.parametrize("content", ['{"type": ', "\xff"])
def test_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content.encode("latin-1"))
    assert main(["schema-grammar", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harmony-grammar: error: ") and err.count("\n") == 1
    assert main(["schema-grammar", str(tmp_path / "missing.json")]) == 2
