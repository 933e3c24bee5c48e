"""Real gpt-oss output as engines deliver it: how much of what the model meant is recovered.

Corpus: ``../shared/data/wild-gptoss/dev.jsonl`` (when present) plus
``tests/fixtures/wild/collected.jsonl``; loading, scoring and deviation kinds come from
``tests/support/wild_corpus.py``, the same code the corpus tests use. Three readers, one run:

* **parse**: ``parse(text, start=mode, strict=False)``, scored with ``wild_corpus.match``:
  ``exact`` = every intended message recovered with the same role (author), channel,
  recipient, content type (ignoring case) and content, in order, nothing extra (a null in
  ``intended`` means "cannot be told" and matches anything); ``partial`` = some but not all;
  ``failed`` = none, or an exception.
* **to_chat**: ``to_chat_completion(text, strict=False)``, completion records only (a
  conversation is no response). The response has three parts, each *right* when it equals
  what the intended messages give under docs/rendering.md's mapping:
  ``content`` = the non-empty contents of final messages and of commentary messages without
  a recipient, joined by ``\\n`` (None when there are none); ``reasoning_content`` = the
  non-empty contents of analysis messages and of calls to non-``functions.`` recipients, in
  order, joined the same way; ``tool_calls`` = the ``(name, arguments)`` of every
  ``functions.*`` call, in order. A part any of whose intended messages has a null content
  or channel cannot be told and counts as right; a null call content matches any arguments.
  ``exact`` = all three right, ``partial`` = one or two, ``failed`` = none, or
  ``ChatCompletionError`` (the parser reported an error it could not repair).
* **openai-harmony**: ``parse_messages_from_completion_tokens(tokens, role=Role.ASSISTANT,
  strict=False)`` for completions, without ``role`` for conversations, on
  ``encode(text, allowed_special="all")``; scored like parse; an exception is ``failed``.

Rows are the deviation kinds of ``wild_corpus.classify`` (each record counted under its
hardest deviation), then totals per file. Below the table, the issue's zero targets:
analysis text in ``content``, calls lost without an error, and ordinary answers
(``tests/fixtures/wild/prose.jsonl``) that the lenient parser turned into anything but one
message holding the whole text.

Run: ``python benchmarks/bench_wild.py`` (offline; about a second).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

# The checkout first: tests/ (a package) holds the corpus helpers, and the harmony_grammar
# measured is the one beside this file, not an installed copy.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import openai_harmony_encoding

from harmony_grammar import parse, to_chat_completion
from harmony_grammar.rendering.chat import ChatCompletionError
from tests.support.wild_corpus import KINDS, classify, load_records, match

PROSE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "wild" / "prose.jsonl"
FUNCTIONS = "functions."


def _start(record: Mapping[str, Any]) -> str:
    return "completion" if record["mode"] == "completion" else "conversation"


# -- parse ----------------------------------------------------------------------------------


def grade_parse(record: Mapping[str, Any]) -> str:
    try:
        result = parse(record["text"], start=_start(record), strict=False)
    except Exception:
        return "failed"
    return match(record["intended"], result.messages)


# -- openai-harmony -------------------------------------------------------------------------


def _oh_reading(message: Any) -> dict[str, Any]:
    role = message.author.role.value
    if role == "tool" and message.author.name:
        role = message.author.name  # a tool's reply: the author as written
    texts = [getattr(part, "text", None) for part in message.content]
    return {
        "role": role,
        "channel": message.channel,
        "recipient": message.recipient,
        "content_type": message.content_type,
        "content": "".join(texts) if all(isinstance(t, str) for t in texts) else None,
    }


def harmony_grader(encoding: Any) -> Callable[[Mapping[str, Any]], str]:
    import openai_harmony

    def grade(record: Mapping[str, Any]) -> str:
        try:
            tokens = encoding.encode(record["text"], allowed_special="all")
            if record["mode"] == "completion":
                messages = encoding.parse_messages_from_completion_tokens(
                    tokens, role=openai_harmony.Role.ASSISTANT, strict=False
                )
            else:
                messages = encoding.parse_messages_from_completion_tokens(tokens, strict=False)
        except Exception:
            return "failed"
        return match(record["intended"], [_oh_reading(m) for m in messages])

    return grade


# -- to_chat_completion ---------------------------------------------------------------------


def _joined(texts: Sequence[str]) -> str | None:
    kept = [t for t in texts if t]
    return "\n".join(kept) if kept else None


def expected_response(intended: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What each response part should be; ``None`` marks a part that cannot be told."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: list[tuple[str, str | None]] = []
    unknown: set[str] = set()
    for want in intended:
        recipient = want["recipient"]
        if recipient is not None and recipient.startswith(FUNCTIONS):
            calls.append((recipient[len(FUNCTIONS) :], want["content"]))
            continue
        part, texts = (
            ("reasoning", reasoning)
            if recipient is not None or want["channel"] == "analysis"
            else ("content", content)
        )
        if want["content"] is None or want["channel"] is None:
            unknown.add(part)
        else:
            texts.append(want["content"])
    return {
        "content": ... if "content" in unknown else _joined(content),
        "reasoning": ... if "reasoning" in unknown else _joined(reasoning),
        "calls": calls,
    }


def _calls_right(want: list[tuple[str, str | None]], got: list[dict[str, Any]]) -> bool:
    if len(want) != len(got):
        return False
    return all(
        call["function"]["name"] == name and args in (None, call["function"]["arguments"])
        for (name, args), call in zip(want, got, strict=True)
    )


def grade_chat(record: Mapping[str, Any], tally: Counter[str]) -> str | None:
    """The record's grade (None for a conversation); ``tally`` counts the zero targets."""
    if record["mode"] != "completion":
        return None
    want = expected_response(record["intended"])
    try:
        message = to_chat_completion(record["text"], strict=False)["message"]
    except ChatCompletionError:
        return "failed"
    content = message["content"] or ""
    for intended in record["intended"]:
        thought = intended["content"]
        if intended["channel"] == "analysis" and thought and len(thought) >= 20:
            tally["analysis in content"] += thought in content
    tally["calls lost without an error"] += max(0, len(want["calls"]) - len(message["tool_calls"]))
    right = [
        want["content"] is ... or message["content"] == want["content"],
        want["reasoning"] is ... or message["reasoning_content"] == want["reasoning"],
        _calls_right(want["calls"], message["tool_calls"]),
    ]
    return "exact" if all(right) else "partial" if any(right) else "failed"


# -- prose ----------------------------------------------------------------------------------


def prose_recovered() -> tuple[int, int]:
    """(ordinary answers read as anything but one message of their whole text, answers)."""
    answers = load_records([PROSE])
    wrong = 0
    for answer in answers:
        messages = parse(answer["text"], start="completion", strict=False).messages
        wrong += not (len(messages) == 1 and messages[0].content == answer["text"])
    return wrong, len(answers)


# -- table ----------------------------------------------------------------------------------


def _cell(counts: Counter[str]) -> str:
    total = sum(counts.values())
    if not total:
        return "—"
    return (
        f"{counts['exact']}/{counts['partial']}/{counts['failed']} ({counts['exact'] / total:.0%})"
    )


def main() -> None:
    records = load_records()
    grade_harmony = harmony_grader(openai_harmony_encoding())
    tally: Counter[str] = Counter()
    systems = ("parse", "to_chat", "openai-harmony")
    rows: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    sizes: Counter[str] = Counter()
    for record in records:
        grades = {
            "parse": grade_parse(record),
            "to_chat": grade_chat(record, tally),
            "openai-harmony": grade_harmony(record),
        }
        keys = (classify(record), f"all in {record['file']}", "all")
        for key in keys:
            sizes[key] += 1
            for system, grade in grades.items():
                if grade is not None:
                    rows[key][system][grade] += 1
    print(f"{len(records)} records; cells: exact/partial/failed (exact share)\n")
    print(
        f"| {'deviation kind':<24} | {'n':>3} | " + " | ".join(f"{s:<18}" for s in systems) + " |"
    )
    print(f"|{'-' * 26}|{'-' * 5}|" + "|".join("-" * 20 for _ in systems) + "|")
    files = sorted({f"all in {r['file']}" for r in records})
    for key in [k for k in KINDS if sizes[k]] + files + ["all"]:
        cells = " | ".join(f"{_cell(rows[key][s]):<18}" for s in systems)
        print(f"| {key:<24} | {sizes[key]:>3} | {cells} |")
    wrong, answers = prose_recovered()
    print("\nto_chat covers completion records only (a conversation is no response).")
    print(f"analysis text in content: {tally['analysis in content']}")
    print(f"calls lost without an error: {tally['calls lost without an error']}")
    print(f"ordinary answers read as structure: {wrong} of {answers}")


if __name__ == "__main__":
    main()
