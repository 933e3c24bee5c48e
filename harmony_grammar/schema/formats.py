"""``format`` values as anchored ECMA-262 patterns, compiled by :mod:`.regex`.

Formats are asserted, not just annotated: a tool argument declared ``"format": "date"`` must be
a real calendar date (leap years included). The sources follow the RFCs the JSON Schema
specification cites; where a reference validator is more lenient or stricter, the choice is
recorded in docs/schema-grammar.md. Unknown formats are annotations (the specification's rule)
and constrain nothing.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import jsonschema

from .ir import Both, Expr, both, repeat
from .regex import ANY_CHAR, search_ir
from .render_regex import render_regex

__all__ = ["FORMATS", "format_ir", "format_matches", "grammar_format_checker"]

_D = "[0-9]"
_MONTH_DAY = (
    "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
# Leap years: divisible by 4 and not by 100, or divisible by 400.
_LEAP_OTHER = f"{_D}{{2}}(?:0[48]|[2468][048]|[13579][26])"
# Years 0001-9999, as Python's date and rfc3339-validator (jsonschema's checkers) have them.
_YEAR_NONZERO = f"(?:[1-9]{_D}{{3}}|0[1-9]{_D}{{2}}|00[1-9]{_D}|000[1-9])"
_DATE = (
    f"(?:{_YEAR_NONZERO}-{_MONTH_DAY}|(?:{_LEAP_OTHER}|(?:[2468][048]|[13579][26]|0[48])00)-02-29)"
)
_TIME = (
    "(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]+)?"
    "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = f"(?:{_OCTET}\\.){{3}}{_OCTET}"
_H16 = "[0-9A-Fa-f]{1,4}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = "|".join(
    [
        f"(?:{_H16}:){{6}}{_LS32}",
        f"::(?:{_H16}:){{5}}{_LS32}",
        f"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
        f"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
        f"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
        f"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
        f"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
        f"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
        f"(?:(?:{_H16}:){{0,6}}{_H16})?::",
    ]
)
_UNRESERVED = "A-Za-z0-9._~\\-"
_SUB_DELIMS = "!$&'()*+,;="
_PCT = "%[0-9A-Fa-f]{2}"
_PCHAR = f"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SEGMENT = f"{_PCHAR}*"
_SEGMENT_NZ = f"{_PCHAR}+"
_HOST = (
    f"(?:\\[(?:{_IPV6}|[vV][0-9A-Fa-f]+\\.[{_UNRESERVED}{_SUB_DELIMS}:]+)\\]"
    f"|(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
)
_AUTHORITY = f"(?:(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*@)?{_HOST}(?::[0-9]*)?"
_HIER = (
    f"(?://{_AUTHORITY}(?:/{_SEGMENT})*|/(?:{_SEGMENT_NZ}(?:/{_SEGMENT})*)?"
    f"|{_SEGMENT_NZ}(?:/{_SEGMENT})*|)"
)
_QUERY = f"(?:{_PCHAR}|[/?])*"
_URI = f"[A-Za-z][A-Za-z0-9+.\\-]*:{_HIER}(?:\\?{_QUERY})?(?:#{_QUERY})?"
_ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9\\-]{0,61}[A-Za-z0-9])?"
_EMAIL = (
    f'(?:{_ATEXT}+(?:\\.{_ATEXT}+)*|"(?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\x20-\\x7E])*")'
    f"@(?:{_LABEL}(?:\\.{_LABEL})*|\\[{_IPV4}\\])"
)

#: format name -> ECMA-262 source, anchored at both ends.
FORMATS: dict[str, str] = {
    "date": f"^{_DATE}$",
    "time": f"^{_TIME}$",
    "date-time": f"^{_DATE}[Tt]{_TIME}$",
    "email": f"^{_EMAIL}$",
    "uuid": "^[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}$",
    "ipv4": f"^{_IPV4}$",
    "ipv6": f"^(?:{_IPV6})$",
    "uri": f"^{_URI}$",
}


_HOSTNAME = f"^{_LABEL}(?:\\.{_LABEL})*$"
#: RFC 1123 host names: labels of letters, digits and inner hyphens, 253 characters in all.
_HOSTNAME_LENGTH = repeat(ANY_CHAR, 1, 253)


@functools.cache
def format_ir(name: str) -> Expr | None:
    """The decoded-string language of a known format, or None for an unknown one."""
    if name == "hostname":
        # A length limit on top of a pattern is an intersection (a `Both`).
        return both([search_ir(_HOSTNAME), _HOSTNAME_LENGTH], keyword="format", pointer="")
    source = FORMATS.get(name)
    return None if source is None else search_ir(source)


@functools.cache
def _format_regexes(name: str) -> tuple[re.Pattern[str], ...]:
    expr = format_ir(name)
    assert expr is not None, name
    parts = expr.items if isinstance(expr, Both) else (expr,)
    return tuple(re.compile(render_regex(part, "python"), re.DOTALL) for part in parts)


def format_matches(name: str, text: str) -> bool:
    """Whether the decoded string ``text`` is in the language of the known format ``name``."""
    return all(regex.fullmatch(text) for regex in _format_regexes(name))


def _checks(name: str, instance: object) -> bool:
    return not isinstance(instance, str) or format_matches(name, instance)


@functools.cache
def grammar_format_checker(base: Any) -> Any:
    """jsonschema's format checker ``base`` with every format this module knows decided by
    :func:`format_matches`, the language the grammar accepts. The compiler's reference
    validator filters ``enum``/``const`` candidates with it, so a candidate keeps the verdict
    the grammar would give it without the enum: jsonschema checks ``date-time``, ``time``,
    ``hostname`` or ``uri`` only when optional packages are installed, and without them
    ``{"enum": ["x"], "format": "date-time"}`` used to accept ``"x"``."""
    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(base.checkers)
    for name in (*FORMATS, "hostname"):
        checker.checkers[name] = (functools.partial(_checks, name), ())
    return checker
