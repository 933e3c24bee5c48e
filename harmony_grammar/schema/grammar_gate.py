"""The one gate for llguidance grammars: depth, size and rule-count limits, checked on text.

llguidance builds its parser recursively on the native stack: a grammar whose rules chain a
few thousand deep crashes the whole process (SIGSEGV, measured with llguidance 1.9 at about
2,500 chained rules or 20,000 chained terminals on an 8 MiB stack), past 65,000 symbols it
panics, and its compile time grows with the rule count (about 4 s for 10,000 rules). The
schema compiler never writes such a grammar (:func:`~.emit_llguidance.llguidance_rules`
refuses a chain deeper than :data:`MAX_RULE_DEPTH` and more than :data:`MAX_GRAMMAR_RULES`
rules); a client's grammar text (``structured_outputs.grammar`` on ``/v1/completions``, or
any text handed to the sampler) is read here, with the same limits, before llguidance sees
it. :func:`grammar_limit_problem` says which limit a text passes, in one line; the sampler
(:class:`~harmony_grammar.generation.sampling.Sampler`) refuses it and the gateway answers
400 naming it.

The reading is lexical and conservative: string literals, regexes, comments and token
references are skipped, a definition is a name at the start of a line followed by ``:``
(after ``?``/``!``, a priority or ``[...]`` attributes), and every other name in its body is
a reference, rules and terminals alike (llguidance inlines terminals into one another, and
that recursion overflows the stack too). Bracket nesting, inside a rule or an embedded
``%json {...}`` schema, is bounded as well. llguidance's JSON form (text starting with
``{``) is checked by its nesting, then each ``lark_grammar`` in it as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..base.errors import HarmonyGrammarError
from .emit_common import chain_depth
from .nesting import nesting_exceeds

__all__ = [
    "MAX_GRAMMAR_CHARS",
    "MAX_GRAMMAR_NESTING",
    "MAX_GRAMMAR_RULES",
    "MAX_RULE_DEPTH",
    "GrammarLimitError",
    "check_grammar",
    "grammar_limit_problem",
]

#: The deepest chain of rule (and terminal) references: llguidance crashes past about 2,500.
MAX_RULE_DEPTH = 2000
#: The most rule and terminal definitions in one grammar (llguidance panics near 65,000
#: symbols; 10,000 rules already take seconds to compile).
MAX_GRAMMAR_RULES = 20000
#: The longest grammar text, in characters.
MAX_GRAMMAR_CHARS = 4 * 1024 * 1024
#: The deepest nesting of brackets in the text (groups, ``%json`` schemas, the JSON form):
#: the schema compiler's :data:`~.api.MAX_SCHEMA_DEPTH` levels, with room for the envelope.
MAX_GRAMMAR_NESTING = 256


class GrammarLimitError(HarmonyGrammarError, ValueError):
    """A grammar past one of the gate's limits; ``limit`` names it (``rule_depth``, ...)."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit


# One token of the text: what to skip (strings, regexes, comments, token references), a
# name (with its position: a definition is a name at a line's start), or a single character.
_TOKEN = re.compile(
    r"""
      (?P<skip>"(?:[^"\\\n]|\\.)*"i?|//[^\n]*|/(?:[^/\\\n]|\\.)+/[a-z]*|<[^<>\n]*>)
    | (?P<name>@?[A-Za-z_][A-Za-z0-9_]*)
    | (?P<newline>\n)
    | (?P<space>[ \t\r]+)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_OPEN = "([{"
_CLOSE = ")]}"


def _json_span(text: str, start: int) -> tuple[int, int]:
    """Where the JSON value opening at ``start`` ends (the index after its closing bracket,
    or the text's end when unbalanced) and how deep its brackets nest; strings are skipped.
    Iterative: a value ten thousand deep is an answer here, not a RecursionError."""
    depth = deepest = 0
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1, deepest
        i += 1
    return n, deepest


def _tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """(kind, text, nesting) of each token; an embedded ``{...}`` after ``%json``,
    ``%regex`` or ``%llguidance`` is one ``skip`` token carrying its own nesting."""
    pos = 0
    nesting = 0
    directive = False
    while pos < len(text):
        if directive and text[pos] == "{":
            end, deepest = _json_span(text, pos)
            yield "skip", "", nesting + deepest
            pos, directive = end, False
            continue
        match = _TOKEN.match(text, pos)
        assert match is not None  # `other` matches any one character
        kind = match.lastgroup or "other"
        value = match.group()
        pos = match.end()
        if kind == "space":
            continue
        if kind == "other" and value == "%":
            name = _TOKEN.match(text, pos)
            directive = name is not None and name.group() in ("json", "regex", "llguidance")
            if directive and name is not None:
                pos = name.end()
            continue
        if kind == "other" and value in _OPEN:
            nesting += 1
        elif kind == "other" and value in _CLOSE:
            nesting = max(0, nesting - 1)
        yield kind, value, nesting


_HEAD = frozenset("?!.[]=,-0123456789")


def _head(line: list[tuple[str, str]]) -> tuple[str | None, int]:
    """The name a line defines and the index of its ``:``; (None, 0) for a body line."""
    for i, (kind, value) in enumerate(line):
        if kind == "other" and value == ":":
            names = [v for k, v in line[:i] if k == "name"]
            return (names[0], i + 1) if names else (None, 0)
        if kind == "name" or kind == "skip" or (kind == "other" and value in _HEAD):
            continue
        return None, 0
    return None, 0


def _definitions(text: str) -> tuple[dict[str, list[str]], int]:
    """Each definition's references, and the deepest bracket nesting."""
    rules: dict[str, list[str]] = {}
    current: list[str] = []  # names before any definition refer to nothing that matters
    deepest = 0
    lines: list[list[tuple[str, str]]] = [[]]
    for kind, value, nesting in _tokens(text):
        deepest = max(deepest, nesting)
        if kind == "newline":
            lines.append([])
        else:
            lines[-1].append((kind, value))
    for line in lines:
        head, body = _head(line)
        if head is not None:
            current = rules.setdefault(head, [])
        current.extend(v for k, v in line[body:] if k == "name")
    return rules, deepest


def _lark_problem(text: str) -> GrammarLimitError | None:
    rules, nesting = _definitions(text)
    if nesting > MAX_GRAMMAR_NESTING:
        return GrammarLimitError(
            "nesting",
            f"the grammar nests brackets {nesting} deep; the limit is {MAX_GRAMMAR_NESTING}",
        )
    if len(rules) > MAX_GRAMMAR_RULES:
        return GrammarLimitError(
            "rule_count",
            f"the grammar defines {len(rules)} rules and terminals; the limit is "
            f"{MAX_GRAMMAR_RULES}",
        )
    depth = chain_depth(
        sorted(rules), lambda name: [r for r in rules.get(name, ()) if r in rules]
    )
    if depth > MAX_RULE_DEPTH:
        return GrammarLimitError(
            "rule_depth",
            f"the grammar's rules chain {depth} deep; the limit is {MAX_RULE_DEPTH} "
            "(llguidance builds its parser recursively and crashes past about 2,500)",
        )
    return None


def _json_form_problem(text: str) -> GrammarLimitError | None:
    nesting = _json_span(text, text.index("{"))[1]
    if nesting > MAX_GRAMMAR_NESTING:
        return GrammarLimitError(
            "nesting",
            f"the grammar nests brackets {nesting} deep; the limit is {MAX_GRAMMAR_NESTING}",
        )
    try:
        value: Any = json.loads(text)
    except ValueError:
        return None  # not JSON: llguidance reports the syntax error itself
    grammars = value.get("grammars") if isinstance(value, dict) else None
    for grammar in grammars if isinstance(grammars, list) else []:
        lark = grammar.get("lark_grammar") if isinstance(grammar, dict) else None
        if isinstance(lark, str):
            problem = _lark_problem(lark)
            if problem is not None:
                return problem
    if nesting_exceeds(value, MAX_GRAMMAR_NESTING):  # pragma: no cover - checked on the text
        return GrammarLimitError("nesting", "the grammar nests too deeply")
    return None


def grammar_limit_problem(text: str) -> GrammarLimitError | None:
    """The first limit ``text`` (an llguidance grammar, Lark or JSON form) passes; None when
    it is within them all. Linear in the text; never recursive."""
    if len(text) > MAX_GRAMMAR_CHARS:
        return GrammarLimitError(
            "size",
            f"the grammar is {len(text)} characters; the limit is {MAX_GRAMMAR_CHARS}",
        )
    if text.lstrip().startswith("{"):
        return _json_form_problem(text)
    return _lark_problem(text)


def check_grammar(text: str) -> str:
    """``text`` when it is within the gate's limits; else :class:`GrammarLimitError`."""
    problem = grammar_limit_problem(text)
    if problem is not None:
        raise problem
    return text
