#!/usr/bin/env bash
# Install SGLang's own gpt-oss parsers (its reasoning parser and GptOssDetector, the code its
# server runs with --reasoning-parser gpt-oss --tool-call-parser gpt-oss) into
# .engines/sglang/, a virtual environment of its own, for the engine matrix
# (scripts/engine_matrix.py, harmony_grammar/conformance/engine_sides/sglang_side.py).
#
# SGLang has no CPU route from the registries (its server needs a GPU), but these two modules
# import without one. The wheel goes in without its dependencies (--no-deps: the full set is
# the GPU server's), then exactly the packages that importing
# sglang.srt.parser.reasoning_parser and sglang.srt.function_call.function_call_parser
# needs, found by importing them until nothing was missing (transformers and xgrammar at the
# versions sglang pins). torch is among them (sglang's utility modules import it at the top);
# PyPI's torch is the CUDA build, a large download (about 5 GB installed; 20 minutes on a
# loaded 2-core machine) that runs on CPU. A second run finds it installed and exits.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.engines/sglang"
version="0.5.23"
check="import sglang.srt.parser.reasoning_parser, sglang.srt.function_call.function_call_parser"

if [ -x "$dest/bin/python" ] && "$dest/bin/python" -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('sglang') != '$version')" 2>/dev/null \
    && "$dest/bin/python" -c "$check" 2>/dev/null; then
  echo "sglang $version parsers already in $dest"
  exit 0
fi

python3 -m venv "$dest"
"$dest/bin/python" -m pip install --quiet --upgrade pip
"$dest/bin/python" -m pip install --quiet --no-deps "sglang==$version"
"$dest/bin/python" -m pip install --quiet numpy orjson psutil pybase64 requests packaging \
  pillow starlette msgspec pydantic pyzmq tqdm ipython aiohttp openai partial_json_parser \
  "transformers==5.19.0" "xgrammar==0.2.7" torch
"$dest/bin/python" -c "$check"
echo "sglang $version parsers installed in $dest"
