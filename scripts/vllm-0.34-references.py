"""Write tests/fixtures/vllm_0_34_references.json: vLLM 0.34's own Harmony prompts for the
generated conversations of tests/support/profile_conversations.py (the ``vllm-0.34`` profile's
reference, checked token by token by tests/rendering/test_profiles.py).

vLLM's rendering code is taken from its wheel (``pip download vllm==0.34.0 --no-deps`` into a
temporary folder; only ``vllm/entrypoints/openai/parser/harmony_utils.py`` is extracted) and
run with oss-harmony 0.0.11 from ``.venv-oss-harmony``, as vLLM 0.34 runs it. The module's
imports that have nothing to do with rendering (vLLM's logger, its exception class, its
settings module with the two settings it reads at their defaults, and the two request types
it only tests with ``isinstance``) are small stand-ins; the request-side steps around it are
vLLM's ``OnlineRenderer`` chat path (renderers/online_renderer.py) and its request
validator's rename of ``reasoning_content`` to ``reasoning`` (chat_completion/protocol.py),
copied below line for line.

Run from the repository root with the main environment active (needs network to PyPI):
``python scripts/vllm-0.34-references.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.support.profile_conversations import vllm_requests  # noqa: E402

VERSION = "0.34.0"
MODULE = "vllm/entrypoints/openai/parser/harmony_utils.py"
OUT = ROOT / "tests" / "fixtures" / "vllm_0_34_references.json"
COUNT = 120

STUBS = {
    "vllm/__init__.py": "",
    "vllm/envs.py": (
        "import os\n"
        "VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS = False\n"
        "def __getattr__(name):\n"
        "    if name == 'VLLM_SYSTEM_START_DATE':\n"
        "        return os.environ.get(name)\n"
        "    raise AttributeError(name)\n"
    ),
    "vllm/exceptions.py": (
        "class VLLMValidationError(ValueError):\n"
        "    def __init__(self, message, parameter=None):\n"
        "        super().__init__(message)\n"
    ),
    "vllm/logger.py": "import logging\ninit_logger = logging.getLogger\n",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/openai/__init__.py": "",
    "vllm/entrypoints/openai/parser/__init__.py": "",
    "vllm/entrypoints/openai/chat_completion/__init__.py": "",
    # Only read with isinstance and attribute access (create_tool_definition).
    "vllm/entrypoints/openai/chat_completion/protocol.py": (
        "from types import SimpleNamespace\n"
        "class ChatCompletionToolsParam:\n"
        "    def __init__(self, tool):\n"
        "        self.type = tool['type']\n"
        "        self.function = SimpleNamespace(name=tool['function']['name'],\n"
        "            description=tool['function'].get('description'),\n"
        "            parameters=tool['function'].get('parameters'))\n"
    ),
    "openai/__init__.py": "",
    "openai/types/__init__.py": "",
    "openai/types/responses/__init__.py": "",
    "openai/types/responses/tool.py": "class Tool: pass\n",
}

DRIVER = '''
import json, os, sys
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionToolsParam
from vllm.entrypoints.openai.parser.harmony_utils import (
    build_harmony_preamble, extract_instructions_from_messages,
    parse_chat_inputs_to_harmony_messages, render_for_completion)

out = []
for request in json.load(sys.stdin):
    body = request["conversation"]
    os.environ["VLLM_SYSTEM_START_DATE"] = request["current_date"]
    # ChatCompletionRequest's validator: reasoning_content is renamed to reasoning.
    chat_messages = []
    for msg in body["messages"]:
        msg = dict(msg)
        reasoning_content = msg.pop("reasoning_content", None)
        if reasoning_content is not None and msg.get("reasoning") is None:
            msg["reasoning"] = reasoning_content
        chat_messages.append(msg)
    # OnlineRenderer's Harmony chat path (should_include_tools, no effort map).
    tools = [ChatCompletionToolsParam(t) for t in body["tools"]] if "tools" in body else None
    instructions, chat_messages = extract_instructions_from_messages(chat_messages)
    messages = build_harmony_preamble(
        instructions=instructions, tools=tools,
        reasoning_effort=body.get("reasoning_effort"), with_custom_tools=True)
    messages.extend(parse_chat_inputs_to_harmony_messages(chat_messages))
    out.append(render_for_completion(messages))
json.dump(out, sys.stdout)
'''


def main() -> None:
    python = ROOT / ".venv-oss-harmony" / "bin" / "python"
    requests = vllm_requests(COUNT)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", tmp,
             f"vllm=={VERSION}"],
            check=True,
        )
        wheel = next(Path(tmp).glob("vllm-*.whl"))
        code = Path(tmp) / "code"
        with zipfile.ZipFile(wheel) as archive:
            archive.extract(MODULE, code)
        for path, text in STUBS.items():
            (code / path).parent.mkdir(parents=True, exist_ok=True)
            (code / path).write_text(text, encoding="utf-8")
        done = subprocess.run(
            [str(python), "-c", DRIVER],
            input=json.dumps(requests),
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"},
            check=True,
        )
    tokens = json.loads(done.stdout)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "source": f"vllm {VERSION} wheel, {MODULE}, with oss-harmony 0.0.11",
        "generator": "scripts/vllm-0.34-references.py",
        "requests": f"tests.support.profile_conversations.vllm_requests({COUNT})",
        "tokens": tokens,
    }
    OUT.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(tokens)} prompts")


if __name__ == "__main__":
    main()
