"""Validating datasets: JSON Lines read as a stream, validated in parallel, in bounded memory.

Memory stays bounded whatever the file's size: lines are read one at a time (a line longer
than ``max_record_bytes`` is skipped without being held), and with ``jobs > 1`` at most
``jobs * IN_FLIGHT_PER_JOB`` batches of records are in flight. Results come back in input
order. Workers receive and return plain tuples, never the frozen model classes, so nothing
depends on how a Python version pickles slotted dataclasses.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import IO, Any

from ..format.model import Diagnostic, Severity
from ..tools.json_limits import JsonLimitError, loads_bounded
from .record import validate_record

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_MAX_RECORD_BYTES",
    "IN_FLIGHT_PER_JOB",
    "Item",
    "ItemResult",
    "Progress",
    "ValidationOptions",
    "read_jsonl",
    "validate_items",
    "worker_count",
]

#: Records per task sent to a worker: enough to amortise the inter-process round trip.
BATCH_SIZE = 64
#: Batches queued per worker: keeps workers busy while bounding memory.
IN_FLIGHT_PER_JOB = 4
#: The longest JSONL line read; a longer one is reported (HG290) and skipped.
DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class ValidationOptions:
    """The :func:`~.validator.validate` arguments shared by every input."""

    tools: Mapping[str, Any] | None = None
    start: str = "conversation"
    strict: bool = True


@dataclass(frozen=True, slots=True)
class Item:
    """One input to validate: ``key`` names it (a JSONL line number or a file name);
    ``source`` is Harmony text or token ids, or None when ``error`` says why there is none;
    ``tools`` is the record's own tools value when a tools field was asked for (None when the
    record has none)."""

    key: int | str
    source: str | list[int] | None
    error: str | None = None
    size: int = 0
    tools: Any = None


@dataclass(frozen=True, slots=True)
class ItemResult:
    """The diagnostics of one input; ``tokens`` says that positions are token indexes."""

    key: int | str
    diagnostics: tuple[Diagnostic, ...]
    tokens: bool = False
    size: int = 0

    @property
    def ok(self) -> bool:
        """True when no diagnostic has error severity."""
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


# ---------------------------------------------------------------------------------- reading


def _field(record: Any, path: str) -> Any:
    """``record[path]``, or the nested value of a dotted path (``output.text``)."""
    if isinstance(record, dict) and path in record:
        return record[path]
    value = record
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(path)
        value = value[part]
    return value


def _optional_field(record: Any, path: str | None) -> Any:
    """``record``'s value at ``path``, or None when there is no such path (or no path)."""
    if path is None:
        return None
    try:
        return _field(record, path)
    except KeyError:
        return None


def _record(line: bytes, number: int, field: str, tools_field: str | None = None) -> Item:
    try:
        record = loads_bounded(line.decode(json.detect_encoding(line)))
    except UnicodeDecodeError as exc:
        return Item(number, None, f"invalid UTF-8 at byte {exc.start}", len(line))
    except json.JSONDecodeError as exc:
        return Item(number, None, f"not JSON ({exc.msg} at column {exc.colno})", len(line))
    except JsonLimitError as exc:  # nesting or a number Python's json would fail on
        return Item(number, None, f"not readable: {exc.limit.message}", len(line))
    try:
        value = _field(record, field)
    except KeyError:
        return Item(number, None, f"the record has no field {field!r}", len(line))
    tools = _optional_field(record, tools_field)
    if isinstance(value, str):
        return Item(number, value, size=len(line), tools=tools)
    if isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return Item(number, value, size=len(line), tools=tools)
    kind = type(value).__name__
    return Item(
        number, None, f"field {field!r} holds {kind}, not Harmony text or token ids", len(line)
    )


def read_jsonl(
    stream: IO[bytes],
    field: str,
    *,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    tools_field: str | None = None,
) -> Iterator[Item]:
    """Items of a JSON Lines stream, one per non-blank line, keyed by 1-based line number.

    ``field`` holds Harmony text or a list of token ids (a dotted path reaches into nested
    objects). A line that is not such a record becomes an item with an ``error``.
    ``tools_field`` (a path too) is read into each item's ``tools``, unchecked: the caller
    decides what a tools value means.
    """
    number = 0
    while True:
        line = stream.readline(max_record_bytes + 1)
        if not line:
            return
        number += 1
        if len(line) > max_record_bytes and not line.endswith(b"\n"):
            skipped = len(line)
            while not line.endswith(b"\n"):  # drain the rest of the line without keeping it
                line = stream.readline(_CHUNK)
                if not line:
                    break
                skipped += len(line)
            yield Item(number, None, f"the line is longer than {max_record_bytes} bytes", skipped)
            continue
        if line.strip():
            yield _record(line, number, field, tools_field)


# ---------------------------------------------------------------------------------- validating

#: The options of a worker process, set once by the pool's initializer.
_worker_options = ValidationOptions()


def _set_options(options: ValidationOptions) -> None:
    global _worker_options
    _worker_options = options


def _validate_one(item: Item, options: ValidationOptions) -> ItemResult:
    checked = validate_record(
        item.source, item.error, tools=options.tools, start=options.start, strict=options.strict
    )
    if isinstance(checked, Diagnostic):
        return ItemResult(item.key, (checked,), size=item.size)
    return ItemResult(
        item.key, checked.diagnostics, tokens=not isinstance(item.source, str), size=item.size
    )


def _to_tuples(result: ItemResult) -> tuple[Any, ...]:
    diagnostics = tuple(
        (d.code, d.severity.value, d.message, d.start, d.end, d.line, d.column, d.expected)
        for d in result.diagnostics
    )
    return result.key, diagnostics, result.tokens, result.size


def _from_tuples(data: tuple[Any, ...]) -> ItemResult:
    key, diagnostics, tokens, size = data
    return ItemResult(
        key,
        tuple(
            Diagnostic(code, Severity(severity), message, start, end, line, column, expected)
            for code, severity, message, start, end, line, column, expected in diagnostics
        ),
        tokens,
        size,
    )


def _validate_batch(batch: list[Item]) -> list[tuple[Any, ...]]:
    """Worker side: validate a batch with the options the pool was started with."""
    return [_to_tuples(_validate_one(item, _worker_options)) for item in batch]


def _batches(items: Iterable[Item], size: int) -> Iterator[list[Item]]:
    batch: list[Item] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may run on
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(requested: int, inputs: int | None = None) -> int:
    """How many processes to validate in: ``requested`` (0: one per CPU), at most one per CPU
    and one per input (``inputs``, when known). More would only cost start-up time."""
    cpus = _cpus()
    jobs = min(requested or cpus, cpus)
    if inputs is not None:
        jobs = min(jobs, inputs)
    return max(jobs, 1)


def validate_items(
    items: Iterable[Item], options: ValidationOptions, *, jobs: int = 1
) -> Iterator[ItemResult]:
    """Validate ``items`` in order; with ``jobs > 1`` in that many worker processes, keeping
    at most ``jobs * IN_FLIGHT_PER_JOB`` batches in flight (``jobs`` is capped at the CPUs)."""
    jobs = worker_count(jobs) if jobs > 1 else 1
    if jobs <= 1:
        for item in items:
            yield _validate_one(item, options)
        return
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_set_options, initargs=(options,)
    ) as pool:
        in_flight: deque[Future[list[tuple[Any, ...]]]] = deque()
        for batch in _batches(items, BATCH_SIZE):
            in_flight.append(pool.submit(_validate_batch, batch))
            while len(in_flight) >= jobs * IN_FLIGHT_PER_JOB:
                yield from map(_from_tuples, in_flight.popleft().result())
        while in_flight:
            yield from map(_from_tuples, in_flight.popleft().result())


# ---------------------------------------------------------------------------------- progress


class Progress:
    """A one-line progress bar on a terminal's stderr; silent when stderr is not a TTY.

    ``total`` is the work in the unit of :meth:`advance` (bytes of a file, or files), or 0
    when unknown (then only counts and rate are shown).
    """

    #: Seconds between redraws: drawing per record would cost more than validating.
    INTERVAL = 0.2

    def __init__(self, total: int, label: str, stream: IO[str] | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self._stream, "isatty", lambda: False)())
        self._total, self._label = total, label
        self._done = self._count = 0
        self._started = self._drawn = time.monotonic()

    def advance(self, amount: int) -> None:
        """One more input done, ``amount`` units of the total."""
        self._done += amount
        self._count += 1
        if self.enabled and time.monotonic() - self._drawn >= self.INTERVAL:
            self._draw()

    def _draw(self) -> None:
        now = time.monotonic()
        self._drawn = now
        rate = self._count / max(now - self._started, 1e-9)
        text = f"{self._count:,} {self._label}, {rate:,.0f}/s"
        if self._total > 0:
            fraction = min(self._done / self._total, 1.0)
            filled = int(fraction * 30)
            text = f"[{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%} {text}"
        self._stream.write(f"\r{text}\x1b[K")
        self._stream.flush()

    def clear(self) -> None:
        """Erase the bar (the next :meth:`advance` draws it again)."""
        if self.enabled:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
