"""ECMA-262 patterns to IR: compared with Python's ``re.search`` where the two agree.

For ASCII patterns without ``\\d``/``\\w``/``\\s`` (whose Unicode meaning differs) and
subjects without line terminators (where ``$`` differs), ECMA-262 and Python give the same
answer, so ``re`` is an independent oracle for search semantics.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harmony_grammar.schema import canonical_json
from harmony_grammar.schema.ecma_search import ecma_search
from harmony_grammar.schema.regex import RegexError, search_ir
from harmony_grammar.schema.render_regex import render_regex

from .test_schema_compiler import verdicts

PATTERNS = [
    "abc", "^abc", "abc$", "^a|b$", "^(?:ab)+$", "^[a-c]{2,3}$", "a.c", "^[^ab]*$",
    "^x?y*z+$", "(a|bc)d", "^[-a]$", "^a{2}$", "^\\.\\*$", "^(?<n>ab)c$", "^[\\]a]$", "a{1,2}b",
]  # fmt: skip


@given(subject=st.text(alphabet="abcdxyz.*-] ", max_size=8))
@pytest.mark.parametrize("pattern", PATTERNS)
def test_search_semantics_match_python(pattern: str, subject: str) -> None:
    ours = re.compile(render_regex(search_ir(pattern), "python"), re.DOTALL)
    python_pattern = pattern.replace("(?<", "(?P<")  # named groups are spelled differently
    assert bool(ours.fullmatch(subject)) == bool(re.search(python_pattern, subject))


def test_ecma_classes_are_ascii_and_dot_excludes_line_terminators() -> None:
    digits = re.compile(render_regex(search_ir("^\\d+$"), "python"))
    assert digits.fullmatch("123") and not digits.fullmatch("١٢٣")  # Arabic-Indic digits
    dot = re.compile(render_regex(search_ir("^.$"), "python"), re.DOTALL)
    assert dot.fullmatch("é") and not dot.fullmatch("\n") and not dot.fullmatch("\u2028")
    space = re.compile(render_regex(search_ir("^\\s$"), "python"))
    assert space.fullmatch("\ufeff") and not space.fullmatch("x")
    # ECMA-262 reads `[]` as the empty class and `{,2}` as literal text (Python does not).
    assert not re.compile(render_regex(search_ir("[]a]"), "python"), re.DOTALL).fullmatch("a]")
    brace = re.compile(render_regex(search_ir("^a{,2}$"), "python"))
    assert brace.fullmatch("a{,2}") and not brace.fullmatch("aa")


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(a)\\1", "backreferences"),
        ("a(?=b)", "lookaround"),
        ("\\bword", "word boundaries"),
        ("a(^b)", "anchors"),
        ("\\p{L}", "property"),
        ("(ab", "missing"),
        ("*a", "nothing to repeat"),
    ],
)
def test_refused_constructs_say_why(pattern: str, message: str) -> None:
    with pytest.raises(RegexError, match=message):
        search_ir(pattern)


_ECMA_PATTERNS = [*PATTERNS, "^\\d+$", "\\w", "^\\s*$", "^a$", "^.$", "^[\\d-]+$", "\\W\\D"]


# Half the profile's budget: each example runs regress, an ECMA engine, beside ours.
@settings(max_examples=settings.default.max_examples // 2)
@given(subject=st.text(alphabet="ab1١é \n\u2028\u00a0_-", max_size=6))
@pytest.mark.parametrize("pattern", _ECMA_PATTERNS)
def test_ecma_search_agrees_with_regress(pattern: str, subject: str) -> None:
    # regress is an ECMA-262 engine: the reference, Unicode classes and line terminators too.
    regress = pytest.importorskip("regress")
    assert ecma_search(pattern, subject) == (regress.Regex(pattern).find(subject) is not None)


def test_pattern_properties_names_are_judged_as_ecma_262() -> None:
    # Python's re.search counts "١٢" (Arabic-Indic digits) as \d and "é" as \w: ECMA-262
    # does not, so these names obey `properties`/`additionalProperties`, not the pattern.
    schema = {
        "properties": {"١٢": {}, "é": {"type": "string"}},
        "patternProperties": {"^\\d+$": {"type": "integer"}, "^\\w$": {"type": "boolean"}},
        "additionalProperties": {"type": "null"},
    }
    texts = ['{"١٢":"x"}', '{"é":"x"}', '{"12":1}', '{"12":"x"}', '{"ü":null}', '{"a":true}']
    assert verdicts(schema, texts, gbnf_too=False) == [True, True, True, False, True, True]
    assert canonical_json({"é": "x", "١٢": "y"}, schema) == '{"١٢":"y","é":"x"}'


def test_enum_candidates_are_judged_with_ecma_262_patterns() -> None:
    # The reference validator that filters enum candidates reads `pattern` as ECMA-262 too.
    schema = {"enum": ["١", "1", "a"], "pattern": "^\\d$"}
    assert verdicts(schema, ['"١"', '"1"', '"a"']) == [False, True, False]
