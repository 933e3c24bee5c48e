"""Reading CLI inputs: files or stdin, as text or token ids, with one-line errors."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from .errors import CliError

__all__ = [
    "add_input_options",
    "parse_token_ids",
    "read_bytes",
    "read_json",
    "read_text",
    "read_token_ids",
    "read_tools",
]


def read_bytes(path: str) -> bytes:
    """The bytes of a file, or of stdin for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory") from None
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror or exc}") from None


def read_text(path: str) -> str:
    """A file's text, which must be UTF-8."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{path}: invalid UTF-8 at byte {exc.start}") from None


_INTEGERS = re.compile(r"[\s,]*(-?\d+)[\s,]*")


def parse_token_ids(text: str, origin: str) -> list[int]:
    """Token ids from a JSON array or whitespace/comma separated integers."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise CliError(f"{origin}: not a JSON array of token ids ({exc.msg})") from None
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
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path}: {what} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None


def read_tools(path: str) -> list[Any] | dict[str, Any]:
    """A tools file: an OpenAI-style or plain tool list, ``{name: schema}``, or a request
    body with ``tools``."""
    value = read_json(path, "the tools file")
    if isinstance(value, dict) and isinstance(value.get("tools"), list):
        value = value["tools"]
    if isinstance(value, list) and all(isinstance(tool, dict) for tool in value):
        return value
    if isinstance(value, dict) and all(isinstance(schema, dict) for schema in value.values()):
        return value
    raise CliError(f"{path}: expected a list of tools, {{name: schema}}, or an object with 'tools'")


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
