#!/usr/bin/env bash
# Load on `nmt serve` with wrk on loopback, against `nmt translate`'s batch throughput on the same
# sentences. Prints one line per connection count (sentences/s, p50/p99 latency, errors) and the
# references: `nmt translate` over the whole file (batch) and one sentence at a time (`nmt bench
# translate --batch-size 1`, the per-sentence time a lone client is compared with).
#   tools/bench/serve_load.sh MODEL_DIR SENTENCES [SECONDS (20)] [CONNECTIONS ("1 8 64 256")] [serve flags...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
nmt="${NMT:-$root/build/bin/nmt}"
model=$1 sentences=$2 seconds=${3:-20} connections=${4:-"1 8 64 256"}
shift $(( $# < 4 ? $# : 4 ))
threads=${THREADS:-2}
command -v wrk >/dev/null || { echo "serve_load: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT

start=$(date +%s.%N)
"$nmt" translate -m "$model" --threads "$threads" -q <"$sentences" >"$tmp/out"
end=$(date +%s.%N)
n=$(grep -c . "$sentences")
awk -v n="$n" -v s="$start" -v e="$end" 'BEGIN { printf "nmt translate (batch 64): %.1f sentences/s (%d sentences, %.1f s wall)\n", n / (e - s), n, e - s }'
"$nmt" bench translate -m "$model" -i "$sentences" --batch-size 1 --threads "$threads" --quiet --json >"$tmp/one.json"
sed -n 's/.*"sentences_per_s": *\([0-9.]*\).*/\1/p' "$tmp/one.json" |
  awk '{ printf "nmt bench translate --batch-size 1: %.1f sentences/s = %.1f ms per sentence\n", $1, 1000 / $1 }'

"$nmt" serve -m "$model" --port 0 --threads "$threads" --quiet --max-queue 100000 "$@" 2>"$tmp/serve.err" &
server=$!
url=""
for _ in $(seq 400); do
  url="$(sed -n 's|^listening on \(http://.*\)$|\1|p' "$tmp/serve.err")"
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "$url" ] || { cat "$tmp/serve.err"; exit 1; }
for c in $connections; do
  t=$(( c < 4 ? c : 4 ))
  printf 'wrk -c%-4d ' "$c"
  wrk -t"$t" -c"$c" -d"${seconds}s" --timeout 60s --latency -s "$root/tools/bench/serve.lua" "$url" -- "$sentences" | tail -1
done
kill -TERM $server
wait $server
