#!/usr/bin/env bash
# Installs the Debian packages that nmt builds and tests with; does nothing when all are present.
set -euo pipefail
# With --bench, also what tools/bench/ needs (the PyTorch reference, the CTranslate2 comparison).
packages=(build-essential cmake pkg-config libopenblas-dev libsentencepiece-dev libyaml-dev libutf8proc-dev zlib1g-dev check libcld2-dev
          help2man python3 libmicrohttpd-dev curl openmpi-bin libopenmpi-dev)
[ "${1:-}" = "--bench" ] && packages+=(python3-numpy python3-torch python3-yaml sentencepiece time libopenblas0-openmp)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
