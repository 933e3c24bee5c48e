"""Loading ``grammars/harmony.lark`` and the pieces derived from it.

The grammar ships inside the wheel as ``harmony_grammar/grammars/``; in a source checkout it
is read from the repository's top-level ``grammars/`` folder. Everything built from it is
cached: a parser is built once per process.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path

import lark

from .lalr import LalrDriver
from .memo import Memo
from .tokens import ControlToken

__all__ = [
    "START_SYMBOLS",
    "STRIPPED_GRAMMAR",
    "STRIPPED_START_SYMBOLS",
    "HeaderLexer",
    "Reading",
    "expected_description",
    "grammar_path",
    "grammar_text",
    "harmony_parser",
    "header_lexer",
    "stripped_lexer",
    "stripped_parser",
]

#: Start symbols of grammars/harmony.lark (see its header comment).
START_SYMBOLS = ("conversation", "completion", "continuation", "prompt")
#: The stripped dialect's grammar and its start symbols (see its header comment).
STRIPPED_GRAMMAR = "harmony_stripped.lark"
STRIPPED_START_SYMBOLS = ("stripped_header", "marker")

#: Readable names of the grammar's terminals, used in "expected ..." messages.
_DESCRIPTIONS: dict[str, str] = {
    **{token.terminal: token.value for token in ControlToken},
    "CONTENT": "message content",
    "AUTHOR": "an author (system, developer, user, assistant or a tool name)",
    "AUTHOR_NAME": "an author name",
    "COLON": "':'",
    "ROLE_RECIPIENT": "' to=RECIPIENT'",
    "CHANNEL_RECIPIENT": "' to=RECIPIENT'",
    "CHANNEL_NAME": "a channel name",
    "CONTENT_TYPE": "a content type",
    "SPACE": "' '",
    "_SEP": "whitespace between messages",
    "$END": "end of input",
}


def grammar_path(name: str = "harmony.lark") -> Path:
    """The path of a shipped grammar file (installed package first, then the checkout)."""
    packaged = resources.files("harmony_grammar").joinpath("grammars").joinpath(name)
    if packaged.is_file():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "grammars" / name
    if checkout.is_file():
        return checkout
    raise FileNotFoundError(f"grammar {name!r} is not installed with harmony_grammar")


@functools.cache
def grammar_text(name: str = "harmony.lark") -> str:
    """The text of a shipped grammar file."""
    return grammar_path(name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def harmony_parser() -> lark.Lark:
    """The LALR parser of ``harmony.lark`` with the contextual lexer (built once)."""
    return lark.Lark(
        grammar_text(),
        parser="lalr",
        lexer="contextual",
        start=list(START_SYMBOLS),
        propagate_positions=False,
    )


def expected_description(terminals: object) -> tuple[str, ...]:
    """Readable, sorted descriptions of a set of terminal names."""
    names = terminals if isinstance(terminals, (set, frozenset, list, tuple)) else ()
    return tuple(sorted({_DESCRIPTIONS.get(str(name), str(name)) for name in names}))


#: A header text's reading from a parser state (:meth:`HeaderLexer.read`): the stack after
#: it, and its terminals as ``(terminal, value, offset in the text)``.
Reading = tuple[tuple[int, ...], tuple[tuple[str, str, int], ...]]


class HeaderLexer:
    """Lark's contextual lexing of header text, one scanner per LALR state.

    The parser state says which terminals may come next; only those are tried, in Lark's
    own precedence order (priority, then the longest possible match). This is what lets the
    same word be an author in one place and a channel name in another. Scanners are built
    from the grammar's own terminal definitions on first use of each state.
    """

    def __init__(self, parser: lark.Lark) -> None:
        self._terminals = {t.name: t for t in parser.terminals}
        self._scanners: dict[int, re.Pattern[str] | None] = {}
        #: :meth:`read`'s memo, by ``(stack, text)`` (asked in place on the strict hot path).
        self.readings: Memo[tuple[tuple[int, ...], str], Reading | None] = Memo()

    def scanner(self, state: int, acceptable: object) -> re.Pattern[str] | None:
        """The compiled alternation of the lexable terminals acceptable in ``state``."""
        try:
            return self._scanners[state]
        except KeyError:
            pass
        names = acceptable if isinstance(acceptable, (dict, set, frozenset)) else {}
        defs = [self._terminals[n] for n in names if n in self._terminals]
        defs.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
        regex = (
            re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in defs))
            if defs
            else None
        )
        self._scanners[state] = regex
        return regex

    def read(self, driver: LalrDriver, text: str) -> Reading | None:
        """How the grammar reads all of ``text`` from ``driver``'s state (``driver`` is
        untouched): the stack after it and its terminals, or None where some of it does not
        lex or the table refuses a terminal.

        The reading depends only on the stack and the text (the state chooses the scanner,
        and nothing else is read), so it is memoised (:mod:`.memo`): headers recur, and
        after the first few a header costs a look-up.
        """
        key = (driver.stack, text)
        try:
            return self.readings[key]
        except KeyError:
            pass
        trial = driver.copy()
        read, end = self.lex(trial, text, 0)
        reading = (trial.stack, tuple(read)) if end == len(text) else None
        self.readings.keep(key, reading, len(text))
        return reading

    def lex(
        self, driver: LalrDriver, text: str, pos: int
    ) -> tuple[list[tuple[str, str, int]], int]:
        """Lex ``text[pos:]`` from ``driver``'s state as far as the grammar goes, feeding
        ``driver``: the terminals read (name, text, offset) and where they end."""
        read: list[tuple[str, str, int]] = []
        while pos < len(text):
            scanner = self.scanner(driver.position, driver.choices())
            match = scanner.match(text, pos) if scanner is not None else None
            if match is None or not driver.feed(match.lastgroup or ""):
                break
            read.append((match.lastgroup or "", match.group(), pos))
            pos = match.end()
        return read, pos

    def terminal_regex(self, name: str) -> re.Pattern[str]:
        """One terminal's own regex (used to name what stands where it may not)."""
        return re.compile(self._terminals[name].pattern.to_regexp())


@functools.lru_cache(maxsize=1)
def header_lexer() -> HeaderLexer:
    """The shared :class:`HeaderLexer` of :func:`harmony_parser`."""
    return HeaderLexer(harmony_parser())


@functools.lru_cache(maxsize=1)
def stripped_parser() -> lark.Lark:
    """The LALR parser of ``harmony_stripped.lark``, the stripped dialect (built once)."""
    return lark.Lark(
        grammar_text(STRIPPED_GRAMMAR),
        parser="lalr",
        lexer="contextual",
        start=list(STRIPPED_START_SYMBOLS),
        propagate_positions=False,
    )


@functools.lru_cache(maxsize=1)
def stripped_lexer() -> HeaderLexer:
    """The contextual lexer of :func:`stripped_parser`."""
    return HeaderLexer(stripped_parser())
