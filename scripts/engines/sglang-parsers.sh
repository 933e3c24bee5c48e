#!/usr/bin/env bash
# SGLang's parser modules, without its server: PyPI's sglang 0.5.23 wheel unpacked (no
# dependencies resolved) with the few packages its tool-call parsers, reasoning parsers and
# plugin loader import, into .engines/sglang-parsers/ (a directory for PYTHONPATH, used with
# the project's own environment, which has torch, transformers, pydantic and xgrammar).
# tests/bridges/test_sglang_plugin.py loads the harmony_grammar SGLang plugin through
# SGLang's own loader from it. About 1 GB, most of it triton (imported at the top of
# sglang.srt.utils.common); no GPU is needed to import any of it. A second run finds it
# installed and exits.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.engines/sglang-parsers"
python="${PYTHON:-python3}"
version="0.5.23"

if [ -f "$dest/site/sglang/srt/plugins/__init__.py" ] && [ -f "$dest/version" ] \
    && [ "$(cat "$dest/version")" = "$version" ]; then
  echo "sglang $version parsers already in $dest"
  exit 0
fi
rm -rf "$dest.part"
mkdir -p "$dest.part/wheel"
"$python" -m pip download --quiet --no-deps "sglang==$version" -d "$dest.part/wheel"
"$python" -m zipfile -e "$dest.part"/wheel/sglang-*.whl "$dest.part/site"
"$python" -m pip install --quiet --no-deps --target "$dest.part/site" \
  orjson==3.13.0 partial_json_parser==0.2.1.1.post7 pybase64==1.5.1 msgspec==0.23.0 \
  aiohttp==3.14.5 multidict==7.2.1 yarl==1.25.1 propcache==0.5.4 aiohappyeyeballs==2.7.1 \
  aiosignal==1.4.0 frozenlist==1.8.0 triton==3.9.0
rm -rf "$dest.part/wheel"
echo "$version" > "$dest.part/version"
rm -rf "$dest"
mv "$dest.part" "$dest"
PYTHONPATH="$dest/site" "$python" -c \
  "import sglang.srt.plugins, sglang.srt.function_call.function_call_parser, sglang.srt.parser.reasoning_parser"
echo "sglang $version parsers installed in $dest"
