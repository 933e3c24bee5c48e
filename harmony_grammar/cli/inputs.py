"""Reading CLI inputs: files or stdin, as text or token ids, with one-line errors.

Every command reads through here, so every command accepts the same inputs: regular files,
``-`` for stdin, and anything else the system can open for reading (``/dev/null``, a FIFO, a
shell's ``<(...)``); only what cannot be opened, or a directory, is refused (exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from ..tools.json_limits import JsonLimitError, json_message, loads_bounded
from ..tools.parameters import checked_tools
from .errors import CliError
from .input_kind import HEAD, sniff

__all__ = [
    "MAX_TOKEN_ID_DIGITS",
    "add_input_options",
    "check_readable",
    "note_skipped",
    "open_binary",
    "parse_token_ids",
    "read_bytes",
    "read_json",
    "read_text",
    "read_token_ids",
    "read_tools",
]


def check_readable(paths: list[str]) -> None:
    """Fail before any output when an input cannot be read (exit 2, one line).

    Existence is all that is checked (not "is a regular file"): a FIFO or a process
    substitution is read like a file, and opening it here would consume it.
    """
    if paths.count("-") > 1:
        raise CliError("stdin (-) can be read only once")
    for path in paths:
        if path == "-":
            continue
        if Path(path).is_dir():
            raise _directory(path)
        if not os.path.exists(path):
            raise CliError(f"{path}: no such file")


#: What an input file is usually called: a directory's example file is one of these first.
_INPUT_SUFFIXES = (".harmony", ".jsonl", ".txt", ".parquet", ".json")


def _suffix_rank(name: str) -> int:
    ranks = [i for i, suffix in enumerate(_INPUT_SUFFIXES) if name.endswith(suffix)]
    return ranks[0] if ranks else len(_INPUT_SUFFIXES)


def _directory(path: str) -> CliError:
    """A directory where a file goes: say what to give instead, with a file of it as the
    example when it has one (``examples/chat.jsonl``)."""
    example = f"{path.rstrip(os.sep) or os.sep}{os.sep}FILE"
    try:
        with os.scandir(path) as entries:
            names = sorted(
                (e.name for _, e in zip(range(1000), entries, strict=False) if e.is_file()),
                key=lambda name: (_suffix_rank(name), name),
            )
        if names:
            example = os.path.join(path, names[0])
    except OSError:
        pass  # unreadable: the placeholder says the same
    return CliError(f"{path}: is a directory; give a file in it ({example}), or - for stdin")


def open_binary(path: str, stack: ExitStack) -> IO[bytes]:
    """A file (or stdin for ``-``) opened for reading bytes, closed with ``stack``."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return stack.enter_context(open(path, "rb"))
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise _directory(path) from None
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror or exc}") from None


def read_bytes(path: str, limit: int | None = None) -> bytes:
    """The bytes of a file, or of stdin for ``-``; more than ``limit`` bytes is an error
    (exit 2) found without reading past the limit."""
    try:
        with ExitStack() as stack:
            stream = open_binary(path, stack)
            data = stream.read() if limit is None else stream.read(limit + 1)
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise _directory(path) from None
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror or exc}") from None
    if limit is not None and len(data) > limit:
        raise CliError(f"{_display(path)}: larger than {limit:,} bytes")
    return data


def _display(path: str) -> str:
    return "<stdin>" if path == "-" else path


def read_text(path: str, limit: int | None = None) -> str:
    """A file's text, which must be UTF-8 (at most ``limit`` bytes, when given)."""
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if data.startswith(b"PAR1"):  # Parquet's magic: a dataset named where text goes
            raise CliError(
                f"{path}: Parquet, not text: `harmony-grammar validate {path} --field COLUMN`"
                " validates a column"
            ) from None
        raise CliError(f"{path}: invalid UTF-8 at byte {exc.start}") from None


#: The most digits read as one token id: o200k_harmony's ids have six, and a longer number is
#: reported, not converted (Python's int-string conversion is quadratic and limited).
MAX_TOKEN_ID_DIGITS = 20

_INTEGERS = re.compile(r"[\s,]*(-?\d+)[\s,]*")
_LONG_NUMBER = re.compile(rf"\d{{{MAX_TOKEN_ID_DIGITS + 1},}}")


def parse_token_ids(text: str, origin: str) -> list[int]:
    """Token ids from a JSON array or whitespace/comma separated integers."""
    stripped = text.strip()
    long_number = _LONG_NUMBER.search(stripped)
    if long_number is not None:
        raise CliError(
            f"{origin}: a number of {len(long_number.group())} digits at character"
            f" {long_number.start()} is no token id (at most {MAX_TOKEN_ID_DIGITS} digits)"
        )
    if stripped.startswith("<|"):
        raise CliError(f"{origin}: Harmony text, not token ids: drop --tokens")
    if stripped.startswith("["):
        try:
            value = loads_bounded(stripped)
        except json.JSONDecodeError as exc:
            raise CliError(f"{origin}: not a JSON array of token ids ({exc.msg})") from None
        except JsonLimitError as exc:
            raise CliError(f"{origin}: not a JSON array of token ids ({exc})") from None
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise CliError(f"{origin}: the JSON array must hold integers only")
        return value
    ids: list[int] = []
    pos = 0
    for match in _INTEGERS.finditer(stripped):
        if match.start() != pos:
            break
        ids.append(int(match.group(1)))
        pos = match.end()
    if pos != len(stripped):
        raise CliError(f"{origin}: not token ids (unexpected {stripped[pos : pos + 12]!r})")
    return ids


def read_token_ids(path: str) -> list[int]:
    """Token ids from a file or stdin."""
    return parse_token_ids(read_text(path), path)


def read_json(path: str, what: str = "the input") -> Any:
    """A JSON document from a file or stdin; bad JSON is a one-line error with its position."""
    text = read_text(path)
    try:
        return loads_bounded(text)
    except json.JSONDecodeError as exc:
        kind = sniff(text[:HEAD]).kind
        if kind in ("conversation", "completion"):
            raise CliError(
                f"{path}: Harmony text, not JSON: {what} is a JSON document"
                f" (`harmony-grammar parse {path}` reads Harmony)"
            ) from None
        if kind == "jsonl":
            raise CliError(
                f"{path}: JSON Lines (a JSON object per line): {what} is one JSON document"
            ) from None
        raise CliError(
            f"{path}: {what} is not JSON"
            f" ({json_message(exc)} at line {exc.lineno} column {exc.colno})"
        ) from None
    except JsonLimitError as exc:
        raise CliError(f"{path}: {what} is not readable JSON ({exc})") from None


def read_tools(path: str) -> list[Any] | dict[str, Any]:
    """A tools file: an OpenAI-style or plain tool list, ``{name: schema}``, or a request
    body with ``tools``."""
    value = read_json(path, "the tools file")
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]
    if not (
        (isinstance(value, list) and all(isinstance(tool, dict) for tool in value))
        or (isinstance(value, dict) and all(isinstance(schema, dict) for schema in value.values()))
    ):
        raise CliError(
            f"{path}: expected a list of tools, {{name: schema}}, or an object with 'tools'"
        )
    try:
        checked_tools(value)  # every parameters schema usable: one line naming the tool if not
    except ValueError as exc:
        raise CliError(f"{path}: {exc}") from None
    return value


def add_input_options(
    parser: argparse.ArgumentParser,
    *,
    tokens: bool = True,
    completion: bool = True,
    lenient: bool = True,
) -> None:
    """The options every command that reads Harmony shares: ``--tokens``, ``--completion``,
    ``--lenient`` (each only when asked for)."""
    if tokens:
        parser.add_argument(
            "--tokens", action="store_true", help="the input is o200k_harmony token ids"
        )
    if completion:
        parser.add_argument(
            "--completion",
            action="store_true",
            help="the input is model output after '<|start|>assistant'",
        )
    if lenient:
        parser.add_argument(
            "--lenient", action="store_true", help="repair known model deviations, with warnings"
        )


def note_skipped(path: str, skipped: list[str]) -> None:
    """Say on stderr which metadata files a dataset directory held (docs/datasets.md: a
    directory run never skips a file silently)."""
    shown = ", ".join(skipped[:5]) + (", ..." if len(skipped) > 5 else "")
    print(
        f"note: {path}: skipped {len(skipped)} metadata file(s) (names starting with . or _): "
        f"{shown}",
        file=sys.stderr,
    )
