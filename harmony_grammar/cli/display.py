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

__all__ = ["shown", "shown_path"]


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


def shown_path(path: str) -> str:
    """A file argument as a diagnostic line starts: ``<stdin>`` for ``-``, else escaped."""
    return "<stdin>" if path == "-" else shown(path)
