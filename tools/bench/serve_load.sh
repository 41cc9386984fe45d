#!/usr/bin/env bash
# Load on `nmt serve` with wrk on loopback, against `nmt translate` on the same sentences.
#   tools/bench/serve_load.sh MODEL_DIR SENTENCES [SECONDS (20)] [CONNECTIONS ("1 8 64 256")] [serve flags...]
# Prints the references -- `nmt translate` over the file (batches of 64) and with --batch-size 1 (one
# sentence at a time, what a lone client is compared with) -- then one line per connection count:
# wrk's sentences/s, p50/p99 latency and errors (tools/bench/serve.lua), and the sentences the server
# decoded per CPU-second of its process (counted once the requests still in flight when wrk stops are
# done: /metrics' nmt_batch_lines_total over the process's CPU time). Sentences per CPU-second stay
# comparable on a machine that other work shares; wall-clock numbers then are not.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
nmt="${NMT:-$root/build/bin/nmt}"
model=$1 sentences=$2 seconds=${3:-20} connections=${4-"1 8 64 256"}
shift $(( $# < 4 ? $# : 4 ))
threads=${THREADS:-2}
command -v wrk >/dev/null || { echo "serve_load: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
tmp="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
n=$(grep -c . "$sentences")
tick=$(getconf CLK_TCK)

reference() { # reference NAME ARGS...: wall and CPU time of nmt translate over the file
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  ( TIMEFORMAT='%U %S'; time "$nmt" translate -m "$model" --threads "$threads" -q "$@" <"$sentences" >"$tmp/out" ) 2>"$tmp/time"
  end=$(date +%s.%N)
  read -r user sys <"$tmp/time"
  awk -v name="$name" -v n="$n" -v s="$start" -v e="$end" -v u="$user" -v y="$sys" 'BEGIN {
    printf "%-38s %7.1f sentences/s wall (%.1f ms each), %7.1f sentences/CPU-s (%.1f CPU-ms each)\n",
      name, n / (e - s), 1000 * (e - s) / n, n / (u + y), 1000 * (u + y) / n }'
}
[ -n "${SKIP_REFERENCE:-}" ] || reference "nmt translate (batches of 64)"
[ -n "${SKIP_REFERENCE:-}" ] || reference "nmt translate --batch-size 1" --batch-size 1

cpu() { awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$server/stat"; }
lines() { curl -s "$url/metrics" | sed -n 's/^nmt_batch_lines_total //p'; }
"$nmt" serve -m "$model" --port 0 --threads "$threads" --quiet --max-queue 100000 "$@" 2>"$tmp/serve.err" &
server=$!
url=""
for _ in $(seq 1200); do
  url="$(sed -n 's|^listening on \(http://.*\)$|\1|p' "$tmp/serve.err")"
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "$url" ] || { cat "$tmp/serve.err"; exit 1; }
# The model's pair, as GET /languages gives it: [{"code":"en",...,"targets":["de"]}].
pair=$(curl -s "$url/languages" | sed -n 's/^\[{"code":"\([^"]*\)".*"targets":\["\([^"]*\)".*/\1 \2/p')
[ -n "$pair" ] || { echo "serve_load: no language pair from $url/languages" >&2; exit 1; }
for c in $connections; do
  t=$(( c < 4 ? c : 4 ))
  before=$(cpu); lines_before=$(lines)
  wrk -t"$t" -c"$c" -d"${seconds}s" --timeout 60s --latency -s "$root/tools/bench/serve.lua" "$url" -- "$sentences" $pair >"$tmp/wrk"
  while [ "$(curl -s "$url/metrics" | sed -n 's/^nmt_requests_in_flight //p')" -gt 1 ]; do sleep 0.2; done
  after=$(cpu); lines_after=$(lines)
  printf 'serve, %3d connections: %s' "$c" "$(tail -1 "$tmp/wrk")"
  awk -v l=$((lines_after - lines_before)) -v b="$before" -v a="$after" 'BEGIN { printf "  |  %.1f sentences/CPU-s\n", l / (a - b) }'
done
kill -TERM $server
wait $server
server=""
