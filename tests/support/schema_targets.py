"""One schema compiled for every target, each answering whether a text is in its language.

The schema tests compare the four grammars of one schema: llguidance's matcher
(:class:`~harmony_grammar.schema.matcher.SchemaMatcher`), Lark's Earley parser, the GBNF text
read by xgrammar's GBNF reader (``target_matchers``) or llguidance's (``gbnf_matcher``), and
the xgrammar text matched by xgrammar. Also here:
:func:`legacy_object_generation`, which lets hypothesis-jsonschema 0.23.1 generate objects
under current Hypothesis.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from harmony_grammar.schema import UnsupportedSchemaError, schema_to_grammar

__all__ = ["TARGETS", "gbnf_matcher", "legacy_object_generation", "target_matchers"]

#: The targets, in the order :func:`target_matchers` gives them.
TARGETS = ("llguidance", "lark", "gbnf", "xgrammar")


def _raw_beyond_ascii(parse_char: Any) -> Any:
    """llguidance's GBNF reader writes ``\\u0400`` as ``\\u400`` and ``\\U0001F600`` as
    ``\\U1F600`` (it strips the leading zeros), which its own Lark reader refuses: this
    spells such a character as itself instead, which both readers take."""

    def read(self: Any, pos: Any) -> Any:
        char, after = parse_char(self, pos)
        if char[:2] in ("\\u", "\\U") and len(char) > 2:
            code = int(char[2:], 16)
            if code >= 0xA0 and not 0xD800 <= code <= 0xDFFF:
                return chr(code), after
        return char, after

    return read


def gbnf_matcher(schema: object) -> Any:
    """An llguidance matcher over the byte tokenizer for the schema's GBNF text."""
    import llguidance
    from llguidance import gbnf_to_lark

    from harmony_grammar.schema.matcher import byte_tokenizer

    text = schema_to_grammar(schema, target="gbnf")
    assert text.startswith("root ::= start\n")
    original = gbnf_to_lark.GrammarParser._parse_char
    gbnf_to_lark.GrammarParser._parse_char = _raw_beyond_ascii(original)  # type: ignore[method-assign]
    try:
        # llguidance's reader renames `root` to `start` itself.
        converted = llguidance.gbnf_to_lark.gbnf_to_lark(
            text.replace("root ::= start\n", "").replace("start ::=", "root ::=", 1)
        )
    finally:
        gbnf_to_lark.GrammarParser._parse_char = original  # type: ignore[method-assign]
    assert llguidance.LLMatcher.validate_grammar(converted, byte_tokenizer()) == ""
    return llguidance.LLMatcher(byte_tokenizer(), converted, log_level=0)


def target_matchers(schema: Any) -> dict[str, Callable[[str], bool]]:
    """``{target: accepts}`` for every target that compiles ``schema``.

    Raises :class:`UnsupportedSchemaError` when the schema is refused at all; GBNF alone may
    refuse one that needs an intersection of languages (documented), and is then left out.
    """
    import lark
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string

    from harmony_grammar.schema.matcher import SchemaMatcher

    out: dict[str, Callable[[str], bool]] = {"llguidance": SchemaMatcher(schema).accepts}
    parser = lark.Lark(schema_to_grammar(schema, target="lark"))

    def lark_accepts(text: str) -> bool:
        try:
            parser.parse(text)
        except lark.exceptions.LarkError:
            return False
        return True

    out["lark"] = lark_accepts
    try:
        gbnf = xgrammar.Grammar.from_ebnf(schema_to_grammar(schema, target="gbnf"))
    except UnsupportedSchemaError as exc:
        if "GBNF has no intersection" not in str(exc):
            raise
    else:
        # Read by xgrammar, character by character as llama.cpp reads it: llguidance's GBNF
        # reader (gbnf_matcher) makes a rule of tokens only into one lexeme, and its greedy
        # lexer then refuses texts the grammar holds (an anyOf of an open and a closed object
        # with the same first key: '{"kind":"kind0"}').
        out["gbnf"] = lambda text: bool(_is_grammar_accept_string(gbnf, text))
    grammar = xgrammar.Grammar.from_ebnf(schema_to_grammar(schema, target="xgrammar"))
    out["xgrammar"] = lambda text: bool(_is_grammar_accept_string(grammar, text))
    return out


class _LegacyMany:
    """hypothesis-jsonschema 0.23.1 (its latest release) draws object members with the old
    ``many(...).more()`` loop; current Hypothesis only offers ``with many(...) as m: for _ in
    m:``. This drives the new loop one step per ``more()`` call, so objects generate."""

    def __init__(self, data: Any, **sizes: Any) -> None:
        from hypothesis.internal.conjecture import utils as cu

        self._many = cu.many(data, **sizes)
        self._steps = iter(self._many.__enter__())

    def more(self) -> bool:
        if next(self._steps, False) is None:
            return True
        self._many.__exit__(None)
        return False

    def reject(self) -> None:
        self._many.reject()


def legacy_object_generation(monkeypatch: Any) -> None:
    """Patch hypothesis-jsonschema's member loop, only where the old loop meets the new
    Hypothesis (a fixed release would not need it)."""
    from hypothesis.internal.conjecture import utils as cu
    from hypothesis_jsonschema import _from_schema

    if not hasattr(cu.many, "more") and ".more()" in inspect.getsource(_from_schema):
        monkeypatch.setattr(_from_schema, "cu", types.SimpleNamespace(many=_LegacyMany))
