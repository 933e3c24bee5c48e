"""What an input is, read from its first characters, so that a command given the wrong kind
of input says which kind it wants and how to get it (one line, exit 2), instead of reporting
a parse error for every line.

The kinds are told apart by what each must start with: Harmony text by a control token, a
JSON Lines file by a JSON object on its first line, token ids by digits and separators only,
Parquet by its magic bytes. Anything else is ``text`` (prose, or Harmony with its control
tokens stripped), which every Harmony reader takes as it is. Only a start that no input of
the wanted kind can have is refused, so a valid input is never turned away.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..data.pieces import PARQUET_SUFFIXES
from ..data.read import field_value
from ..format.tokens import ControlToken
from .errors import CliError

__all__ = [
    "HEAD",
    "Sniffed",
    "check_completion",
    "check_completion_ids",
    "check_dataset",
    "check_harmony",
    "check_jsonl_field",
    "sniff",
]

#: How much of a file is read to tell its kind: a JSON Lines record longer than this is
#: still told by its first line's start.
HEAD = 1 << 16

_START = ControlToken.START.value
_ROLE = re.compile(re.escape(_START) + r"([^<\s]*)")
_TOKEN_IDS = re.compile(r"[\s\d,\[\]-]*")
_PARQUET_MAGIC = "PAR1"
_STRIPPED_HINT = "the model wrote after the prompt's <|start|>assistant"


@dataclass(frozen=True)
class Sniffed:
    """An input's kind: ``empty``, ``conversation`` (Harmony starting with ``<|start|>``;
    ``role`` its first author), ``completion`` (Harmony starting with another control token),
    ``jsonl`` (a JSON object on each of the first lines), ``json`` (one JSON document),
    ``token-ids``, ``parquet`` or ``text``. ``fields`` are a JSON object's keys (the first
    record's, for JSON Lines)."""

    kind: str
    fields: tuple[str, ...] = ()
    role: str = ""

    def fields_text(self) -> str:
        return ", ".join(self.fields) if self.fields else "none"

    @property
    def request_api(self) -> str | None:
        """``Chat Completions`` or ``Responses`` when a JSON object is a request body."""
        if self.kind != "json":
            return None
        if "messages" in self.fields:
            return "Chat Completions"
        return "Responses" if "input" in self.fields else None


def sniff(head: str) -> Sniffed:
    """The kind of an input whose first characters are ``head``."""
    text = head.lstrip()
    if not text:
        return Sniffed("empty")
    if text.startswith(_PARQUET_MAGIC):
        return Sniffed("parquet")
    if text.startswith(_START):
        role = _ROLE.match(text)
        return Sniffed("conversation", role=role.group(1) if role else "")
    if text.startswith("<|") and any(text.startswith(t.value) for t in ControlToken):
        return Sniffed("completion")
    if text[0] in "[0123456789-" and _TOKEN_IDS.fullmatch(text[:4096]):
        return Sniffed("token-ids")
    if text[0] in "{[":
        return _sniff_json(text)
    return Sniffed("text")


def _sniff_json(text: str) -> Sniffed:
    lines = [line for line in text.splitlines() if line.strip()]
    first = _json_or_none(lines[0])
    if isinstance(first, dict) and len(lines) > 1 and _json_or_none(lines[1]) is not None:
        return Sniffed("jsonl", tuple(first))
    whole = _json_or_none(text)
    if whole is None and isinstance(first, dict):
        return Sniffed("jsonl", tuple(first))  # one record, or a head cut inside the second
    if isinstance(whole, dict):
        return Sniffed("json", tuple(whole))
    if isinstance(whole, list) or (whole is None and text.startswith("[")):
        return Sniffed("json")
    return Sniffed("text")


def _json_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _chat_hint(sniffed: Sniffed) -> str:
    if "messages" in sniffed.fields:
        return "; records of chat messages become Harmony with `harmony-grammar prepare`"
    return ""


def check_harmony(
    path: str, text: str, *, completion: bool, lenient: bool, jsonl: bool = False
) -> None:
    """Refuse (exit 2, naming the fix) an input a Harmony reader (``parse``, ``validate``,
    ``repair``) cannot mean to read as Harmony text."""
    sniffed = sniff(text[:HEAD])
    where = f"{path}: "
    if sniffed.kind == "jsonl":
        how = "--jsonl FIELD" if jsonl else f"`harmony-grammar validate {path} --jsonl FIELD`"
        raise CliError(
            f"{where}JSON Lines, not Harmony text: {how} reads a field of each record "
            f"(the first record has: {sniffed.fields_text()}){_chat_hint(sniffed)}"
        )
    if sniffed.request_api is not None:
        raise CliError(
            f"{where}a {sniffed.request_api} request body, not Harmony text: "
            f"`harmony-grammar render {path}` renders it as Harmony"
        )
    if sniffed.kind == "json":
        raise CliError(
            f"{where}JSON, not Harmony text: a tools list goes in --tools, a dataset of "
            "records in JSON Lines with --jsonl FIELD"
        )
    if sniffed.kind == "token-ids":
        raise CliError(f"{where}token ids, not Harmony text: add --tokens")
    if sniffed.kind == "parquet":
        raise CliError(
            f"{where}Parquet, not Harmony text: `harmony-grammar validate {path} --field COLUMN`"
            " validates a column"
        )
    if sniffed.kind == "completion" and not completion and not lenient:
        raise CliError(
            f"{where}starts with {text.lstrip()[:11]}, so it is a completion (the text "
            f"{_STRIPPED_HINT}): add --completion"
        )
    if sniffed.kind == "conversation" and completion and sniffed.role not in ("", "assistant"):
        raise CliError(
            f"{where}starts with {_START}{sniffed.role}, a whole conversation, not a "
            "completion: drop --completion"
        )


def check_completion(path: str, text: str, *, command: str, lenient: bool, fix: str) -> None:
    """Refuse (exit 2, naming the fix) an input ``to-chat`` / ``to-responses`` cannot mean as
    a completion; ``fix`` is the option that reads a leading ``<|start|>assistant``."""
    sniffed = sniff(text[:HEAD])
    wanted = f"{command} reads a completion, the text {_STRIPPED_HINT}"
    if sniffed.kind == "empty":
        raise CliError(f"{path}: empty: {wanted}")
    if sniffed.kind == "conversation" and sniffed.role != "assistant":
        raise CliError(
            f"{path}: a whole conversation (it starts with {_START}{sniffed.role}): {wanted} "
            f"(`harmony-grammar validate {path}` checks a conversation)"
        )
    if sniffed.kind == "conversation" and not lenient:
        raise CliError(
            f"{path}: starts with {_START}assistant, which ends the prompt: pass only the text "
            f"after it, or {fix}"
        )
    if sniffed.request_api is not None:
        raise CliError(
            f"{path}: a {sniffed.request_api} request body, not model output: {wanted} "
            f"(`harmony-grammar render {path}` renders a request)"
        )
    if sniffed.kind in ("jsonl", "json", "parquet"):
        kind = {"jsonl": "JSON Lines", "json": "JSON", "parquet": "Parquet"}[sniffed.kind]
        raise CliError(f"{path}: {kind}, not model output: {wanted}")
    if sniffed.kind == "token-ids":
        raise CliError(f"{path}: token ids, not text: add --tokens")


def check_completion_ids(path: str, ids: list[int], *, command: str) -> None:
    """The token-id form of :func:`check_completion`'s first two checks."""
    wanted = f"{command} reads a completion, the ids {_STRIPPED_HINT}"
    if not ids:
        raise CliError(f"{path}: no token ids: {wanted}")
    if ids[0] == ControlToken.START.id and len(ids) > 1:
        from ..format.vocabulary import load_encoding  # only for this refusal's message

        role = load_encoding().decode(ids[1:2])
        if role != "assistant":
            raise CliError(
                f"{path}: the ids of a whole conversation (they start with "
                f"{_START}{role}): {wanted}"
            )


def check_jsonl_field(path: str, field: str, *, option: str) -> None:
    """Refuse (exit 2) a JSON Lines file whose first record has no ``field``, naming the
    fields it has (``option`` is the flag that named the field)."""
    if path == "-" or Path(path).suffix.lower() in PARQUET_SUFFIXES or not Path(path).is_file():
        return  # stdin cannot be peeked; Parquet and directories are checked by the planner
    with open(path, encoding="utf-8", errors="replace") as stream:
        first = next((line for line in stream if line.strip()), "")
    record = _json_or_none(first)
    if not isinstance(record, dict):
        return  # not a record at all: the reader reports it, with its line
    sniffed = Sniffed("jsonl", tuple(record))
    try:
        field_value(record, field)
    except KeyError:
        raise CliError(
            f"{path}: no field {field!r} in the first record (it has: {sniffed.fields_text()}):"
            f" {option} names the field holding Harmony text or token ids{_chat_hint(sniffed)}"
        ) from None


def _head(path: str) -> str:
    try:
        with open(path, "rb") as stream:
            return stream.read(HEAD).decode("utf-8", errors="replace")
    except OSError:
        return ""  # the command's own reading reports it


def check_dataset(path: str, *, command: str, ids: str | None = None) -> None:
    """Refuse (exit 2) a file ``prepare`` or ``audit-masks`` cannot mean as a dataset:
    Harmony text or prose (``prepare``: records of chat messages; ``audit-masks``: prepared
    records, with the ids column ``ids``)."""
    if path == "-" or not Path(path).is_file():
        return
    sniffed = sniff(_head(path))
    prepare_first = (
        f"`harmony-grammar prepare {path} -o prepared.parquet` first, or name the ids "
        "column with --ids COLUMN"
    )
    if sniffed.kind in ("conversation", "completion", "text", "token-ids", "empty"):
        what = {
            "conversation": "Harmony text",
            "completion": "Harmony text",
            "text": "not JSON Lines (its first line is not JSON)",
            "token-ids": "token ids",
            "empty": "empty",
        }[sniffed.kind]
        if command == "prepare":
            raise CliError(
                f"{path}: {what}, not a chat dataset: prepare reads records (JSON Lines, a "
                "JSON array or Parquet) of OpenAI-style 'messages', or of Harmony text in a "
                f"field (--input-format harmony --field NAME); `harmony-grammar validate {path}`"
                " checks one Harmony file"
            )
        raise CliError(
            f"{path}: {what}, not a prepared dataset: audit-masks reads records of token ids "
            "and a loss mask, as `harmony-grammar prepare CHATS.jsonl -o prepared.parquet` "
            "writes them from a chat dataset"
        )
    records = sniffed.kind in ("jsonl", "json") and sniffed.fields  # a first record's keys
    if command == "audit-masks" and ids and records and ids not in sniffed.fields:
        raise CliError(
            f"{path}: no column {ids!r} of token ids (the first record has: "
            f"{sniffed.fields_text()}): run {prepare_first}"
        )
