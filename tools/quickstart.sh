#!/usr/bin/env bash
# The first thing to run: installs dependencies, builds nmt and shows it working.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
build/bin/nmt --version
build/bin/nmt help
