"""The documentation lists every diagnostic code the code can emit, runs as written, and
docs/architecture.md names only identifiers and files that exist.

Code blocks (README.md, examples/README.md, docs/*.md), by the word after the opening fence:

- ``python``: run (``exec``, in a fresh namespace);
- ``sh``: each command run (a line ending in ``\\`` goes on), exit status 0 required;
  ``pip install`` lines are the setup this environment already has, and are not run;
- ``console``: each ``$ `` line run and its output compared with the lines under it (stdout,
  then stderr); a line ``...`` stands for any number of lines;
- ``text``, ``json``, ``jsonl``, ``toml``, ``mermaid``, ``harmony``: output or data, not run
  (``harmony`` examples in docs/rules.md are run by tests/validation/test_rules.py);
- a ``python`` or ``sh`` block whose first line is ``# not run`` (with the reason, which the
  reader sees) claims not to run and is not run;
- a block with no word after the fence, or an indented code block, fails the test: every
  block says which kind it is.

The commands run in a temporary directory holding a copy of ``examples/``, so the paths the
docs write (``examples/...``) resolve and what they write lands there. ``harmony-grammar``
runs in this process (``main``) when the line is one plain invocation, else under ``bash``
with ``harmony-grammar`` on ``PATH`` meaning this interpreter's ``-m harmony_grammar``.
The README's command table runs too: each row's example line must exit 0 or 1 (1: the input
has errors, as for the mangled completion), never 2.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

from harmony_grammar.cli.main import main
from harmony_grammar.format.diagnostics import CATALOGUE

DOCS = Path(__file__).resolve().parents[2] / "docs"


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
    assert shown == LENIENT.markdown(), "docs/diagnostics.md: run python scripts/diagnostics_doc.py"


def test_diagnostics_md_is_generated_from_the_codes_records():
    """docs/diagnostics.md is what scripts/diagnostics_doc.py makes of format/codes.json."""
    from scripts.diagnostics_doc import render

    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    assert text == render(), "docs/diagnostics.md differs: run python scripts/diagnostics_doc.py"


def test_every_lenient_code_is_reported_by_a_row():
    """HG15x-HG17x are the repairs' codes; each is a row's (the engine itself reports
    HG153 and HG170, which are findings of a well-read message, not repairs)."""
    from harmony_grammar.format.repairs import LENIENT

    repair_codes = {c for c in CATALOGUE if "HG150" <= c <= "HG179"} - {"HG153", "HG162", "HG170"}
    assert repair_codes - LENIENT.codes() == set()


# -- the docs run as written (issue 35) ------------------------------------------------------

ROOT = DOCS.parent
DOC_FILES = (ROOT / "README.md", ROOT / "examples" / "README.md", *sorted(DOCS.glob("*.md")))
RUN_KINDS = frozenset({"python", "sh", "console"})
DATA_KINDS = frozenset({"text", "json", "jsonl", "toml", "mermaid", "harmony"})
NOT_RUN = "# not run"
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`*]")


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, the words after its fence, its lines."""

    path: Path
    line: int
    kind: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.kind in RUN_KINDS and not self.body.startswith(NOT_RUN)


def _scan(path: Path) -> tuple[list[Block], set[int]]:
    """The fenced blocks of a Markdown file (CommonMark fences: a closing fence as long as
    the opening one or longer), and the numbers of the lines they cover."""
    blocks, covered = [], set()
    opened: tuple[int, str, str] | None = None  # line, fence, info
    body: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"(`{3,})(.*)", line)
        if opened is not None:
            covered.add(number)
        if opened is None and fence:
            opened, body = (number, fence.group(1), fence.group(2).strip()), []
            covered.add(number)
        elif opened is not None and fence and fence.group(1) >= opened[1] and not fence.group(2):
            info = opened[2].split()
            blocks.append(Block(path, opened[0], info[0] if info else "", "\n".join(body)))
            opened = None
        elif opened is not None:
            body.append(line)
    return blocks, covered


def _indented_blocks(path: Path) -> list[int]:
    """Lines that open an indented code block (4 spaces after a blank line, not a list's)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    fenced = _scan(path)[1]
    found = []
    for i, line in enumerate(lines):
        if i + 1 in fenced or i < 2 or not line.startswith("    ") or lines[i - 1].strip():
            continue
        before = next((x for x in reversed(lines[: i - 1]) if x.strip()), "")
        if not re.match(r"\s|[-*+] |\d+\. |\|", before):
            found.append(i + 1)
    return found


ALL_BLOCKS = [block for path in DOC_FILES for block in _scan(path)[0]]


def test_every_block_says_its_kind():
    unknown = [
        f"{b.where} ({b.kind or 'no word after the fence'})"
        for b in ALL_BLOCKS
        if b.kind not in RUN_KINDS | DATA_KINDS
    ]
    indented = [f"{p.relative_to(ROOT)}:{n}" for p in DOC_FILES for n in _indented_blocks(p)]
    assert not unknown, f"blocks of no known kind (see this file's docstring): {unknown}"
    assert not indented, f"indented code blocks: fence them with their kind: {indented}"


@pytest.fixture
def docs_dir(tmp_path, monkeypatch):
    """A directory holding a copy of examples/, as the current directory."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shim = tmp_path / "bin" / "harmony-grammar"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m harmony_grammar "$@"\n')
    shim.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _commands(body: str) -> list[str]:
    """The commands of a ``sh`` block: continuation lines joined, comments and installs out."""
    joined = re.sub(r"\\\n\s*", " ", body)
    return [
        line.strip()
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "pip install"))
    ]


def _run(command: str, capsys) -> tuple[int, str]:
    """Run one documented command: its exit status and its stdout followed by its stderr."""
    argv = shlex.split(command)
    if argv[0] == "harmony-grammar" and not _SHELL_SYNTAX.search(command):
        capsys.readouterr()
        status = main(argv[1:])
        out, err = capsys.readouterr()
        return status, out + err
    env = {**os.environ, "PATH": f"{Path.cwd() / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def _matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``shown``, a ``...`` line in ``shown`` standing for any lines."""
    if not shown:
        return not actual
    if shown[0] == "...":
        return any(_matches(shown[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and shown[0] == actual[0] and _matches(shown[1:], actual[1:])


@pytest.mark.parametrize(
    "block", [b for b in ALL_BLOCKS if b.runs], ids=lambda b: f"{b.where}-{b.kind}"
)
def test_the_block_runs_as_written(block, docs_dir, capsys):
    if block.kind == "python":
        code = compile(block.body, block.where, "exec")
        exec(code, {"__name__": "__docs__"})  # the docs' own code, run as written
        return
    if block.kind == "sh":
        for command in _commands(block.body):
            status, output = _run(command, capsys)
            assert status == 0, f"{block.where}: {command!r} exited {status}:\n{output[-2000:]}"
        return
    steps = re.split(r"^\$ ", block.body, flags=re.M)
    assert steps[0] == "", f"{block.where}: a console block starts with a '$ ' line"
    for step in steps[1:]:
        command, _, shown = step.partition("\n")
        _, output = _run(command, capsys)
        assert _matches(shown.splitlines(), output.splitlines()), (
            f"{block.where}: {command!r} printed:\n{output}"
        )


def _table_examples() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"^\|.*\| `(harmony-grammar [^`]+)` \|$", readme, flags=re.M)


def test_the_command_table_has_an_example_for_every_command():
    from harmony_grammar.cli.main import COMMAND_MODULES

    shown = {command.split()[1] for command in _table_examples()}
    # serve runs until stopped: the Quick start shows it, the serve tests start it
    assert shown == {name.replace("_", "-") for name in COMMAND_MODULES} - {"serve"}


@pytest.mark.parametrize("command", _table_examples())
def test_the_command_table_s_example_runs(command, docs_dir, capsys):
    status, output = _run(command, capsys)
    assert status in (0, 1), f"{command!r} exited {status}:\n{output[-2000:]}"
    assert "internal error" not in output and "usage:" not in output


def test_the_shipped_parquet_is_what_prepare_makes_now(docs_dir, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    status, _ = _run("harmony-grammar prepare examples/chat.jsonl -o fresh.parquet", capsys)
    assert status == 0
    shipped, fresh = pq.read_table(ROOT / "examples/chat.parquet"), pq.read_table("fresh.parquet")
    assert shipped.column_names == fresh.column_names
    for name in shipped.column_names:
        assert shipped[name].to_pylist() == fresh[name].to_pylist(), (
            f"examples/chat.parquet's {name} differs from what prepare makes now: remake it "
            "with examples/README.md's command"
        )


def test_a_documented_pipeline_runs_under_bash(docs_dir, capsys):
    # shell syntax goes to bash, with harmony-grammar on PATH as this interpreter's module
    status, output = _run("harmony-grammar tokens examples/completion.harmony | head -c 8", capsys)
    assert (status, output) == (0, "[200005,")
    # pipefail: a usage mistake (exit 2, one line) is not hidden by the pipe's last command
    status, output = _run("harmony-grammar validate examples/chat.jsonl 2>&1 | wc -l", capsys)
    assert (status, output.strip()) == (2, "1")


# --------------------------------------------- docs/architecture.md names what exists

ROOT = Path(__file__).resolve().parents[2]
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?")
_FILE = re.compile(r"[\w./*-]+\.(?:py|lark|json|md|toml|html|jsonl)")


def _backticked(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return re.findall(r"`([^`\n]+)`", text)


def _package_names() -> set[str]:
    """Every name the package defines (modules, classes, functions, methods, module and class
    variables, attributes it sets), and the names of tests/integration/test_layering.py's graph."""
    names = {"harmony_grammar"}
    sources = [*(ROOT / "harmony_grammar").rglob("*.py"), ROOT / "tests" / "integration" / "test_layering.py"]
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
