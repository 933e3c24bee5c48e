"""File names and messages as the CLI prints them: one line, nothing that forges output.

A file name may hold anything but ``/`` and NUL: a newline or an ANSI escape in one, printed
raw, writes lines the command never wrote (``a.jsonl:1: HG000 ok``) or repaints the terminal.
Compilers print such names escaped; so does this CLI, wherever a name starts a diagnostic
line or sits in an error message. Every character that is not printable becomes an escape
in Python's spelling (``\\n``, ``\\x1b``, ``\\u2028``); a byte that is not UTF-8 (carried by
Python as a lone surrogate, ``surrogateescape``) shows as ``\\xNN``, the byte itself. A name
with nothing to escape is printed as given. Backslashes are left alone, so Windows paths
read as written. JSON output keeps the names as they are: JSON escapes them itself.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["cause_line", "in_cli_words", "shown", "shown_path"]

#: The library's keywords that a hint may name, as this CLI spells them: a hint printed by a
#: command names the flag to add, not the Python argument (``format/causes.py`` serves both).
CLI_SPELLINGS = {
    '`start="completion"`': "`--completion`",
    "`lenient=True`": "`--lenient`",
}


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    return ascii(char)[1:-1]


def shown(text: str) -> str:
    """``text`` with every character that is not printable escaped (spaces kept)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def in_cli_words(text: str) -> str:
    """``text`` with every library keyword of :data:`CLI_SPELLINGS` as the CLI's flag."""
    for keyword, flag in CLI_SPELLINGS.items():
        text = text.replace(keyword, flag)
    return text


def cause_line(codes: Sequence[str], summary: str, fix: str) -> str:
    """A likely cause as ``validate`` and ``repair`` print it, once per run."""
    return in_cli_words(f"  {', '.join(codes)} cause: {summary}; fix: {fix}")


def shown_path(path: str) -> str:
    """A file argument as a diagnostic line starts: ``<stdin>`` for ``-``, else escaped."""
    return "<stdin>" if path == "-" else shown(path)
