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

A JSON schema (a ``%json`` block, or a ``json_schema`` of the JSON form) is short in text
and deep in llguidance: it follows each ``$ref`` recursively, so a chain of 3,000 aliases,
or 900 objects each holding the next by reference, cycles included, crashes an 8 MiB
stack. :func:`ref_chain` bounds the depth llguidance can reach through a schema (the
schema's own nesting plus, for every distinct ``$ref`` target, one level and that target's
nesting: no simple path through the references is longer) by :data:`MAX_REF_CHAIN`.

Every native build of a client's grammar goes through :func:`validate_llguidance` and
:func:`build_matcher`: the gate first, then llguidance on a thread with a stack of
:data:`COMPILE_STACK_BYTES`, 32 times the 8 MiB the limits were measured on, so a grammar
within them cannot overflow it (``tests/schema/test_grammar_gate_crash.py`` builds each
crashing shape at the limits).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from ..base.errors import HarmonyGrammarError
from .emit_common import chain_depth
from .nesting import nesting_exceeds
from .stack import on_fresh_stack

__all__ = [
    "COMPILE_STACK_BYTES",
    "MAX_GRAMMAR_CHARS",
    "MAX_GRAMMAR_NESTING",
    "MAX_GRAMMAR_RULES",
    "MAX_REF_CHAIN",
    "MAX_RULE_DEPTH",
    "GrammarLimitError",
    "build_matcher",
    "check_grammar",
    "grammar_limit_problem",
    "ref_chain",
    "schema_refs",
    "validate_llguidance",
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
#: The deepest a JSON schema may take llguidance through its ``$ref`` s (:func:`ref_chain`):
#: 900 referenced objects (3,600 levels) already crash an 8 MiB stack, 90,000 levels a
#: :data:`COMPILE_STACK_BYTES` one; this keeps a twentyfold margin on the latter.
MAX_REF_CHAIN = 4096
#: The stack llguidance builds a grammar on: the gate keeps chains under 2,000 rules and
#: 4,096 schema levels, which need well under 8 MiB; this leaves a thirtyfold margin.
#: Address space only: pages are touched as used.
COMPILE_STACK_BYTES = 256 * 1024 * 1024


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
    directive_kind = "skip"
    while pos < len(text):
        if directive and text[pos] == "{":
            end, deepest = _json_span(text, pos)
            # A %json block's text goes on to the $ref count; %regex/%llguidance skip.
            yield directive_kind, text[pos:end], nesting + deepest
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
                directive_kind = "json" if name.group() == "json" else "skip"
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
        if kind in ("name", "skip", "json") or (kind == "other" and value in _HEAD):
            continue
        return None, 0
    return None, 0


def _definitions(text: str) -> tuple[dict[str, list[str]], int, list[str]]:
    """Each definition's references, the deepest bracket nesting, and the ``%json`` blocks."""
    rules: dict[str, list[str]] = {}
    current: list[str] = []  # names before any definition refer to nothing that matters
    deepest = 0
    schemas: list[str] = []
    lines: list[list[tuple[str, str]]] = [[]]
    for kind, value, nesting in _tokens(text):
        deepest = max(deepest, nesting)
        if kind == "json":
            schemas.append(value)
        if kind == "newline":
            lines.append([])
        else:
            lines[-1].append((kind, value))
    for line in lines:
        head, body = _head(line)
        if head is not None:
            current = rules.setdefault(head, [])
        current.extend(v for k, v in line[body:] if k == "name")
    return rules, deepest, schemas


def _nesting_problem(nesting: int) -> GrammarLimitError | None:
    if nesting > MAX_GRAMMAR_NESTING:
        return GrammarLimitError(
            "nesting",
            f"the grammar nests brackets {nesting} deep; the limit is {MAX_GRAMMAR_NESTING}",
        )
    return None


def _schema_problem(schema: Any) -> GrammarLimitError | None:
    """The ``$ref`` limit of one JSON schema (its nesting is checked on the text)."""
    depth = ref_chain(schema)
    if depth > MAX_REF_CHAIN:
        return GrammarLimitError(
            "ref_chain",
            f"a JSON schema of the grammar reaches {depth} levels deep through its $refs; "
            f"the limit is {MAX_REF_CHAIN} (llguidance follows each $ref recursively)",
        )
    return None


def _lark_problem(text: str) -> GrammarLimitError | None:
    rules, nesting, schemas = _definitions(text)
    problem = _nesting_problem(nesting)
    if problem is not None:
        return problem
    for block in schemas:
        try:
            schema: Any = json.loads(block)
        except ValueError:
            continue  # not JSON: llguidance reports the syntax error itself
        problem = _schema_problem(schema)
        if problem is not None:
            return problem
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
    problem = _nesting_problem(_json_span(text, text.index("{"))[1])
    if problem is not None:
        return problem
    try:
        value: Any = json.loads(text)
    except ValueError:
        return None  # not JSON: llguidance reports the syntax error itself
    grammars = value.get("grammars") if isinstance(value, dict) else None
    for grammar in grammars if isinstance(grammars, list) else []:
        if not isinstance(grammar, dict):
            continue
        lark = grammar.get("lark_grammar")
        problem = _lark_problem(lark) if isinstance(lark, str) else None
        if problem is None and "json_schema" in grammar:
            problem = _schema_problem(grammar["json_schema"])
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


# -- JSON schemas: how deep their $refs can take llguidance --------------------------------


def _depths(schema: Any) -> dict[int, int]:
    """Every container's nesting depth (a container of scalars is 1), by ``id``.
    Iterative, post-order: linear in the schema, whatever its depth."""
    depths: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(schema, False)]
    while stack:
        node, done = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if done:
            below = [depths[id(c)] for c in children if isinstance(c, (dict, list))]
            depths[id(node)] = 1 + max(below, default=0)
            continue
        if id(node) in depths:
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if isinstance(c, (dict, list)))
    return depths


def schema_refs(schema: Any) -> set[str]:
    """Every ``$ref`` string in ``schema``, at any depth (walked without recursion)."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.add(ref)
            stack.extend(c for c in node.values() if isinstance(c, (dict, list)))
        elif isinstance(node, list):
            stack.extend(c for c in node if isinstance(c, (dict, list)))
    return found


def _resolve(schema: Any, ref: str) -> Any:
    """The node a local JSON-pointer ``$ref`` names, or None (anchors, other documents,
    pointers that lead nowhere)."""
    if not ref.startswith("#"):
        return None
    node = schema
    pointer = unquote(ref[1:])
    if not pointer:
        return node
    if not pointer.startswith("/"):
        return None  # an anchor: any subschema, counted as the whole
    for part in pointer[1:].split("/"):
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


def ref_chain(schema: Any) -> int:
    """An upper bound on how many levels deep llguidance recurses into ``schema``.

    The schema's own nesting, plus for each distinct target of its ``$ref`` s one level and
    the target's nesting (a reference it cannot resolve counts as the whole schema again):
    a path through the references enters each target at most once before llguidance sees
    the cycle, so no path is longer. Linear in the schema; never recursive.
    """
    if not isinstance(schema, (dict, list)):
        return 0
    depths = _depths(schema)
    whole = depths[id(schema)]
    total = whole
    seen: set[int] = set()
    for ref in schema_refs(schema):
        target = _resolve(schema, ref)
        if target is None:
            total += 1 + whole
        elif id(target) not in seen:
            seen.add(id(target))
            total += 1 + depths.get(id(target), 0)
    return total


# -- llguidance, behind the gate and on a stack of its own ---------------------------------


def validate_llguidance(grammar: str, tokenizer: Any) -> str:
    """llguidance's own check of ``grammar`` (its message; empty when it compiles), after
    the gate (:class:`GrammarLimitError` past a limit), on a :data:`COMPILE_STACK_BYTES`
    stack. The one way a client's grammar reaches ``LLMatcher.validate_grammar``."""
    import llguidance

    check_grammar(grammar)
    return on_fresh_stack(
        lambda: str(llguidance.LLMatcher.validate_grammar(grammar, tokenizer)),
        stack_bytes=COMPILE_STACK_BYTES,
        name="harmony-grammar-compile",
    )


def build_matcher(grammar: str, tokenizer: Any) -> Any:
    """An ``llguidance.LLMatcher`` of ``grammar``, after the gate and llguidance's check
    (:class:`ValueError` with llguidance's message when it refuses), built on a
    :data:`COMPILE_STACK_BYTES` stack."""
    import llguidance

    check_grammar(grammar)

    def build() -> Any:
        error = llguidance.LLMatcher.validate_grammar(grammar, tokenizer)
        if error:
            raise ValueError(error)
        return llguidance.LLMatcher(tokenizer, grammar, log_level=0)

    return on_fresh_stack(build, stack_bytes=COMPILE_STACK_BYTES, name="harmony-grammar-compile")
