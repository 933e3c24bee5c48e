"""The package's layering (docs/architecture.md), checked on the source with ``ast``.

Every ``import`` and ``from ... import`` of every module counts: relative ones resolved, ones
inside functions, and ones under ``if TYPE_CHECKING:`` (a type-only back-import is still a
cycle in the design). The tests fail on

* an import from one subpackage to another along an edge the allowed graph (``ALLOWED``)
  does not list (both modules, both subpackages and the statement named);
* any import cycle between modules, inside a subpackage or across (the cycle named);
* a module that imports its own package's ``__init__`` (import the defining module: the
  ``__init__`` re-exports its submodules, so the edge goes round in a circle);
* a module outside the subpackages (only ``__init__`` and ``__main__`` may sit at the top);
* an import of a module of the package that does not exist.

What is an edge, as Python executes it:

* ``import a.b.c`` and ``from a.b.c import name`` depend on ``a.b.c`` and on the ``__init__``
  of every package on the way (``a``, ``a.b``), except the importer's own ancestor packages,
  which Python has already started importing before the importer runs;
* ``from a.b import name`` with ``name`` a submodule of the package ``a.b`` depends on
  ``a.b.name`` (and on ``a.b``'s ``__init__`` unless that is an ancestor of the importer);
  with ``name`` anything else it depends on ``a.b``'s ``__init__``, which defines or
  re-exports it. So ``from . import sibling`` is an edge to the sibling only, while
  ``from . import SomeName`` is an edge to the package's own ``__init__`` (and fails).
* ``importlib.import_module("literal.name")`` counts, and ``import_module(f"pkg.sub.{name}")``
  counts as importing every module directly inside ``pkg.sub`` (the CLI loads its commands
  so); a name computed any other way cannot be seen.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

PACKAGE = "harmony_grammar"
PACKAGE_ROOT = Path(__file__).resolve().parents[2] / PACKAGE

# The allowed edges between subpackages: each subpackage, what it is, and the subpackages its
# modules may import directly (its own always). Nothing else may be imported: an import along
# an edge not listed fails the test, naming the import. docs/architecture.md draws this graph
# (generated from it: ``python -m tests.integration.test_layering`` prints the block, and
# test_the_docs_draw_this_graph checks the doc holds it). A new subpackage is one row here,
# plus its name in the rows of the subpackages that may use it; the graph must stay acyclic.
ALLOWED: dict[str, tuple[str, frozenset[str]]] = {
    "base": (
        "the base error, the str-enum base, the options base, moved names",
        frozenset(),
    ),
    "schema": (
        "JSON Schema to IR to lark, llguidance, gbnf",
        frozenset({"base"}),
    ),
    "declarations": (
        "tool specs, the tools-list reader, names, TypeScript read back",
        frozenset({"base"}),
    ),
    "format": (
        "tokens, vocabulary, grammar, lexers, engine, parse, stream; the argument-check protocol",
        frozenset({"declarations", "base"}),
    ),
    "tools": (
        "argument checks (plugged into format), parameters schemas, JSON limits",
        frozenset({"declarations", "schema", "base"}),
    ),
    "safety": (
        "escaping, leaks, repair",
        frozenset({"format", "base"}),
    ),
    "rendering": (
        "conversation, renderer, TypeScript, profiles, request bodies in, openai-harmony",
        # tools: the JSON limits (a schema nested past MAX_JSON_DEPTH is a RenderError).
        frozenset({"safety", "format", "tools", "declarations", "base"}),
    ),
    "bridges": (
        "completions out: Chat Completions, Responses (whole = stream)",
        frozenset({"rendering", "format", "declarations"}),
    ),
    "dialect": (
        "the in-band dialect: format guide, agent-side event view",
        frozenset({"safety", "format", "tools", "declarations", "base"}),
    ),
    "data": (
        "datasets: pieces, records, one process pool, one Ray engine",
        frozenset({"tools", "base"}),
    ),
    "validation": (
        "rule table, validate, the validation batch function",
        frozenset(
            {"data", "rendering", "safety", "format", "tools", "declarations", "schema", "base"}
        ),
    ),
    "generation": (
        "turn grammar, outlines export, hf, sampling",
        frozenset({"format", "tools", "declarations", "schema", "base"}),
    ),
    "training": (
        "importers, training render, the prepare batch function, writers",
        frozenset({"data", "rendering", "format", "tools", "base"}),
    ),
    "audit": (
        "what a loss mask trains: segments, the exact mask, findings",
        frozenset({"training", "validation", "data", "rendering", "format", "base"}),
    ),
    "gateway": (
        "serve: request planning, backends, the embedded engine, the ASGI app",
        frozenset(
            {
                "generation",
                "bridges",
                "rendering",
                "format",
                "tools",
                "declarations",
                "schema",
                "base",
            }
        ),
    ),
    "conformance": (
        "cases, adapters, openai-harmony oracle, scorecard",
        frozenset({"rendering", "format", "base"}),
    ),
    "cli": (
        "main + one module per command",
        frozenset(
            {
                "conformance",
                "gateway",
                "audit",
                "training",
                "generation",
                "validation",
                "data",
                "bridges",
                "rendering",
                "safety",
                "format",
                "tools",
                "schema",
                "base",
            }
        ),
    ),
}

Graph = Mapping[str, tuple[str, frozenset[str]]]

# The package's own __init__ (the curated public API) and __main__ sit above every layer
# and may import anything; they are the only modules allowed outside a subpackage.


# ---------------------------------------------------------------------------- the checker


@dataclass(frozen=True)
class Edge:
    """``importer`` depends on ``imported`` because of the statement at ``path:line``."""

    importer: str
    imported: str
    path: str
    line: int
    statement: str

    def where(self) -> str:
        return f"{self.path}:{self.line} ({self.statement})"


@dataclass
class ImportGraph:
    """The modules of a package and the import edges between them."""

    package: str
    modules: dict[str, Path]  # dotted name -> file
    packages: frozenset[str]  # the dotted names whose file is an __init__.py
    edges: list[Edge]
    unresolved: list[Edge]  # imports of a module of the package that does not exist


def discover_modules(root: Path, package: str) -> tuple[dict[str, Path], frozenset[str]]:
    """Every ``.py`` file under ``root`` (the directory of ``package``) by dotted name."""
    modules: dict[str, Path] = {}
    packages: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).with_suffix("")
        parts = [package, *relative.parts]
        if "__pycache__" in parts:
            continue
        if parts[-1] == "__init__":
            parts.pop()
            packages.add(".".join(parts))
        modules[".".join(parts)] = path
    return modules, frozenset(packages)


def ancestors(module: str, packages: frozenset[str]) -> set[str]:
    """The packages Python has already started importing when ``module`` runs."""
    parts = module.split(".")
    found = {".".join(parts[:i]) for i in range(1, len(parts))}
    if module in packages:  # a package's __init__ runs inside its own package
        found.add(module)
    return found


def _resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level - 1 > len(base) - 1:
        raise ValueError(f"relative import beyond the top of the package in {module}")
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def _statement_text(node: ast.AST, source: str) -> str:
    text = ast.get_source_segment(source, node) or type(node).__name__
    return " ".join(text.split())


def _module_edges(
    module: str, path: Path, repo: Path, modules: Mapping[str, Path], packages: frozenset[str]
) -> list[Edge]:
    """The import edges of one module (to modules of the package, existing or not)."""
    package = module.split(".")[0]
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    own_ancestors = ancestors(module, packages)
    is_package = module in packages
    display = path.relative_to(repo).as_posix()
    found: list[Edge] = []

    def add(target: str, node: ast.stmt | ast.expr) -> None:
        found.append(Edge(module, target, display, node.lineno, _statement_text(node, source)))

    def add_dotted(dotted: str, node: ast.stmt | ast.expr) -> None:
        """``dotted`` and the packages on the way that are not already importing."""
        if dotted != package and not dotted.startswith(package + "."):
            return
        parts = dotted.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            if prefix in packages and prefix not in own_ancestors:
                add(prefix, node)
        add(dotted, node)

    for node in ast.walk(tree):  # every statement, in functions and TYPE_CHECKING too
        if isinstance(node, ast.Import):
            for alias in node.names:
                add_dotted(alias.name, node)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                source_module = _resolve_relative(module, is_package, node.level, node.module)
            else:
                source_module = node.module or ""
            if source_module not in packages:
                add_dotted(source_module, node)
                continue
            # From a package: each name is a submodule or something its __init__ defines.
            needs_init = False
            for alias in node.names:
                submodule = f"{source_module}.{alias.name}"
                if alias.name != "*" and submodule in modules:
                    add(submodule, node)
                else:
                    needs_init = True
            if needs_init or source_module not in own_ancestors:
                add_dotted(source_module, node)
        elif isinstance(node, ast.Call) and _is_import_module_call(node):
            argument = node.args[0]
            if isinstance(argument, ast.Constant):
                add_dotted(argument.value, node)
                continue
            # f"pkg.sub.{name}": any module directly inside pkg.sub may be the one imported.
            prefix = argument.values[0].value.rstrip(".")  # type: ignore[attr-defined]
            for candidate in modules:
                head, _, tail = candidate.rpartition(".")
                if head == prefix and candidate != module and tail != "__main__":
                    add_dotted(candidate, node)
    return found


def _is_import_module_call(node: ast.Call) -> bool:
    """``importlib.import_module(...)`` of an absolute literal name, or of an f-string that
    starts with a literal package prefix (``f"pkg.sub.{name}"``)."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not node.args:
        return False
    argument = node.args[0]
    if isinstance(argument, ast.Constant):
        return isinstance(argument.value, str) and not argument.value.startswith(".")
    if isinstance(argument, ast.JoinedStr) and argument.values:
        first = argument.values[0]
        return (
            isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and first.value.endswith(".")
            and not first.value.startswith(".")
        )
    return False


def collect_imports(root: Path, package: str) -> ImportGraph:
    """Read every module of ``package`` (at ``root``) and return its import graph."""
    modules, packages = discover_modules(root, package)
    edges: set[Edge] = set()
    unresolved: set[Edge] = set()
    for module, path in modules.items():
        for edge in _module_edges(module, path, root.parent, modules, packages):
            (edges if edge.imported in modules else unresolved).add(edge)

    def order(edge: Edge) -> tuple[str, int, str]:
        return (edge.importer, edge.line, edge.imported)

    return ImportGraph(
        package, modules, packages, sorted(edges, key=order), sorted(unresolved, key=order)
    )


def _subpackage(graph: ImportGraph, module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 2 and ".".join(parts[:2]) in graph.packages:
        return parts[1]
    return None


def misplaced_modules(graph: ImportGraph, allowed: Graph) -> list[str]:
    """Modules outside every subpackage, and subpackages missing from the allowed graph."""
    problems = []
    for module in graph.modules:
        sub = _subpackage(graph, module)
        if sub is None:
            if module not in {graph.package, f"{graph.package}.__main__"}:
                problems.append(
                    f"{module}: every module lives in a subpackage "
                    f"(only {graph.package}/__init__.py and __main__.py sit at the top)"
                )
        elif sub not in allowed:
            problems.append(
                f"{module}: subpackage {sub!r} is not in the allowed graph ALLOWED "
                "(tests/integration/test_layering.py, docs/architecture.md)"
            )
    return problems


def disallowed_imports(graph: ImportGraph, allowed: Graph) -> list[str]:
    """Edges from a subpackage module to another subpackage (or to the top level) along an
    edge the graph does not allow."""
    problems = []
    for edge in graph.edges:
        low = _subpackage(graph, edge.importer)
        if low is None:
            continue  # the package __init__ and __main__ may import anything
        high = _subpackage(graph, edge.imported) or "the top level"
        if high == low or low not in allowed:
            continue  # inside a subpackage; an unknown one is reported by misplaced_modules
        if high not in allowed[low][1]:
            may = ", ".join(sorted(allowed[low][1])) or "nothing"
            problems.append(
                f"{edge.importer} ({low}) imports {edge.imported} ({high}): {low} -> {high} "
                f"is not an allowed edge ({low} may import {may}): {edge.where()}"
            )
    return problems


def used_edges(graph: ImportGraph) -> dict[str, set[str]]:
    """The edges between subpackages that some import uses: ``{importer: {imported, ...}}``."""
    used: dict[str, set[str]] = {}
    for edge in graph.edges:
        low, high = _subpackage(graph, edge.importer), _subpackage(graph, edge.imported)
        if low is not None and high is not None and high != low:
            used.setdefault(low, set()).add(high)
    return used


def unused_edges(graph: ImportGraph, allowed: Graph) -> list[str]:
    """Allowed edges no import uses: the graph says more than the code does."""
    used = used_edges(graph)
    return [
        f"{low} -> {high} is allowed but no module of {low} imports {high}: remove it from "
        "ALLOWED (and run `python -m tests.integration.test_layering` for docs/architecture.md)"
        for low, (_, targets) in allowed.items()
        for high in sorted(targets - used.get(low, set()))
    ]


def own_package_imports(graph: ImportGraph) -> list[str]:
    """Edges from a module to the ``__init__`` of a package it is inside."""
    problems = []
    for edge in graph.edges:
        if edge.imported in graph.packages and edge.imported in ancestors(
            edge.importer, graph.packages
        ):
            problems.append(
                f"{edge.importer} imports its own package {edge.imported} (__init__): import "
                f"the defining module, not the package: {edge.where()}"
            )
    return problems


def _cycle_edges(graph: ImportGraph) -> dict[str, dict[str, Edge]]:
    """The graph for cycle search, without edges into an ancestor's ``__init__``: those are
    reported by :func:`own_package_imports`, and each would close a circle through the
    ``__init__`` that re-exports the importer."""
    out: dict[str, dict[str, Edge]] = {module: {} for module in graph.modules}
    for edge in graph.edges:
        if edge.imported in ancestors(edge.importer, graph.packages):
            continue
        out[edge.importer].setdefault(edge.imported, edge)
    return out


def strongly_connected(nodes: Iterable[str], succ: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(succ[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(succ[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def _shortest_cycle(start: str, members: set[str], succ: Mapping[str, Iterable[str]]) -> list[str]:
    """A shortest path start -> ... -> start inside one component."""
    previous: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(succ[node]):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in seen:
                    seen.add(child)
                    previous[child] = node
                    following.append(child)
        frontier = following
    return [start]


def import_cycles(graph: ImportGraph) -> list[str]:
    """One message per strongly connected set of modules (a cycle, or several sharing modules)."""
    succ = _cycle_edges(graph)
    problems = []
    for component in strongly_connected(sorted(succ), succ):
        if len(component) == 1 and component[0] not in succ[component[0]]:
            continue
        cycle = _shortest_cycle(component[0], set(component), succ)
        hops = "\n".join(f"    {a} -> {b}: {succ[a][b].where()}" for a, b in zip(cycle, cycle[1:]))
        problems.append(
            f"import cycle: {' -> '.join(cycle)}\n{hops}"
            + (
                f"\n    (modules in the cycle: {', '.join(component)})"
                if len(component) > 2
                else ""
            )
        )
    return problems


def check(graph: ImportGraph, allowed: Graph = ALLOWED) -> list[str]:
    """Every layering problem of ``graph``."""
    unresolved = [
        f"{e.importer} imports {e.imported}, which is not a module of the package: {e.where()}"
        for e in graph.unresolved
    ]
    return [
        *misplaced_modules(graph, allowed),
        *unresolved,
        *disallowed_imports(graph, allowed),
        *own_package_imports(graph),
        *import_cycles(graph),
    ]


def _report(problems: list[str]) -> str:
    return f"{len(problems)} layering problem(s) (see docs/architecture.md):\n" + "\n".join(
        f"  - {p}" for p in problems
    )


# ------------------------------------------------------------------- the real package


@cache
def real_graph() -> ImportGraph:
    return collect_imports(PACKAGE_ROOT, PACKAGE)


def test_allowed_graph_matches_the_subpackages():
    subpackages = {
        module.split(".")[1] for module in real_graph().packages if module.count(".") == 1
    }
    assert subpackages == set(ALLOWED), (
        f"subpackages {sorted(subpackages)} vs ALLOWED {sorted(ALLOWED)}: update the graph "
        "here and docs/architecture.md"
    )
    for name, (_, targets) in ALLOWED.items():
        assert targets <= set(ALLOWED) - {name}, f"{name}: unknown or own targets {targets}"


def test_every_allowed_edge_is_used():
    problems = unused_edges(real_graph(), ALLOWED)
    assert not problems, "\n".join(problems)


def test_the_allowed_graph_is_acyclic():
    cycles = [c for c in strongly_connected(ALLOWED, {k: v[1] for k, v in ALLOWED.items()})]
    assert all(len(c) == 1 for c in cycles), [c for c in cycles if len(c) > 1]


def mermaid(allowed: Graph = ALLOWED) -> str:
    """The graph as docs/architecture.md draws it: one node per subpackage, one arrow per
    allowed edge ("may import"), in the table's order."""
    lines = ["flowchart TD"]
    for name, (what, _) in allowed.items():
        lines.append(f'    {name}["{name}<br/>{what}"]')
    for name, (_, targets) in allowed.items():
        for target in sorted(targets, key=list(allowed).index):
            lines.append(f"    {name} --> {target}")
    return "\n".join(lines)


def test_the_docs_draw_this_graph():
    doc = (PACKAGE_ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = "```mermaid\n" + mermaid() + "\n```"
    assert block in doc, (
        "docs/architecture.md does not draw ALLOWED; replace its allowed-edges block with the "
        "output of `python -m tests.integration.test_layering`"
    )


def test_every_module_lives_in_a_subpackage():
    problems = misplaced_modules(real_graph(), ALLOWED)
    assert not problems, _report(problems)


def test_internal_imports_resolve():
    graph = real_graph()
    problems = [
        f"{e.importer} imports {e.imported}, which is not a module of the package: {e.where()}"
        for e in graph.unresolved
    ]
    assert not problems, _report(problems)


def test_no_import_along_an_edge_the_graph_does_not_allow():
    problems = disallowed_imports(real_graph(), ALLOWED)
    assert not problems, _report(problems)


def test_no_module_imports_its_own_package():
    problems = own_package_imports(real_graph())
    assert not problems, _report(problems)


def test_no_import_cycles():
    problems = import_cycles(real_graph())
    assert not problems, _report(problems)


def test_the_graph_is_not_empty():
    """The checker sees the package: many modules, many edges, across layers."""
    graph = real_graph()
    assert len(graph.modules) > 40
    assert any(
        e.importer == f"{PACKAGE}.format.stream" and e.imported == f"{PACKAGE}.format.engine"
        for e in graph.edges
    )
    assert any(
        _subpackage(graph, e.importer) != _subpackage(graph, e.imported)
        for e in graph.edges
        if _subpackage(graph, e.importer)
    )


# ---------------------------------------------------------------- the checker itself


def _write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


TOY_LAYERS: Graph = {
    "low": ("", frozenset()),
    "mid": ("", frozenset({"low"})),
    "high": ("", frozenset({"mid", "low"})),
}


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A clean three-layer package; each test breaks it one way."""
    return _write_package(
        tmp_path,
        {
            "__init__.py": "from .high.top import run\n",
            "__main__.py": "from .high.top import run\nrun()\n",
            "low/__init__.py": "from .a import A\n",
            "low/a.py": "A = 1\n",
            "low/b.py": "from .a import A\nB = A\n",
            "mid/__init__.py": "from .m import M\n",
            "mid/m.py": "from ..low import a\nfrom ..low.b import B\nM = a.A + B\n",
            "high/__init__.py": "",
            "high/top.py": (
                "import importlib\n"
                "from pkg.mid import M\n"
                "def run():\n"
                "    return importlib.import_module('pkg.low.b'), M\n"
            ),
        },
    )


def test_checker_passes_a_clean_package(toy: Path):
    graph = collect_imports(toy, "pkg")
    assert check(graph, TOY_LAYERS) == []
    pairs = {(e.importer, e.imported) for e in graph.edges}
    # from ..low import a: the submodule, and low's __init__ (not an ancestor of mid.m)
    assert ("pkg.mid.m", "pkg.low.a") in pairs and ("pkg.mid.m", "pkg.low") in pairs
    assert ("pkg.high.top", "pkg.mid") in pairs  # from pkg.mid import M: the __init__
    assert ("pkg.high.top", "pkg.low.b") in pairs  # importlib.import_module("pkg.low.b")
    assert ("pkg.low.b", "pkg.low") not in pairs  # own package already importing


def test_checker_reports_an_upward_import_in_a_function(toy: Path):
    (toy / "low" / "a.py").write_text(
        "A = 1\ndef f():\n    from ..high.top import run\n    return run\n", encoding="utf-8"
    )
    problems = check(collect_imports(toy, "pkg"), TOY_LAYERS)
    upward = [p for p in problems if "is not an allowed edge" in p]
    assert upward and all(p.startswith("pkg.low.a (low) imports") for p in upward)
    assert any("imports pkg.high.top (high): low -> high is not an allowed" in p for p in upward)
    assert any("pkg/low/a.py:3" in p for p in upward)
    # ... and it closes a cycle: top -> mid -> m -> low.b -> low -> a -> high.top
    assert any(p.startswith("import cycle:") and "pkg.low.a" in p for p in problems)


def test_checker_reports_a_type_checking_cycle_inside_a_subpackage(toy: Path):
    (toy / "low" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nA = 1\n",
        encoding="utf-8",
    )
    problems = check(collect_imports(toy, "pkg"), TOY_LAYERS)
    assert len(problems) == 1, problems
    assert problems[0].startswith("import cycle: pkg.low.a -> pkg.low.b -> pkg.low.a")
    assert "pkg/low/a.py:3 (from .b import B)" in problems[0]


def test_checker_reports_a_cycle_across_subpackages_through_an_init(toy: Path):
    # mid.m imports low (its __init__); low's __init__ imports low.c, which reaches mid.
    (toy / "low" / "__init__.py").write_text("from .a import A\nfrom . import c\n")
    (toy / "low" / "c.py").write_text("import pkg.mid.m\n")
    problems = check(collect_imports(toy, "pkg"), TOY_LAYERS)
    assert any("pkg.low.c (low) imports pkg.mid.m (mid)" in p for p in problems)
    cycles = [p for p in problems if p.startswith("import cycle:")]
    assert len(cycles) == 1
    assert "pkg.low -> pkg.low.c" in cycles[0] and "pkg.mid.m -> pkg.low" in cycles[0]


def test_checker_reports_an_import_of_the_own_package(toy: Path):
    (toy / "low" / "b.py").write_text("from . import A\nB = A\n")
    problems = check(collect_imports(toy, "pkg"), TOY_LAYERS)
    assert problems == [
        "pkg.low.b imports its own package pkg.low (__init__): import the defining module, "
        "not the package: pkg/low/b.py:1 (from . import A)"
    ]


def test_checker_reports_modules_outside_subpackages_and_missing_ones(toy: Path):
    (toy / "loose.py").write_text("")
    (toy / "extra").mkdir()
    (toy / "extra" / "__init__.py").write_text("")
    (toy / "mid" / "m.py").write_text("from ..low.gone import X\nM = X\n")
    problems = check(collect_imports(toy, "pkg"), TOY_LAYERS)
    assert any(p.startswith("pkg.loose: every module lives in a subpackage") for p in problems)
    assert any(p.startswith("pkg.extra: subpackage 'extra' is not in") for p in problems)
    assert any("pkg.mid.m imports pkg.low.gone, which is not a module" in p for p in problems)


def test_checker_sees_import_module_of_a_computed_name(toy: Path):
    # A loader in high/top.py imports whatever module of pkg.high it is told to: that is an
    # edge to each of them, so a module there that imports the loader closes a cycle.
    (toy / "high" / "top.py").write_text(
        "import importlib\n"
        "from pkg.mid import M\n"
        "def run(name):\n"
        "    return importlib.import_module(f'pkg.high.{name}'), M\n"
    )
    (toy / "high" / "plugin.py").write_text("")
    graph = collect_imports(toy, "pkg")
    assert check(graph, TOY_LAYERS) == []
    assert ("pkg.high.top", "pkg.high.plugin") in {(e.importer, e.imported) for e in graph.edges}
    (toy / "high" / "plugin.py").write_text("from .top import run\n")
    problems = check(collect_imports(toy, "pkg"), TOY_LAYERS)
    assert len(problems) == 1, problems
    assert problems[0].startswith(
        "import cycle: pkg.high.plugin -> pkg.high.top -> pkg.high.plugin"
    )
    assert "importlib.import_module(f'pkg.high.{name}')" in problems[0]


def test_checker_reports_a_back_import_into_the_package_init(toy: Path):
    # The top-level __init__ is above every layer: importing it from a subpackage is upward.
    (toy / "mid" / "m.py").write_text("from .. import run\nM = run\n")
    problems = check(collect_imports(toy, "pkg"), TOY_LAYERS)
    assert any("imports pkg (the top level): mid -> the top level" in p for p in problems)


def test_checker_reports_a_skipped_edge_that_is_not_listed(toy: Path):
    # An edge is allowed only if it is listed: with high -> low listed the toy is clean, and
    # a graph that lists only high -> mid refuses high's import of low, however low "ranks".
    graph = collect_imports(toy, "pkg")
    strict: Graph = {**TOY_LAYERS, "high": ("", frozenset({"mid"}))}
    problems = check(graph, strict)
    where = "pkg/high/top.py:4 (importlib.import_module('pkg.low.b'))"
    assert problems == [  # the module and the __init__ on the way
        f"pkg.high.top (high) imports pkg.low (low): high -> low is not an allowed edge "
        f"(high may import mid): {where}",
        f"pkg.high.top (high) imports pkg.low.b (low): high -> low is not an allowed edge "
        f"(high may import mid): {where}",
    ]


# ------------------------------------------------- what importing the core loads at run time

#: What the Harmony core must not load: the schema compiler and the checkers it would need.
NOT_IN_THE_CORE = ("jsonschema", "llguidance", "xgrammar", f"{PACKAGE}.schema")


@pytest.mark.parametrize(
    "statement",
    [
        f"import {PACKAGE}.format",
        f"from {PACKAGE}.format.parser import parse",
        f"from {PACKAGE}.format.stream import StreamParser",
        f"import {PACKAGE}.declarations",
    ],
)
def test_importing_the_core_loads_no_schema_compiler(statement: str):
    """In a fresh interpreter, the core's import (the package root with it: it wires the
    argument check in) loads neither jsonschema nor llguidance nor the schema compiler; and
    a parse without tools (the core's own work) loads none of them either."""
    program = (
        "import sys\n"
        f"{statement}\n"
        f"from {PACKAGE}.format import parse\n"
        "parse('<|start|>assistant<|channel|>final<|message|>hi<|return|>', start='conversation')\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {NOT_IN_THE_CORE!r}"
        f" or m == {PACKAGE + '.schema'!r} or m.startswith({PACKAGE + '.schema.'!r}))\n"
        "print(','.join(bad))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        check=False,
        cwd=PACKAGE_ROOT.parent,
        env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT.parent)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"{statement} loaded {done.stdout.strip()}"


def test_a_parse_with_tools_checks_arguments_only_when_asked():
    """The check is plugged in, not imported: the package's default checks a call's
    arguments against its schema (HG180); ``argument_check=None`` reads the declarations only
    (HG181 for an undeclared function, nothing for bad arguments)."""
    from harmony_grammar import parse
    from harmony_grammar.format.options import (
        INSTALLED_CHECK,
        ParseOptions,
        installed_argument_check,
    )
    from harmony_grammar.tools.call_check import SCHEMA_CHECK

    tools = [{"name": "get", "parameters": {"type": "object", "required": ["id"]}}]
    call = (
        "<|start|>assistant<|channel|>commentary to=functions.{} <|constrain|>json<|message|>"
        "{{}}<|call|>"
    )
    assert installed_argument_check() is SCHEMA_CHECK
    assert ParseOptions().argument_check is INSTALLED_CHECK
    checked = parse(call.format("get"), tools=tools)
    assert [d.code for d in checked.diagnostics] == ["HG180"]
    unchecked = parse(call.format("get"), tools=tools, argument_check=None)
    assert not unchecked.diagnostics and unchecked.messages == checked.messages
    unknown = parse(call.format("gone"), tools=tools, argument_check=None)
    assert [d.code for d in unknown.diagnostics] == ["HG181"]
    with pytest.raises(ValueError, match="'get': the parameters schema is invalid"):
        ParseOptions(tools=[{"name": "get", "parameters": {"type": "bogus"}}])
    ParseOptions(tools=[{"name": "get", "parameters": {"type": "bogus"}}], argument_check=None)


if __name__ == "__main__":
    print("```mermaid\n" + mermaid() + "\n```")
