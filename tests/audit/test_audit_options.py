"""``AuditOptions.render`` reaches the audit: its drop rule decides which earlier analysis
a host never shows again, as ``prepare``'s does."""

from __future__ import annotations

from harmony_grammar.audit import AuditOptions, audit_batch, audit_record
from harmony_grammar.rendering.options import RenderOptions
from harmony_grammar.training.importers import import_record
from harmony_grammar.training.render import TrainOn, render_training

_CALL = {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}
#: Turn 2 ends at a tool result, so openai-harmony's rule (the last prompt message must be a
#: final answer) drops nothing before turn 3, while vLLM's drops turn 1's analysis.
CHAT = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "thinking": "Greet.", "content": "Hello!"},
    {"role": "user", "content": "Weather in Rome?"},
    {"role": "assistant", "thinking": "Use the tool.", "tool_calls": [_CALL]},
    {"role": "tool", "content": "sunny"},
    {"role": "user", "content": "Thanks"},
    {"role": "assistant", "thinking": "Polite.", "content": "Welcome."},
]
TOOLS = [{"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}]


def test_the_embedded_drop_rule_decides_what_analysis_hosts_never_show() -> None:
    imported = import_record({"messages": CHAT, "tools": TOOLS})
    assert imported.conversation is not None, imported.diagnostics
    # Every generation trained, every analysis kept: what a keep-everything recipe writes.
    example = render_training(imported.conversation, train_on=TrainOn.ALL, auto_drop_analysis=False)
    ids, mask = example.input_ids, example.assistant_masks
    batch = {"input_ids": [ids], "assistant_masks": [mask]}
    findings = {}
    for rule in ("harmony", "every-final"):
        options = AuditOptions(render=RenderOptions(drop_rule=rule))
        audit = audit_record(ids, mask, TrainOn.ALL, options.render)
        assert audit_batch(batch, options)["findings"] == [list(audit.findings)]
        findings[rule] = audit.findings
    assert "analysis-trained-unseen" not in findings["harmony"]
    assert "analysis-trained-unseen" in findings["every-final"]
    assert audit_record(ids, mask, TrainOn.ALL) == audit_record(
        ids, mask, TrainOn.ALL, RenderOptions(drop_rule="harmony")
    )
