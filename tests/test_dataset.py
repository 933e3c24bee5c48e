"""Streaming JSONL records, parallel validation in order and in bounded memory, progress."""

from __future__ import annotations

import io

import pytest

from harmony_grammar.validation import dataset
from harmony_grammar.validation.dataset import (
    BATCH_SIZE,
    IN_FLIGHT_PER_JOB,
    Item,
    Progress,
    ValidationOptions,
    read_jsonl,
    validate_items,
)


def items_of(data: bytes, field: str = "text", **kwargs):
    return list(read_jsonl(io.BytesIO(data), field, **kwargs))


def test_records_are_keyed_by_line_and_blank_lines_skipped():
    data = b'{"text": "a"}\n\n   \n{"text": [1, 2]}\n{"text": "c"}'
    items = items_of(data)
    assert [(i.key, i.source, i.error) for i in items] == [
        (1, "a", None),
        (4, [1, 2], None),
        (5, "c", None),
    ]


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b'{"text": "a"', "not JSON"),
        (b'{"other": "a"}', "no field 'text'"),
        (b'{"text": 3}', "holds int"),
        (b'{"text": [1, true]}', "holds list"),
        (b'{"text": null}', "holds NoneType"),
        (b'["text"]', "no field 'text'"),
        (b'{"text": "\xff"}', "invalid UTF-8"),
    ],
)
def test_bad_records_are_items_with_an_error(line, error):
    (item,) = items_of(b'{"text": "ok"}\n' + line + b"\n")[1:]
    assert item.key == 2 and item.source is None
    assert error in (item.error or "")


def test_dotted_fields_and_literal_keys():
    nested = items_of(b'{"output": {"text": "n"}}\n', "output.text")
    assert nested[0].source == "n"
    literal = items_of(b'{"output.text": "l", "output": {"text": "n"}}\n', "output.text")
    assert literal[0].source == "l"


def test_an_overlong_line_is_skipped_without_losing_the_next():
    long_line = b'{"text": "' + b"x" * 5000 + b'"}\n'
    data = b'{"text": "a"}\n' + long_line + b'{"text": "b"}\n' + b"y" * 5000
    items = items_of(data, max_record_bytes=100)
    assert [(i.key, i.source) for i in items] == [(1, "a"), (2, None), (3, "b"), (4, None)]
    assert "longer than 100 bytes" in (items[1].error or "")
    assert items[1].size == len(long_line)


def _sources(count: int) -> list[Item]:
    good = "<|start|>user<|message|>hi<|end|>"
    bad = "<|start|>assistant<|message|>no channel<|end|>"
    return [
        Item(n, None, "broken") if n % 7 == 0 else Item(n, bad if n % 3 == 0 else good)
        for n in range(1, count + 1)
    ]


def test_parallel_results_match_serial_ones_in_order():
    items = _sources(300)
    serial = list(validate_items(items, ValidationOptions(), jobs=1))
    parallel = list(validate_items(items, ValidationOptions(), jobs=2))
    assert [r.key for r in parallel] == list(range(1, 301))
    assert parallel == serial
    codes = {r.key: [d.code for d in r.diagnostics] for r in serial}
    assert codes[7] == ["HG290"] and codes[3] == ["HG200"] and codes[1] == []


def test_parallel_validation_keeps_a_bounded_number_of_records_in_flight():
    jobs, total = 2, 3000
    pulled = 0

    def source():
        nonlocal pulled
        for item in _sources(total):
            pulled += 1
            yield item

    bound = (jobs * IN_FLIGHT_PER_JOB + 1) * BATCH_SIZE
    assert total > 2 * bound
    most_ahead = 0
    for done, _result in enumerate(validate_items(source(), ValidationOptions(), jobs=jobs)):
        most_ahead = max(most_ahead, pulled - done)
    assert pulled == total
    assert most_ahead <= bound


def test_options_reach_the_workers():
    completion = Item(1, "<|channel|>final<|message|>x<|return|>")
    options = ValidationOptions(start="completion")
    (serial,) = validate_items([completion], options, jobs=1)
    (parallel,) = validate_items([completion], options, jobs=2)
    assert serial.ok and parallel.ok


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_only_on_a_terminal(monkeypatch):
    monkeypatch.setattr(Progress, "INTERVAL", 0.0)
    quiet = io.StringIO()
    progress = Progress(100, "records", quiet)
    progress.advance(50)
    progress.clear()
    assert quiet.getvalue() == ""

    terminal = _Terminal()
    progress = Progress(100, "records", terminal)
    progress.advance(50)
    assert "50%" in terminal.getvalue() and "1 records" in terminal.getvalue()
    progress.clear()
    assert terminal.getvalue().endswith("\r\x1b[K")


def test_module_exports():
    for name in dataset.__all__:
        assert hasattr(dataset, name)
