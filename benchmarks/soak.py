"""Soak test (issue 14): many generated hostile inputs through every public entry point.

    python benchmarks/soak.py [--inputs 100000] [--seed 14] [--subprocesses 60]

Not part of the suite: it runs for minutes. Each input goes to the entry points of its class,
and any exception that is not the documented one escapes into the count:

* ``text``: Harmony-like text built from control spellings, header words, garbage, lone
  surrogates and long runs: ``parse`` (strict and lenient, each start), ``validate``,
  ``detect_leak``, ``repair_thinking``;
* ``ids``: token ids mixed with negative, huge and non-integer elements: ``parse``,
  ``validate``;
* ``stream``: text or ids fed to ``StreamParser`` (with ``tools=``) in random chunks; the
  result must equal ``parse`` of the whole (a mismatch counts as a failure too);
* ``arguments``: call bodies nested deep, with long numbers, surrogates, broken JSON:
  ``validate``, ``parse(tools=)``, ``to_chat_completion(tools=)`` (``ChatCompletionError`` is
  its documented answer);
* ``render``: conversations with hostile names, recipients and channels (``RenderError``);
* ``cli``: ``harmony_grammar.cli.main(argv)`` in-process on files in a temporary folder,
  hostile tools files included: the status must be 0, 1 or 2 and stderr never "internal
  error"; plus ``--subprocesses`` real ``python -m harmony_grammar`` runs;
* ``jsonl``: records of ``validate --jsonl`` (each record counts as one input);
* ``pieces`` (:meth:`Soak.pieces`, ``--datasets`` directories): dataset directories whose
  records and pieces are hostile (lone surrogates, file names that are not UTF-8, Parquet
  strings that are not UTF-8, row groups with bytes overwritten at random, truncated and
  bit-flipped shards, metadata files) through ``validate --output`` (local, ``--jobs`` 1 or
  2) and ``prepare``: every record must be written, reported bad, or reported as part of an
  unreadable piece (each record counts as one input; the ones not accounted for are counted).

Issue 27's classes (their own functions, after the ``Soak`` class):

* ``schema-text``: tool schemas with forging text (quotes, every TypeScript line terminator,
  ``}) => any;``, ``type delete_all``, control spellings) in every position the TypeScript
  rendering writes: the developer message must declare exactly the one tool, as a
  TypeScript reader and ``tools_from_typescript`` see it (``RenderError`` is the documented
  refusal), and ``schema_to_grammar`` on a random target (``UnsupportedSchemaError``);
* ``tool-names``: a hostile tool name to every entry point (render, ``completion_grammar``
  for both targets, ``xgrammar_structural_tag``, ``to_outlines``, ``parse(tools=)``,
  ``validate(tools=)``): each refuses it with ``ValueError``/``RenderError`` or accepts it,
  and all must agree;
* ``bomb-*``: issue 27's schema-bomb shapes (a root ``$ref`` into anyOf chains, closed objects
  with many required properties, many plain properties, big enums, long ``prefixItems``) on
  a random target, for the time-per-MB figure;
* ``adapter-*``: a misbehaving conformance adapter (mutates its request, ``sys.exit``,
  ``BaseException``, a raising ``__eq__``, infinite recursion, ``os._exit``, a hang, garbage)
  over six cases: every case is scored, and harmony-grammar scores the same cases the same
  afterwards.

It prints the inputs tried per class, the exceptions that escaped (target 0, with the first
few), the slowest input by time per MB (inputs of 64 KB or more) and the slowest overall,
and the peak memory (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harmony_grammar import (
    Conversation,
    Message,
    RenderError,
    Role,
    StreamParser,
    detect_leak,
    parse,
    render,
    to_chat_completion,
    user_message,
    validate,
)
from harmony_grammar.cli.main import main as cli_main
from harmony_grammar.conformance import load_cases
from harmony_grammar.conformance.adapters import harmony_grammar_adapter
from harmony_grammar.conformance.runner import run_suite
from harmony_grammar.declarations.spec import ToolSpec
from harmony_grammar.declarations.typescript import tools_from_typescript
from harmony_grammar.generation import completion_grammar, to_outlines, xgrammar_structural_tag
from harmony_grammar.rendering import ChatCompletionError
from harmony_grammar.rendering.conversation import DeveloperContent
from harmony_grammar.rendering.renderer import developer_text
from harmony_grammar.safety import repair_thinking
from harmony_grammar.schema import UnsupportedSchemaError, schema_to_grammar

SPELLINGS = [
    "<|start|>",
    "<|end|>",
    "<|message|>",
    "<|channel|>",
    "<|constrain|>",
    "<|call|>",
    "<|return|>",
    "<|endoftext|>",
    "<|reserved_200010|>",
    "<|",
    "|>",
    "<|sta",
]
WORDS = [
    "user",
    "assistant",
    "system",
    "developer",
    "functions.f",
    "analysis",
    "final",
    "commentary",
    " to=functions.f",
    " to=",
    "json",
    " json",
    "<|constrain|>json",
    ":",
    "=",
    " ",
    "\n",
    "tool",
    "browser.search",
    "python",
    "{}",
    '{"a": 1}',
    "```json\n{}\n```",
]
JUNK = ["\0", "\ud800", "\udfff", "😀", "\u200b", "\r", "\t", "&amp;", "\\u0000", "%", "é"]
TOOLS = [{"name": "f", "parameters": {"type": "object", "properties": {"a": {}}}}]
IDS = [200006, 200008, 200005, 200007, 200012, 200002, 1428, 173781, 24912, 200003, 199999]


def hostile_text(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 40)):
        kind = rng.random()
        if kind < 0.35:
            parts.append(rng.choice(SPELLINGS))
        elif kind < 0.75:
            parts.append(rng.choice(WORDS))
        elif kind < 0.95:
            parts.append(rng.choice(JUNK))
        else:
            parts.append(
                rng.choice(JUNK + WORDS + ["[", "{", "9", "<|end|>"]) * rng.randint(1, 500)
            )
    return "".join(parts)


def hostile_ids(rng: random.Random) -> list[Any]:
    out: list[Any] = []
    for _ in range(rng.randint(0, 60)):
        kind = rng.random()
        if kind < 0.6:
            out.append(rng.choice(IDS))
        elif kind < 0.8:
            out.append(rng.randint(0, 201087))
        else:
            out.append(
                rng.choice(
                    [
                        -1,
                        2**40,
                        10**50,
                        1.5,
                        float("nan"),
                        "200006",
                        None,
                        True,
                        [1],
                        b"x",
                        10**1000,
                    ]
                )
            )
    return out


def hostile_arguments(rng: random.Random) -> str:
    kind = rng.randrange(7)
    n = rng.choice([10, 127, 128, 129, 500, 1000, 5000])
    if kind == 0:
        return '{"a": ' + "[" * n + "]" * n + "}"
    if kind == 1:
        return '{"a": ' + '{"b": ' * n + "1" + "}" * n + "}"
    if kind == 2:
        return '{"a": ' + "7" * rng.choice([4300, 4301, 5000, 50000]) + "}"
    if kind == 3:
        return '{"a": "' + rng.choice(JUNK) + '"}'
    if kind == 4:
        return "[" * n
    if kind == 5:
        return '{"a": 1e' + "9" * rng.randint(1, 400) + "}"
    return '{"a": ' + rng.choice(['"x"', "-0", "1.5e-999", "[]", "null", '"\\ud800"']) + "}"


def call_text(body: str, completion: bool) -> str:
    head = "" if completion else "<|start|>assistant"
    return f"{head}<|channel|>commentary to=functions.f <|constrain|>json<|message|>{body}<|call|>"


class Soak:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.tried: Counter[str] = Counter()
        self.escaped: Counter[str] = Counter()
        self.examples: list[str] = []
        self.mismatches: Counter[str] = Counter()
        self.slowest_per_mb = (0.0, 0, "")
        self.slowest = (0.0, 0, "")
        self.unaccounted = 0

    def check(self, kind: str, size: int, func: Callable[[], object], *allowed: type) -> None:
        self.tried[kind] += 1
        start = time.perf_counter()
        try:
            func()
        except allowed:
            pass
        except Exception as exc:  # what the soak is looking for
            self.escaped[f"{kind}: {type(exc).__name__}"] += 1
            if len(self.examples) < 8:
                self.examples.append(f"{kind}: {''.join(traceback.format_exception_only(exc))}")
        elapsed = time.perf_counter() - start
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, size, kind)
        if size >= 65536 and elapsed / (size / 1e6) > self.slowest_per_mb[0]:
            self.slowest_per_mb = (elapsed / (size / 1e6), size, kind)

    # -- classes ------------------------------------------------------------------------
    def text(self) -> None:
        text = hostile_text(self.rng)
        start = self.rng.choice(["conversation", "completion", "prompt"])
        strict = self.rng.random() < 0.5
        self.check("text", len(text), lambda: parse(text, start=start, strict=strict))
        self.check("text", len(text), lambda: validate(text, start=start, strict=strict))
        self.check("text", len(text), lambda: detect_leak(text))
        self.check("text", len(text), lambda: repair_thinking(text))

    def ids(self) -> None:
        ids = hostile_ids(self.rng)
        self.check("ids", len(ids), lambda: parse(ids))
        self.check("ids", len(ids), lambda: validate(ids, start="completion"))

    def stream(self) -> None:
        use_ids = self.rng.random() < 0.4
        source: Any = hostile_ids(self.rng) if use_ids else hostile_text(self.rng)
        if not use_ids and self.rng.random() < 0.3:
            source += call_text(hostile_arguments(self.rng), False)
        chunk = self.rng.randint(1, 50)

        def run() -> None:
            parser = StreamParser(start="conversation", tools=TOOLS)
            for i in range(0, len(source), chunk):
                if use_ids:
                    parser.feed_tokens(source[i : i + chunk])
                else:
                    parser.feed(source[i : i + chunk])
            parser.close()
            streamed, whole = parser.result(), parse(source, tools=TOOLS)
            if streamed != whole:  # not an escaped exception: counted apart, by code
                differing = {(d.code, d.start, d.end) for d in streamed.diagnostics} ^ {
                    (d.code, d.start, d.end) for d in whole.diagnostics
                }
                what = ",".join(sorted({code for code, _, _ in differing})) or "messages"
                self.mismatches[what] += 1

        self.check("stream", len(source), run)

    def arguments(self) -> None:
        body = hostile_arguments(self.rng)
        self.check("arguments", len(body), lambda: validate(call_text(body, False)))
        self.check("arguments", len(body), lambda: parse(call_text(body, False), tools=TOOLS))
        self.check(
            "arguments",
            len(body),
            lambda: to_chat_completion(call_text(body, True), tools=TOOLS),
            ChatCompletionError,
        )

    def render(self) -> None:
        word = "".join(self.rng.choice(WORDS + JUNK + SPELLINGS) for _ in range(3))
        field = self.rng.choice(["recipient", "channel", "name", "content_type"])
        fields: dict[str, Any] = {"channel": "commentary", "recipient": "functions.f"}
        fields[field] = word
        message = Message(Role.ASSISTANT, hostile_text(self.rng), **fields)
        conversation = Conversation.from_messages([user_message("hi"), message])

        def run() -> None:
            # As ids: content is then never structure, whatever it spells.
            back = parse(render(conversation, tokens=True))
            if len(back.messages) < 2 or getattr(back.messages[1], field) != word:
                raise AssertionError(f"{field} {word!r} rendered but not read back")

        self.check("render", len(word), run, RenderError)

    def cli(self, folder: Path) -> None:
        name = f"in{self.rng.randrange(50)}"
        path = folder / name
        kind = self.rng.random()
        if kind < 0.5:
            path.write_text(hostile_text(self.rng), encoding="utf-8", errors="surrogatepass")
        elif kind < 0.8:
            path.write_text(" ".join(str(i) for i in hostile_ids(self.rng) if type(i) is int))
        else:
            path.write_bytes(
                bytes(self.rng.randrange(256) for _ in range(self.rng.randint(0, 200)))
            )
        tools = folder / "tools.json"
        tools.write_text(
            json.dumps(
                [
                    {
                        "name": "f",
                        "parameters": self.rng.choice(
                            [
                                {"type": "object"},
                                5,
                                {"type": "bogus"},
                                {"$ref": "http://x/y"},
                                True,
                                [],
                                {"properties": {"a": {"$ref": "#/nope"}}},
                            ]
                        ),
                    }
                ]
            )
        )
        argv = self.rng.choice(
            [
                ["parse", str(path)],
                ["parse", "--tokens", str(path)],
                ["parse", "--lenient", str(path)],
                ["validate", str(path)],
                ["validate", "--tokens", str(path)],
                ["validate", "--tools", str(tools), str(path)],
                ["validate", "--jobs", "0", str(path)],
                ["tokens", str(path)],
                ["leaks", str(path)],
                ["to-chat", str(path)],
                ["to-chat", "--tools", str(tools), str(path)],
                ["grammar", "--tools", str(tools), "--no-validate"],
                ["validate", "/dev/null"],
                ["validate", str(folder)],
                ["parse", str(folder / "missing")],
            ]
        )
        out, err = io.StringIO(), io.StringIO()

        def run() -> None:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = cli_main(argv)
            if status not in (0, 1, 2) or "internal error" in err.getvalue():
                raise AssertionError(f"{argv[0]}: exit {status}: {err.getvalue()[:200]}")
            if status == 2 and len(err.getvalue().strip().splitlines()) != 1:
                raise AssertionError(f"{argv[0]}: exit 2 with {err.getvalue()[:200]!r}")

        self.check("cli", path.stat().st_size, run)

    def jsonl(self, folder: Path, records: int) -> None:
        path = folder / "data.jsonl"
        lines = []
        for _ in range(records):
            kind = self.rng.random()
            if kind < 0.4:
                lines.append(json.dumps({"text": hostile_text(self.rng)}))
            elif kind < 0.6:
                lines.append(json.dumps({"text": call_text(hostile_arguments(self.rng), False)}))
            elif kind < 0.75:
                lines.append(
                    json.dumps({"text": [i for i in hostile_ids(self.rng) if type(i) is int]})
                )
            elif kind < 0.85:
                lines.append('{"text": ' + "[" * self.rng.randint(100, 3000) + "]")
            else:
                lines.append(
                    self.rng.choice(
                        [
                            '{"text": 5}',
                            "not json",
                            '{"text": ' + "9" * 5000 + "}",
                            '{"other": 1}',
                            "\ud800",
                            "[]",
                        ]
                    )
                )
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        out, err = io.StringIO(), io.StringIO()
        jobs = self.rng.choice(["1", "2"])

        def run() -> None:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = cli_main(["validate", "--jsonl", "text", "--jobs", jobs, str(path)])
            if status not in (0, 1) or f"{records} records checked" not in out.getvalue():
                raise AssertionError(f"jsonl: exit {status}: {err.getvalue()[:200]}")

        self.check("jsonl-run", path.stat().st_size, run)
        self.tried["jsonl"] += records

    def pieces(self, folder: Path) -> None:
        """A directory of hostile dataset pieces through ``validate`` and ``prepare``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        root = folder / f"pieces{self.rng.randrange(1 << 30)}"
        root.mkdir()
        good = "<|start|>user<|message|>hi<|end|>"
        known = 0  # records whose count the planner can know (every piece but a lost footer)
        for n in range(self.rng.randint(1, 5)):
            kind = self.rng.choice(["jsonl", "parquet", "parquet", "saved"])
            rows = self.rng.randint(1, 60)
            values: list[bytes] = [
                self.rng.choice([good.encode(), b"\xff\xfe", b"<|start|>x", b"\xed\xa0\x80"])
                for _ in range(rows)
            ]
            if kind == "jsonl":
                name = os.fsdecode(b"part-%d-\xff.jsonl" % n) if n % 2 else f"part-{n}.jsonl"
                lines = [
                    self.rng.choice([json.dumps({"text": good}), '{"text": "\\ud800"}', "{x"])
                    for _ in range(rows)
                ]
                (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
                known += rows
                continue
            table = pa.table({"text": pa.array(values, pa.binary()).view(pa.string())})
            path = root / f"part-{n}.parquet"
            pq.write_table(table, path, row_group_size=self.rng.randint(1, 20), compression="NONE")
            data = bytearray(path.read_bytes())
            damage = self.rng.choice(["none", "flip", "flip", "truncate"])
            if damage == "flip":
                for _ in range(self.rng.randint(1, 8)):
                    at = self.rng.randrange(4, max(len(data) - 8, 5))
                    data[at] ^= 1 << self.rng.randrange(8)
            elif damage == "truncate":
                data = data[: self.rng.randrange(len(data))]
            path.write_bytes(bytes(data))
            try:
                known += pq.ParquetFile(path).metadata.num_rows
            except Exception:  # a lost footer: the piece is one result, its rows unknown
                known += 1
        if self.rng.random() < 0.3:
            (root / "_SUCCESS").write_text("")
        output = root.with_suffix(".results.parquet")
        out, err = io.StringIO(), io.StringIO()
        jobs = self.rng.choice(["1", "2"])

        def run() -> None:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = cli_main(["validate", str(root), "--field", "text", "--jobs", jobs,
                                   "--output", str(output)])  # fmt: skip
                if status not in (0, 1) or "internal error" in err.getvalue():
                    raise AssertionError(f"pieces: exit {status}: {err.getvalue()[:300]}")
                written = pq.read_metadata(output).num_rows
                self.unaccounted += abs(known - written)
                status = cli_main(["prepare", str(root), "-o", str(root) + ".train.parquet"])
                if status not in (0, 1) or "internal error" in err.getvalue():
                    raise AssertionError(f"prepare: exit {status}: {err.getvalue()[:300]}")
                summary = err.getvalue().strip().splitlines()[-1].split()
                total, kept, skipped = int(summary[0]), int(summary[2]), int(summary[4])
                self.unaccounted += abs(known - total) + abs(total - kept - skipped)

        self.check("pieces-run", known, run)
        self.tried["pieces"] += known

    def subprocess_run(self, folder: Path) -> None:
        path = folder / "sub.txt"
        path.write_text(hostile_text(self.rng), encoding="utf-8", errors="surrogatepass")
        command = self.rng.choice(["parse", "validate", "tokens", "leaks", "to-chat"])
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))

        def run() -> None:
            done = subprocess.run(
                [sys.executable, "-m", "harmony_grammar", command, str(path)],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            if (
                done.returncode not in (0, 1, 2)
                or "Traceback" in done.stderr
                or "internal error" in done.stderr
            ):
                raise AssertionError(f"{command}: exit {done.returncode}: {done.stderr[:200]}")

        self.check("subprocess", path.stat().st_size, run)

    def big(self) -> None:
        # A few large inputs for the time-per-MB figure.
        size = self.rng.choice([1 << 17, 1 << 19, 1 << 21])
        if self.rng.random() < 0.3:  # a big call body, checked against the tools
            body = hostile_arguments(self.rng) + " " * size
            self.check("big", len(body), lambda: parse(call_text(body, False), tools=TOOLS))
            return
        unit = self.rng.choice(
            [
                "<|start|>user<|message|>hi<|end|>",
                "<|end|>",
                "[",
                "\0",
                "a b\n",
                "<|start|>assistant<|channel|>final<|message|>x",
            ]
        )
        text = unit * (size // len(unit))
        self.check("big", len(text), lambda: parse(text))
        self.check("big", len(text), lambda: validate(text))


# -- issue 27: hostile tool schemas and names, schema bombs, misbehaving adapters ----------
# Each class is a function over the Soak (its rng and its check), kept apart from the rest.

FORGE_PIECES = [
    '"',
    "\n",
    "\r",
    "\r\n",
    "\u2028",
    "\u2029",
    "}) => any;",
    "\ntype delete_all = () => any;\n",
    "type delete_all = () => any;",
    "// ",
    "/*",
    "*/",
    "\\",
    "namespace functions {",
    "} // namespace functions",
    "# Tools\n## functions\n",
    "{",
    "}",
    ";",
    "`",
    "'",
]
TARGETS = ["lark", "llguidance", "gbnf", "xgrammar"]
CASES = load_cases()
_LINE_TERMINATORS = re.compile("\r\n|[\n\r\u2028\u2029]")


def hostile_schema_text(rng: random.Random) -> str:
    pool = FORGE_PIECES + SPELLINGS + JUNK + WORDS
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 12)))


def schema_with_text(rng: random.Random, text: str) -> dict[str, Any]:
    """A tool schema with ``text`` in one of the positions the TypeScript rendering writes."""
    prop: dict[str, Any] = {"type": "string"}
    shapes: list[dict[str, Any]] = [
        {"properties": {"c": {**prop, "enum": [text, "b"]}}},
        {"properties": {text: prop}},
        {"properties": {"c": {**prop, "default": text}}},
        {"properties": {"c": {**prop, "enum": ["a"], "default": text}}},
        {"properties": {"c": {**prop, "description": text}}},
        {"properties": {"c": {**prop, "title": text}}},
        {"properties": {"c": {**prop, "examples": [text]}}},
        {"description": text, "properties": {"c": prop}},
        {"properties": {"c": {"oneOf": [{**prop, "description": text}], "description": text}}},
        {"properties": {"c": {"oneOf": [{**prop, "enum": ["a"], "default": text}]}}},
        {"properties": {"c": {"type": ["string", text]}}},
        {"properties": {"c": {"type": "object", "properties": {text: {**prop, "enum": [text]}}}}},
        {"properties": {"c": {"type": "array", "items": {**prop, "enum": [text]}}}},
    ]
    return {"type": "object", **rng.choice(shapes)}


def declared_names(text: str) -> list[str]:
    """``type NAME`` at the start of a TypeScript line, outside comments: what a reader sees."""
    names = []
    for line in _LINE_TERMINATORS.split(text):
        match = re.match(r"type\s+([^\s=]+)\s*=", line)
        if match:
            names.append(match.group(1))
    return names


def soak_schema_text(soak: Soak) -> None:
    text = hostile_schema_text(soak.rng)
    schema = schema_with_text(soak.rng, text)
    description = soak.rng.choice(["", text, "Weather.\n" + text])
    tool = ToolSpec("get_weather", description, schema)

    def rendered() -> None:
        developer = developer_text(DeveloperContent(tools=(tool,)))
        if declared_names(developer) != ["get_weather"]:
            raise AssertionError(f"schema text declared {declared_names(developer)}")
        back = tools_from_typescript(developer) or ()
        if [t.name for t in back] != ["get_weather"]:
            raise AssertionError(f"validate would read {[t.name for t in back]}")

    soak.check("schema-text", len(text), rendered, RenderError)
    target = soak.rng.choice(TARGETS)
    soak.check(
        "schema-text",
        len(text),
        lambda: schema_to_grammar(schema, target=target),  # type: ignore[arg-type]
        UnsupportedSchemaError,
    )


def hostile_tool_name(rng: random.Random) -> str:
    pool = [*FORGE_PIECES, *SPELLINGS, *JUNK, "a", "get_weather", " ", "=", ".", "-", "$", "日"]
    if rng.random() < 0.05:
        return "x" * rng.choice([1023, 1024, 1025, 5000])
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 4)))


def soak_tool_names(soak: Soak) -> None:
    """One hostile name to every grammar entry point: each refuses it alike, or accepts it."""
    name = hostile_tool_name(soak.rng)
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}]
    entries: list[tuple[str, Callable[[], object]]] = [
        ("render", lambda: developer_text(DeveloperContent(tools=(ToolSpec(name, ""),)))),
        ("completion_grammar", lambda: completion_grammar(tools)),
        ("completion_grammar-xgrammar", lambda: completion_grammar(tools, target="xgrammar")),
        ("xgrammar_structural_tag", lambda: xgrammar_structural_tag(tools)),
        ("to_outlines", lambda: to_outlines(tools)),
        ("parse", lambda: parse("", tools=tools)),
        ("validate", lambda: validate("", tools=tools)),
    ]
    verdicts: dict[str, bool] = {}

    def entry(label: str, func: Callable[[], object]) -> Callable[[], object]:
        def run() -> None:
            try:
                func()
                verdicts[label] = True
            except (ValueError, RenderError):
                verdicts[label] = False

        return run

    for label, func in entries:
        soak.check("tool-names", len(name), entry(label, func))
    if len(set(verdicts.values())) > 1:
        soak.escaped[f"tool-names: entry points disagree on {name[:40]!r}: {verdicts}"] += 1


def warm_up_entry_points() -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    completion_grammar(tools)
    completion_grammar(tools, target="xgrammar")
    xgrammar_structural_tag(tools)
    to_outlines(tools)


def ref_chain(depth: int) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(depth)
    }
    defs[f"d{depth}"] = {"type": "string"}
    return {"$ref": "#/$defs/d0", "$defs": defs}


def bomb_schema(rng: random.Random) -> tuple[str, dict[str, Any], bool]:
    """A schema-bomb shape of issue 27 at a random size: (shape, schema, closed objects)."""
    shape = rng.choice(["ref-chain", "closed-required", "plain-properties", "enum", "prefix"])
    n = rng.choice([500, 1000, 2000])
    names = [f"p{i}" for i in range(n)]
    if shape == "ref-chain":
        return shape, ref_chain(rng.randint(10, 140)), False
    if shape == "closed-required":
        props = {name: {"type": "integer"} for name in names}
        return shape, {"type": "object", "properties": props, "required": names}, True
    if shape == "plain-properties":
        return (
            shape,
            {"type": "object", "properties": {k: {"type": "integer"} for k in names}},
            False,
        )
    if shape == "enum":
        return shape, {"enum": [f"v{i}" for i in range(n * 10)]}, False
    return shape, {"type": "array", "prefixItems": [{"type": "integer"}] * n}, False


def soak_schema_bombs(soak: Soak) -> None:
    shape, schema, closed = bomb_schema(soak.rng)
    target = soak.rng.choice(TARGETS)
    size = len(json.dumps(schema))
    soak.check(
        f"bomb-{shape}",
        size,
        lambda: schema_to_grammar(schema, target=target, closed_objects=closed),  # type: ignore[arg-type]
        UnsupportedSchemaError,
    )


class _Hostile:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("__eq__ raised")

    __ne__ = __eq__  # type: ignore[assignment]
    __hash__ = None  # type: ignore[assignment]


def _adapter_misbehaviours() -> dict[str, Callable[[dict[str, Any]], Any]]:
    good = harmony_grammar_adapter("text")

    def mutating(request: dict[str, Any]) -> Any:
        response = good(request)
        for value in request.values():
            if isinstance(value, (list, dict)):
                value.clear()
        request.clear()
        return response

    def hostile_eq(request: dict[str, Any]) -> Any:
        response = good(request)
        for message in response.get("messages", []):
            message["content"] = _Hostile()
        return {**response, "text": _Hostile()}

    def recursing(request: dict[str, Any]) -> Any:
        return recursing(request)

    def exits(request: dict[str, Any]) -> Any:
        sys.exit(0)

    def base(request: dict[str, Any]) -> Any:
        raise BaseException("base")

    def ends_process(request: dict[str, Any]) -> Any:
        os._exit(0)

    def hangs(request: dict[str, Any]) -> Any:
        time.sleep(60)

    def garbage(request: dict[str, Any]) -> Any:
        return random.choice([None, [], "x", {"valid": _Hostile()}, {"messages": [1, None]}])

    return {
        "mutating": mutating,
        "hostile-eq": hostile_eq,
        "recursing": recursing,
        "exits": exits,
        "base-exception": base,
        "ends-process": ends_process,
        "hangs": hangs,
        "garbage": garbage,
    }


def soak_adapters(soak: Soak) -> None:
    """A misbehaving adapter over a few cases: the scorecard is whole, and the next adapter
    (harmony-grammar) is scored on the same cases exactly as before."""
    name, adapter = soak.rng.choice(sorted(_adapter_misbehaviours().items()))
    chosen = soak.rng.sample(CASES, 6)
    # In-process runs have no timeout and share this process: only where that is survivable.
    isolate = name in ("ends-process", "hangs") or soak.rng.random() < 0.5

    def passed() -> int:
        good = harmony_grammar_adapter("text")
        return run_suite(good, chosen, implementation="hg", isolate=False).count("passed")

    def run() -> None:
        before = passed()
        card = run_suite(adapter, chosen, implementation=name, timeout=0.5, isolate=isolate)
        if len(card.results) != len(chosen):
            raise AssertionError(f"{name}: {len(card.results)} of {len(chosen)} cases scored")
        if passed() != before:
            raise AssertionError(f"{name}: harmony-grammar scored differently after it")

    soak.check(f"adapter-{name}", len(chosen), run)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--inputs", type=int, default=100_000)
    options.add_argument("--seed", type=int, default=14)
    options.add_argument("--subprocesses", type=int, default=60)
    options.add_argument("--datasets", type=int, default=40, help="hostile dataset directories")
    args = options.parse_args()
    soak = Soak(args.seed)
    began = time.perf_counter()
    weights = [
        ("text", 0.33),
        ("ids", 0.2),
        ("stream", 0.17),
        ("arguments", 0.12),
        ("render", 0.1),
        ("cli", 0.06),
        ("jsonl", 0.02),
        ("schema-text", 0.06),  # issue 27 from here: own functions, below the Soak class
        ("tool-names", 0.03),
        ("bombs", 0.002),
        ("adapters", 0.002),
    ]
    issue_27 = {
        "schema-text": soak_schema_text,
        "tool-names": soak_tool_names,
        "bombs": soak_schema_bombs,
        "adapters": soak_adapters,
    }
    warm_up_entry_points()  # one-time loads (vocabularies, tokenizer info) are no input's time
    with tempfile.TemporaryDirectory(prefix="hg-soak-") as tmp:
        folder = Path(tmp)
        for _ in range(args.subprocesses):
            soak.subprocess_run(folder)
        for _ in range(12):
            soak.big()
        for _ in range(args.datasets):
            soak.pieces(folder)
        while (
            sum(soak.tried.values()) - soak.tried["jsonl-run"] - soak.tried["pieces-run"]
            < args.inputs
        ):
            kind = soak.rng.choices([k for k, _ in weights], [w for _, w in weights])[0]
            if kind == "cli":
                soak.cli(folder)
            elif kind == "jsonl":
                soak.jsonl(folder, soak.rng.randint(100, 400))
            elif kind in issue_27:
                issue_27[kind](soak)
            else:
                getattr(soak, kind)()
    elapsed = time.perf_counter() - began
    total = sum(n for k, n in soak.tried.items() if k not in ("jsonl-run", "pieces-run"))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inputs tried: {total:,} in {elapsed:.0f} s (seed {args.seed})")
    for kind, count in sorted(soak.tried.items()):
        print(f"  {kind:<11} {count:>8,}")
    print(f"exceptions escaped: {sum(soak.escaped.values())}")
    for what, count in soak.escaped.most_common():
        print(f"  {what}: {count}")
    for example in soak.examples:
        print(f"  e.g. {example.strip()[:300]}")
    print(f"dataset records unaccounted for: {soak.unaccounted}")
    print(f"stream results that differ from parse (by differing codes): {dict(soak.mismatches)}")
    per_mb, size, kind = soak.slowest_per_mb
    print(f"slowest per MB (inputs >= 64 KB): {per_mb:.2f} s/MB ({kind}, {size:,} units)")
    seconds, size, kind = soak.slowest
    print(f"slowest input: {seconds:.2f} s ({kind}, {size:,} units)")
    print(f"peak memory (ru_maxrss): {peak:.0f} MB")


if __name__ == "__main__":
    main()
