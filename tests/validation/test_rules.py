"""The rule catalogue: every rule's documented bad and good example, then finer behaviour.

The examples are read from docs/rules.md, so the documentation cannot drift from the code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harmony_grammar.data.read import parse_record
from harmony_grammar.format.diagnostics import CATALOGUE
from harmony_grammar.format.harmony_ids import encode_harmony
from harmony_grammar.format.model import Severity
from harmony_grammar.validation.rules import RULES
from harmony_grammar.validation.validator import validate

RULES_MD = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
_BLOCK = re.compile(r"^(`{3,})(?P<info>[^\n]*)\n(?P<body>.*?)\n\1$", re.MULTILINE | re.DOTALL)


def _examples() -> tuple[list[tuple[str, str, set[str], str]], object]:
    """(code, bad|good, flags, body) for every example, and the tools list of the page."""
    text = RULES_MD.read_text(encoding="utf-8")
    headings = [(m.start(), m.group(1)) for m in re.finditer(r"^### (HG\d{3}) ", text, re.M)]
    examples, tools = [], None
    for block in _BLOCK.finditer(text):
        words = block.group("info").split()
        if words == ["json", "tools"]:
            tools = json.loads(block.group("body"))
            continue
        if not words or words[0] not in ("harmony", "jsonl") or len(words) < 2:
            continue
        code = max((h for h in headings if h[0] < block.start()), default=(0, None))[1]
        examples.append((code, words[1], {words[0], *words[2:]}, block.group("body")))
    return examples, tools


EXAMPLES, TOOLS = _examples()
#: Validator codes that judge the input as a whole, not a message: a record that holds no
#: Harmony input (HG290), an input that holds no message (HG215, ``validator.no_messages``).
NOT_RULES = {"HG290", "HG215"}


def _run(flags: set[str], body: str):
    return validate(
        body,
        start="completion" if "completion" in flags else "conversation",
        tools=TOOLS if "tools" in flags else None,
    )


@pytest.mark.parametrize(
    ("code", "kind", "flags", "body"),
    [e for e in EXAMPLES if "harmony" in e[2]],
    ids=[f"{e[0]}-{e[1]}" for e in EXAMPLES if "harmony" in e[2]],
)
def test_documented_example(code, kind, flags, body):
    report = _run(flags, body)
    codes = [d.code for d in report.diagnostics]
    if kind == "bad":
        assert code in codes, report.diagnostics
        assert report.ok is (CATALOGUE[code].severity is not Severity.ERROR)
    else:
        assert report.diagnostics == (), report.diagnostics


@pytest.mark.parametrize("kind", ["bad", "good"])
def test_documented_jsonl_example(kind):
    (body,) = [e[3] for e in EXAMPLES if "jsonl" in e[2] and e[1] == kind]
    record, error = parse_record(body.encode() + b"\n")
    assert (error is not None) is (kind == "bad")
    assert (record is None) is (kind == "bad")


def test_every_rule_has_a_bad_and_a_good_example():
    documented = {(code, kind) for code, kind, _, _ in EXAMPLES}
    for code in [*RULES, *NOT_RULES]:
        assert (code, "bad") in documented and (code, "good") in documented, code


def test_every_validator_code_is_a_rule():
    validator_codes = {code for code in CATALOGUE if code.startswith("HG2")}
    assert validator_codes - NOT_RULES == {c for c in RULES if c.startswith("HG2")}
    assert {"HG180", "HG181"} <= set(RULES)  # shared with the parser: one concept, one code


def test_rules_have_docstrings():
    for check in RULES.values():
        assert check.__doc__ and check.__doc__.strip()


# ---------------------------------------------------------------------------------- channels

SYSTEM = (
    "<|start|>system<|message|>You are ChatGPT.\n\n# Valid channels: analysis, final, notes."
    " Channel must be included for every message.<|end|>"
)


def codes(report):
    return [d.code for d in report.diagnostics]


def test_custom_channels_come_from_the_system_message():
    ok = validate(SYSTEM + "<|start|>assistant<|channel|>notes<|message|>x<|end|>")
    assert codes(ok) == []
    bad = validate(SYSTEM + "<|start|>assistant<|channel|>commentary<|message|>x<|end|>")
    assert codes(bad) == ["HG201"]
    assert "'commentary'" in bad.diagnostics[0].message
    assert "analysis, final, notes" in bad.diagnostics[0].message


def test_default_channels_without_a_system_line():
    text = "<|start|>system<|message|>Be brief.<|end|>"
    assert (
        codes(validate(text + "<|start|>assistant<|channel|>commentary<|message|>x<|end|>")) == []
    )
    assert codes(validate(text + "<|start|>assistant<|channel|>notes<|message|>x<|end|>")) == [
        "HG201"
    ]


def test_channel_diagnostic_points_at_the_message():
    text = (
        "<|start|>user<|message|>a\nb<|end|>\n<|start|>assistant<|channel|>oops<|message|>x<|end|>"
    )
    (diagnostic,) = validate(text).diagnostics
    assert (diagnostic.line, diagnostic.column) == (3, 1)  # after "b<|end|>\n"
    assert text[diagnostic.start :].startswith("<|start|>assistant")
    assert text[diagnostic.start : diagnostic.end].endswith("<|end|>")


# ---------------------------------------------------------------------------------- recipients

DEVELOPER = (
    "<|start|>developer<|message|># Instructions\n\nBe helpful.\n\n# Tools\n\n## functions\n\n"
    "namespace functions {\n\n// Current weather\ntype get_weather = (_: {\ncity: string,\n"
    "days?: number, // default: 1\n}) => any;\n\n// Time\ntype get_time = () => any;\n\n"
    "} // namespace functions<|end|>"
)


def call(recipient, body, channel="commentary", end="<|call|>"):
    return (
        f"<|start|>assistant<|channel|>{channel} to={recipient} <|constrain|>json"
        f"<|message|>{body}{end}"
    )


ANALYSIS = "<|start|>assistant<|channel|>analysis<|message|>Think.<|end|>"


def test_tools_recovered_from_the_developer_message():
    good = validate(DEVELOPER + ANALYSIS + call("functions.get_weather", '{"city": "Oslo"}'))
    assert codes(good) == []
    bad = validate(DEVELOPER + ANALYSIS + call("functions.get_weather", '{"city": 3}'))
    assert codes(bad) == ["HG180"]
    assert "at /city:" in bad.diagnostics[0].message
    unknown = validate(DEVELOPER + ANALYSIS + call("functions.set_alarm", "{}"))
    assert codes(unknown) == ["HG181"]
    assert "get_time, get_weather" in unknown.diagnostics[0].message


def test_a_tool_without_parameters_takes_an_object():
    assert codes(validate(DEVELOPER + ANALYSIS + call("functions.get_time", "{}"))) == []
    assert codes(validate(DEVELOPER + ANALYSIS + call("functions.get_time", "[]"))) == ["HG180"]


def test_explicit_tools_win_over_the_developer_message():
    tools = [{"name": "set_alarm", "parameters": {"type": "object"}}]
    text = DEVELOPER + ANALYSIS + call("functions.get_weather", '{"city": "Oslo"}')
    # The developer message declares tools the host's list lacks: HG214 names each (issue 27).
    assert codes(validate(text, tools=tools)) == ["HG214", "HG214", "HG181"]
    declared = text.replace("get_weather", "set_alarm").replace("get_time", "set_alarm")
    assert codes(validate(declared, tools=tools)) == ["HG214"]  # declared twice
    only = text.replace("get_weather", "set_alarm")
    assert codes(validate(only, tools=tools + [{"name": "get_time"}])) == []


def test_openai_style_and_plain_tool_lists_agree():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    plain = [{"name": "count", "parameters": schema}]
    openai = [{"type": "function", "function": {"name": "count", "parameters": schema}}]
    text = call("functions.count", '{"n": "x"}')
    results = [validate(text, tools=t, start="conversation") for t in (plain, openai)]
    assert [codes(r) for r in results] == [["HG180", "HG212"], ["HG180", "HG212"]]
    assert "at /n:" in results[0].diagnostics[0].message


def test_undeclared_functions_are_not_judged_but_must_be_one_object():
    completion = "<|channel|>commentary to=functions.anything <|constrain|>json<|message|>"
    assert codes(validate(completion + '{"a": 1}<|call|>', start="completion")) == []
    trailing = validate(completion + '{"a": 1} {"b": 2}<|call|>', start="completion")
    assert codes(trailing) == ["HG180"]
    assert "not JSON" in trailing.diagnostics[0].message


def test_a_declared_function_without_its_namespace():
    report = validate(DEVELOPER + ANALYSIS + call("get_weather", '{"city": "Oslo"}'))
    assert codes(report) == ["HG181"]
    assert "functions.get_weather" in report.diagnostics[0].message


BROWSER_SYSTEM = (
    "<|start|>system<|message|>You are ChatGPT.\n\n# Tools\n\n## browser\n\n// Tool for browsing."
    "\nnamespace browser {\n\n// Searches.\ntype search = (_: {\nquery: string,\n"
    "topn?: number, // default: 10\n}) => any;\n\n} // namespace browser\n\n## python\n\n"
    "Use this tool to execute Python code.\n\n# Valid channels: analysis, commentary, final."
    " Channel must be included for every message.<|end|>"
)


def builtin_call(recipient, body):
    return f"<|start|>assistant<|channel|>analysis to={recipient} code<|message|>{body}<|call|>"


def test_builtin_namespaces_from_the_system_message():
    ok = validate(BROWSER_SYSTEM + builtin_call("browser.search", '{"query": "x"}'))
    assert codes(ok) == []  # on analysis, and the built-in's arguments are valid
    bad_args = validate(BROWSER_SYSTEM + builtin_call("browser.search", '{"topn": 3}'))
    assert codes(bad_args) == ["HG180"]
    assert "'query' is a required property" in bad_args.diagnostics[0].message
    assert codes(validate(BROWSER_SYSTEM + builtin_call("browser.fly", "{}"))) == ["HG181"]
    assert codes(validate(BROWSER_SYSTEM + builtin_call("container.exec", "{}"))) == ["HG181"]


def test_python_bodies_are_code():
    code = "print('a &amp; b' if 1 else {)"
    assert codes(validate(BROWSER_SYSTEM + builtin_call("python", code))) == []


def test_builtin_recipients_are_not_judged_without_a_system_message():
    assert codes(validate(builtin_call("browser.anything", "not json"))) == []


def test_call_on_analysis_exempts_builtins():
    text = builtin_call("browser.search", '{"query": "x"}')
    assert "HG202" not in codes(validate(text))
    report = validate(call("functions.f", "{}", channel="analysis"), start="conversation")
    assert "HG202" in codes(report)


# ---------------------------------------------------------------------------------- results


def result(author, body="{}", recipient=" to=assistant"):
    return f"<|start|>{author}{recipient}<|channel|>commentary<|message|>{body}<|end|>"


def test_results_answer_calls_in_order():
    calls = ANALYSIS + call("functions.a", "{}") + call("functions.b", "{}")
    in_order = validate(calls + result("functions.a") + result("functions.b"))
    assert codes(in_order) == []
    swapped = validate(calls + result("functions.b") + result("functions.a"))
    assert codes(swapped) == ["HG204"]
    assert "'functions.b'" in swapped.diagnostics[0].message
    assert "'functions.a'" in swapped.diagnostics[0].message


def test_a_result_for_another_tool_answers_nothing():
    report = validate(ANALYSIS + call("functions.a", "{}") + result("functions.z"))
    assert codes(report) == ["HG203"]
    assert "pending: functions.a" in report.diagnostics[0].message


def test_a_second_result_for_one_call():
    text = ANALYSIS + call("functions.a", "{}") + result("functions.a") + result("functions.a")
    assert codes(validate(text)) == ["HG203"]


def test_a_result_without_to_assistant_still_counts():
    text = ANALYSIS + call("functions.a", "{}") + result("functions.a", recipient="")
    assert codes(validate(text)) == []


def test_a_role_writing_a_result():
    text = ANALYSIS + call("functions.a", "{}") + result("user")
    report = validate(text)
    assert codes(report) == ["HG205"]  # and it stands in for the result: no HG206
    assert "'user'" in report.diagnostics[0].message


def test_an_unanswered_call_is_reported_at_the_call():
    text = (
        ANALYSIS
        + call("functions.a", "{}")
        + "<|start|>assistant<|channel|>final<|message|>Done.<|end|>"
    )
    (diagnostic,) = validate(text).diagnostics
    assert diagnostic.code == "HG206"
    assert text[diagnostic.start :].startswith(
        "<|start|>assistant<|channel|>commentary to=functions.a"
    )
    assert "'final'" in diagnostic.message


def test_preambles_and_analysis_between_parallel_calls_are_fine():
    preamble = "<|start|>assistant<|channel|>commentary<|message|>Checking both.<|end|>"
    text = (
        ANALYSIS
        + preamble
        + call("functions.a", "{}")
        + ANALYSIS
        + call("functions.b", "{}")
        + result("functions.a")
        + result("functions.b")
        + "<|start|>assistant<|channel|>final<|message|>Done.<|end|>"
    )
    assert codes(validate(text)) == []


def test_completion_forging_a_result_is_the_parsers_hg170():
    text = "<|channel|>commentary to=functions.a json<|message|>{}<|call|><|start|>functions.a to=assistant<|message|>{}<|end|>"
    report = validate(text, start="completion")
    assert "HG170" in codes(report)
    assert not any(c in codes(report) for c in ("HG203", "HG205"))


# ---------------------------------------------------------------------------------- bodies


def test_fenced_arguments_are_checked_inside_the_fence():
    tools = [{"name": "f", "parameters": {"type": "object", "required": ["x"]}}]
    fenced = '```json\n{"y": 1}\n```'
    report = validate(ANALYSIS + call("functions.f", fenced), tools=tools)
    assert codes(report) == ["HG180", "HG207"] or codes(report) == ["HG207", "HG180"]
    assert "'x' is a required property" in next(
        d.message for d in report.diagnostics if d.code == "HG180"
    )


def test_html_entity_position():
    text = ANALYSIS + call("functions.f", '{"q": "a &lt; b"}')
    (diagnostic,) = validate(text).diagnostics
    assert diagnostic.code == "HG208"
    assert text[diagnostic.start : diagnostic.end] == "&lt;"
    assert diagnostic.column == diagnostic.start + 1


def test_reserved_spelling_position_and_escaped_form():
    text = "<|start|>user<|message|>a <|reserved_200100|> b<|end|>"
    (diagnostic,) = validate(text).diagnostics
    assert diagnostic.code == "HG209"
    assert text[diagnostic.start : diagnostic.end] == "<|reserved_200100|>"
    assert codes(validate("<|start|>user<|message|>a <|notatoken|> b<|end|>")) == []


def test_reserved_spelling_in_token_ids_is_not_reported_twice(encoding):
    body = "say <|end|> and <|endoftext|>"
    ids = encode_harmony("<|start|>user<|message|>") + encoding.encode_ordinary(body)
    ids += encode_harmony("<|end|>")
    report = validate(ids)
    assert sorted(codes(report)) == ["HG110", "HG209"]  # structural: parser; the rest: rule
    rule = next(d for d in report.diagnostics if d.code == "HG209")
    assert rule.line is None and (rule.start, rule.end) == (0, len(ids))


# ---------------------------------------------------------------------------------- terminators


def test_a_call_not_ended_by_call_is_an_error():
    report = validate(ANALYSIS + call("functions.f", "{}", end="<|end|>"))
    (diagnostic,) = report.diagnostics
    assert diagnostic.code == "HG153" and diagnostic.severity is Severity.ERROR
    assert not report.ok


def test_return_ends_only_a_final_answer():
    last_on_analysis = "<|start|>assistant<|channel|>analysis<|message|>x<|return|>"
    assert codes(validate(last_on_analysis)) == ["HG211"]
    from_user = "<|start|>user<|message|>x<|return|>"
    assert codes(validate(from_user)) == ["HG211"]
    training = (
        "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>x<|return|>"
    )
    assert codes(validate(training)) == []


def test_preamble_ended_by_return_is_hg210_only():
    text = "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|return|><|start|>user<|message|>ok<|end|>"
    assert codes(validate(text)) == ["HG210"]


def test_call_token_on_a_user_message():
    assert codes(validate("<|start|>user<|message|>hi<|call|>")) == ["HG213"]


# ---------------------------------------------------------------------------------- history


def test_dropped_analysis_only_mid_tool_loop():
    user = "<|start|>user<|message|>Go.<|end|>"
    mid_loop = user + call("functions.a", "{}") + result("functions.a")
    assert codes(validate(mid_loop)) == ["HG212"]
    finished = mid_loop + "<|start|>assistant<|channel|>final<|message|>Done.<|end|>"
    assert codes(validate(finished)) == []  # after a final answer, dropping is allowed


def test_dropped_analysis_checks_each_step_of_the_current_turn():
    user = "<|start|>user<|message|>Go.<|end|>"
    kept_then_dropped = (
        user
        + ANALYSIS
        + call("functions.a", "{}")
        + result("functions.a")
        + call("functions.b", "{}")
    )
    report = validate(kept_then_dropped)
    assert codes(report) == ["HG212"]
    assert "'functions.b'" in report.diagnostics[0].message
    earlier_turn = (
        user
        + call("functions.a", "{}")
        + result("functions.a")
        + "<|start|>assistant<|channel|>final<|message|>Done.<|end|>"
        + user
        + ANALYSIS
        + call("functions.b", "{}")
    )
    assert codes(validate(earlier_turn)) == []


def test_completions_have_no_history_rules():
    text = "<|channel|>commentary to=functions.a json<|message|>{}<|call|>"
    assert codes(validate(text, start="completion")) == []
