"""Datasets with records and pieces that used to sink a run (issue 27), built in a directory.

Shared by tests/fixtures/test_dataset_pieces.py (local engine, prepare) and tests/fixtures/test_dataset_engines.py
(the same accounting on Ray), and by benchmarks/soak.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

GOOD = "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>"


def corrupt_row_group(path: Path, group: int) -> None:
    """Overwrite the start of row group ``group``'s first page: Couldn't deserialize thrift."""
    import pyarrow.parquet as pq

    column = pq.ParquetFile(path).metadata.row_group(group).column(0)
    offset = column.dictionary_page_offset or column.data_page_offset
    data = bytearray(path.read_bytes())
    data[offset : offset + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))


def non_utf8_strings(values: list[bytes]) -> object:
    """A pyarrow string array holding the bytes as they are (Arrow does not check on view)."""
    import pyarrow as pa

    return pa.array(values, pa.binary()).view(pa.string())


def build(root: Path) -> dict[str, int]:
    """Write the hostile inputs under ``root``; returns each input's record count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    # a lone surrogate (valid JSON) in one of three JSONL records
    lines = [json.dumps({"text": GOOD}), '{"text": "\\ud800 lone"}', json.dumps({"text": GOOD})]
    (root / "surrogate.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts["surrogate.jsonl"] = 3
    # a file name that is not UTF-8
    bad_name = os.fsdecode(b"name-\xff.jsonl")
    (root / bad_name).write_text(json.dumps({"text": GOOD}) + "\n", encoding="utf-8")
    counts[bad_name] = 1
    # one string value that is not UTF-8 in a Parquet column
    texts = non_utf8_strings([GOOD.encode(), b"\xff\xfe broken", GOOD.encode()])
    pq.write_table(pa.table({"text": texts}), root / "utf8.parquet")
    counts["utf8.parquet"] = 3
    # a corrupt data page in the middle row group of one shard
    table = pa.table({"text": [GOOD] * 30})
    pq.write_table(table, root / "corrupt.parquet", row_group_size=10, compression="NONE")
    corrupt_row_group(root / "corrupt.parquet", 1)
    counts["corrupt.parquet"] = 30
    return counts
