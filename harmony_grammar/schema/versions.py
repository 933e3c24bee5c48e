"""The grammar libraries' older versions: what each export may not write for them.

Exports take ``target_version``, the version of the library that will read the grammar
(llguidance's for the ``lark`` and ``llguidance`` targets and the whole-turn grammar,
xgrammar's for the ``xgrammar`` target and the structural tag); ``None`` means the versions
this project is tested with (llguidance 1.9, xgrammar 0.2.9). The floors below were measured
in tests/schema/test_pinned_grammar_libraries.py against the versions vLLM 0.34 pins (llguidance
1.7.x, xgrammar 0.2.8); docs/schema-grammar.md lists what changes under them.
"""

from __future__ import annotations

import re

__all__ = [
    "LLGUIDANCE_LARK_RANGES",
    "XGRAMMAR_STOP_TOKENS_IN_GRAMMAR",
    "older_than",
    "version_tuple",
]

#: llguidance reads Lark's bounded repetition ``x ~ m..n`` from this version on (1.7.6 and
#: 1.8.0 fail with "error parsing signed integer"); ``x ~ n`` and ``x{m,n}`` read on both.
LLGUIDANCE_LARK_RANGES = (1, 9)

#: xgrammar matches a stop id against the grammar's ``token`` formats from this version on;
#: before it, a stop id is only ever taken as the end of generation, so a structural tag that
#: names ``<|call|>`` or ``<|return|>`` as a token rejects every complete turn.
XGRAMMAR_STOP_TOKENS_IN_GRAMMAR = (0, 2, 9)


def version_tuple(version: str) -> tuple[int, ...]:
    """``"1.7.6"`` as ``(1, 7, 6)``; a version with no leading number is a ValueError."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", version)
    if match is None:
        raise ValueError(f"target_version must be a version such as '0.2.8', not {version!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def older_than(version: str | None, floor: tuple[int, ...]) -> bool:
    """Whether ``version`` (``None``: today's) comes before ``floor``."""
    return version is not None and version_tuple(version) < floor
