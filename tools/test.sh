#!/usr/bin/env bash
# Builds nmt and runs every test (unit + end-to-end), the unit tests again on OpenBLAS's sgemm (what
# a CPU without AVX-512 runs), then rebuilds with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs the unit tests again. Exits non-zero on any failure.
#   tools/test.sh            everything
#   NMT_SKIP_ASAN=1 tools/test.sh   skip the sanitizer pass (quicker while developing)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/install-deps.sh
jobs="$(nproc)"

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNMT_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")
(cd build && NMT_GEMM=openblas ctest --output-on-failure -j "$jobs" -L unit)

if [ "${NMT_SKIP_ASAN:-0}" != 1 ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNMT_WERROR=ON -DNMT_SANITIZE=ON >/dev/null
  cmake --build build-asan -j "$jobs"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs" -L unit)
fi
