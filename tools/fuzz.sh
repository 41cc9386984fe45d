#!/usr/bin/env bash
# Fuzzes nmt's readers with libFuzzer under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   tools/fuzz.sh SECONDS [TARGET...]
#
# Builds every harness tests/fuzz/fuzz_<target>.c (or only the TARGETs named: safetensors, utf8, ...)
# with clang -fsanitize=fuzzer,address,undefined into build-fuzz/, then runs each in turn for SECONDS,
# one process at a time at low priority, starting from its seed corpus tests/fuzz/corpus/<target>/
# (never modified) plus what earlier runs found (build-fuzz/corpus/<target>/, kept between runs), with
# the dictionary tests/fuzz/<target>.dict when there is one. A crash, leak, sanitizer report or violated
# property stops that target and leaves the input in build-fuzz/artifacts/<target>/; the script then
# exits 1 after the other targets ran. To replay one input: build-fuzz/bin/fuzz_<target> FILE.
#
# Needs clang and its libFuzzer runtime; installs them (Debian: clang, libclang-rt-<version>-dev) when
# missing. CI does not need them: there, each harness replays its seed corpus as an ordinary unit test.
set -euo pipefail
if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: tools/fuzz.sh SECONDS [TARGET...]" >&2
  exit 2
fi
seconds="$1"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$probe/probe.c"
if ! clang -fsanitize=fuzzer "$probe/probe.c" -o "$probe/probe" 2>/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  command -v clang >/dev/null || $sudo apt-get install -y -qq --no-install-recommends clang >/dev/null
  version="$(clang -dumpversion | cut -d. -f1)"
  echo "fuzz: installing libclang-rt-$version-dev (libFuzzer)" >&2
  $sudo apt-get install -y -qq --no-install-recommends "libclang-rt-$version-dev" >/dev/null
  clang -fsanitize=fuzzer "$probe/probe.c" -o "$probe/probe"
fi

if [ $# -eq 0 ]; then
  set -- $(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||')
fi
for target in "$@"; do
  [ -f "tests/fuzz/fuzz_$target.c" ] || { echo "fuzz: no harness tests/fuzz/fuzz_$target.c" >&2; exit 2; }
done

# -O1 keeps the fuzzer fast while the sanitizers still see everything; the library is instrumented
# for coverage (fuzzer-no-link), the harness is linked with libFuzzer's main. NMT_NATIVE because clang
# refuses kernels.c's 16-float vectors in the non-AVX-512 clones (gcc accepts them): this local build
# then needs a CPU with AVX-512.
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DNMT_SANITIZE=ON -DNMT_LIBFUZZER=ON -DNMT_NATIVE=ON \
  -DCMAKE_C_FLAGS="-O1 -fsanitize=fuzzer-no-link" -DCMAKE_CXX_FLAGS="-O1 -fsanitize=fuzzer-no-link" >/dev/null
nice -n 10 cmake --build build-fuzz -j 2 --target $(printf 'fuzz_%s ' "$@") >/dev/null

failed=()
for target in "$@"; do
  mkdir -p "build-fuzz/corpus/$target" "build-fuzz/artifacts/$target"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="build-fuzz/artifacts/$target/")
  [ -f "tests/fuzz/$target.dict" ] && args+=(-dict="tests/fuzz/$target.dict")
  echo "fuzz: $target for ${seconds}s" >&2
  log="build-fuzz/fuzz-$target.log"
  if nice -n 10 "build-fuzz/bin/fuzz_$target" "${args[@]}" "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target" \
       >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" | sed "s/^/fuzz: $target: /" >&2 || true
  else
    failed+=("$target")
    tail -40 "$log" >&2
    echo "fuzz: $target FAILED; input kept in build-fuzz/artifacts/$target/, log in $log" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no failures" >&2
