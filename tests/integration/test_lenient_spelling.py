"""One spelling of leniency: ``lenient`` (API) and ``--lenient`` (CLI), everywhere.

``strict``, the former spelling (its negation), still works for one release: every entry
point that took it reads it as ``lenient=not strict`` and says so with a DeprecationWarning
naming the new keyword; the new spelling never warns. The results of the two spellings are
equal, on any input (a property over the alphabet fuzzer's mixes).
"""

from __future__ import annotations

import dataclasses
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar import (
    ChatCompletionStream,
    InbandScanner,
    ParseOptions,
    ResponsesStream,
    StreamParser,
    parse,
    to_chat_completion,
    to_responses,
    validate,
    validate_batch,
)
from harmony_grammar.cli.main import main
from harmony_grammar.rendering import ChatCompletionError

from ..support.harmony_alphabet import ALPHABET, KINDS, as_text

#: A completion real models write: the header lost ``<|message|>`` (lenient repairs it with a
#: warning; strict reads an error).
BROKEN = "<|channel|>final Hello there<|return|>"
RENAMED = r"\(strict=(True|False)\) is \w+\(lenient=(True|False)\) now"

PIECES = st.lists(
    st.sampled_from(KINDS).flatmap(lambda k: st.tuples(st.just(k), st.sampled_from(ALPHABET[k]))),
    max_size=24,
)


def test_the_spellings_differ_and_the_new_one_never_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lenient = parse(BROKEN, start="completion", lenient=True)
        strict = parse(BROKEN, start="completion")
        assert parse(BROKEN, start="completion", lenient=False) == strict
    assert lenient.ok and lenient.messages[0].content == "Hello there"
    assert not strict.ok and lenient != strict


@pytest.mark.parametrize("strict", [True, False])
def test_parse_and_its_options_take_the_former_spelling_with_a_warning(strict):
    expected = parse(BROKEN, start="completion", lenient=not strict)
    with pytest.warns(DeprecationWarning, match=RENAMED) as caught:
        assert parse(BROKEN, start="completion", strict=strict) == expected
    assert caught[0].filename == __file__  # the warning points at the caller's line
    with pytest.warns(DeprecationWarning, match=r"ParseOptions\(strict="):
        options = ParseOptions(start="completion", strict=strict)
    assert options == ParseOptions(start="completion", lenient=not strict)
    assert parse(BROKEN, options) == expected
    with pytest.warns(DeprecationWarning, match=RENAMED):
        assert options.strict is strict  # the attribute reads too
    with pytest.warns(DeprecationWarning, match=RENAMED):
        replaced = dataclasses.replace(ParseOptions(lenient=strict), strict=strict)
    assert replaced.lenient is (not strict)  # the old keyword wins over the copied field
    with pytest.warns(DeprecationWarning, match=RENAMED):
        assert ParseOptions.of(None, {"strict": strict}).lenient is (not strict)


def test_both_spellings_at_once_are_a_type_error_naming_the_new_one():
    with pytest.raises(TypeError, match="pass lenient only"):
        parse(BROKEN, strict=False, lenient=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unknown ParseOptions option 'lenience'"):
        parse(BROKEN, lenience=True)  # type: ignore[call-arg]


@pytest.mark.parametrize("strict", [True, False])
def test_every_entry_point_reads_strict_as_not_lenient(strict):
    ids_text = BROKEN

    def stream_result(**keywords):
        parser = StreamParser(**keywords)
        parser.feed(ids_text)
        parser.close()
        return parser.result()

    def chat_stream(**keywords):
        stream = ChatCompletionStream(**keywords)
        chunks = stream.feed(ids_text) + stream.close()
        return [c["choices"] for c in chunks], stream.parse_diagnostics()

    def responses_stream(**keywords):
        stream = ResponsesStream(**keywords, ids=lambda prefix: f"{prefix}_1")
        stream.feed(ids_text)
        stream.close()
        response = stream.response()
        return response["status"], response["output"], response.get("diagnostics")

    def chat_or_error(**keywords):
        try:
            return to_chat_completion(ids_text, **keywords)
        except ChatCompletionError as exc:  # strict: the first error, in both spellings
            return str(exc)

    def scanner(**keywords):
        scan = InbandScanner(**keywords)
        return scan.feed(ids_text) + scan.close()

    entry_points = {
        "StreamParser": stream_result,
        "validate": lambda **k: validate(ids_text, start="completion", **k).diagnostics,
        "to_chat_completion": chat_or_error,
        "to_responses": lambda **k: {
            key: value
            for key, value in to_responses(ids_text, ids=lambda p: f"{p}_1", **k).items()
            if key != "created_at"
        },
        "ChatCompletionStream": chat_stream,
        "ResponsesStream": responses_stream,
        "InbandScanner": scanner,
    }
    for name, run in entry_points.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            new = run(lenient=not strict)
        with pytest.warns(DeprecationWarning, match=RENAMED):
            old = run(strict=strict)
        assert old == new, name


def test_strict_to_chat_completion_raises_in_both_spellings():
    with pytest.raises(ChatCompletionError):
        to_chat_completion(BROKEN, lenient=False)
    with pytest.warns(DeprecationWarning, match=RENAMED), pytest.raises(ChatCompletionError):
        to_chat_completion(BROKEN, strict=True)


def test_validate_batch_takes_lenient_and_warns_for_strict():
    batch = {"text": [BROKEN]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = validate_batch(batch, field="text", start="completion", lenient=True)
    with pytest.warns(DeprecationWarning, match=r"validate_batch\(strict=False\)"):
        old = validate_batch(batch, field="text", start="completion", strict=False)
    assert old == new and new["ok"] == [True]
    with pytest.raises(ValueError, match="pass lenient only"):
        validate_batch(batch, field="text", strict=True, lenient=True)


@given(pieces=PIECES, strict=st.booleans(), start=st.sampled_from(["completion", "conversation"]))
def test_the_two_spellings_read_every_input_alike(pieces, strict, start):
    text = as_text(pieces)
    with pytest.warns(DeprecationWarning):
        old = parse(text, start=start, strict=strict)
    assert old == parse(text, start=start, lenient=not strict)


def test_the_cli_says_lenient_and_to_responses_keeps_strict_for_a_release(tmp_path, capsys):
    path = tmp_path / "completion.txt"
    path.write_text(BROKEN, encoding="utf-8")
    assert main(["parse", "--completion", str(path)]) == 1
    assert main(["parse", "--completion", "--lenient", str(path)]) == 0
    capsys.readouterr()
    assert main(["to-responses", str(path)]) == 0  # lenient by default
    lenient = capsys.readouterr().out
    assert main(["to-responses", "--no-lenient", str(path)]) == 1
    strict = capsys.readouterr()
    assert '"failed"' in strict.out and '"failed"' not in lenient
    assert main(["to-responses", "--strict", str(path)]) == 1
    old = capsys.readouterr()
    assert "--strict is --no-lenient now" in old.err
    assert old.out.replace('"created_at"', "") and old.out.count('"failed"') == 1


def test_the_ledger_check_says_lenient_too():
    from harmony_grammar.format import conservation_problems

    result = parse(BROKEN, start="completion", lenient=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert conservation_problems(BROKEN, result, lenient=True) == []
    with pytest.warns(DeprecationWarning, match=r"conservation_problems\(strict=False\)"):
        assert conservation_problems(BROKEN, result, strict=False) == []
