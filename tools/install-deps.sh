#!/usr/bin/env bash
# Installs the Debian packages that nmt builds and tests with; does nothing when all are present.
set -euo pipefail
# With --bench, also what tools/bench/ needs (the PyTorch reference, the CTranslate2 comparison, wrk for
# the server under load); with --ct2, that and what tools/bench/build_ct2.sh builds CTranslate2 with.
packages=(build-essential cmake pkg-config libopenblas-dev libsentencepiece-dev libyaml-dev libutf8proc-dev zlib1g-dev check libcld2-dev
          help2man python3 libmicrohttpd-dev curl openmpi-bin libopenmpi-dev)
case ${1:-} in --bench | --ct2) packages+=(python3-numpy python3-torch python3-yaml sentencepiece time libopenblas0-openmp wrk) ;; esac
[ "${1:-}" = "--ct2" ] && packages+=(git libdnnl-dev python3-pybind11 python3-venv)
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
