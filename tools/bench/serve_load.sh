#!/usr/bin/env bash
# Load on `nmt serve` with wrk on loopback, against `nmt translate` on the same sentences.
#   tools/bench/serve_load.sh MODEL_DIR SENTENCES [SECONDS (20)] [CONNECTIONS ("1 8 64 256")] [serve flags...]
# The serve flags follow `-m MODEL_DIR`, so they may name its languages and further models:
#   tools/bench/serve_load.sh A test.en 20 "8 64" --source-lang en --target-lang de -m B --source-lang en --target-lang fr
# Every pair the models serve (their nmt_model_batch_lines_total{pair=...} in /metrics) gets the same
# sentences, the pairs taken in turn request by request (tools/bench/serve.lua).
# Prints the references for MODEL_DIR -- `nmt translate` over the file (batches of 64) and with
# --batch-size 1 (one sentence at a time, what a lone client is compared with), both with nmt
# translate's defaults, so serve flags that change translations (beam, precision) make them another
# measure; SKIP_REFERENCE=1 leaves them out -- and the server's VmRSS once it listens and after one
# request to each pair (its model memory). Then one line per connection count: wrk's sentences/s,
# p50/p99 latency and errors, target tokens/s (pieces + eos, from the reference's translations of the
# lines sent; with one model only), the sentences the server decoded per CPU-second of its process (counted once the requests still in
# flight when wrk stops are done: /metrics' nmt_batch_lines_total over the process's CPU time), the
# 1-minute load average when the run started and, with several pairs, the lines each pair decoded.
# Sentences per CPU-second stay comparable on a machine that other work shares; wall-clock numbers then
# are not. Ends with the server's VmRSS and VmHWM (peak). wrk comes from Debian (tools/install-deps.sh
# --bench) when it is missing.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 3p "$0" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
nmt="${NMT:-$root/build/bin/nmt}"
model=$1 input=$2 seconds=${3:-20} connections=${4-"1 8 64 256"}
shift $(( $# < 4 ? $# : 4 ))
threads=${THREADS:-2}
command -v wrk >/dev/null || "$root/tools/install-deps.sh" --bench
command -v wrk >/dev/null || { echo "serve_load: wrk is not installed and could not be (apt-get install wrk)" >&2; exit 1; }
tmp="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
sentences="$tmp/sentences"
grep . "$input" >"$sentences" || { echo "serve_load: no sentence in $input" >&2; exit 1; }
n=$(wc -l <"$sentences")
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
if [ -z "${SKIP_REFERENCE:-}" ]; then
  reference "nmt translate (batches of 64)" --format json
  # Target tokens (pieces + eos) of each line's translation, for serve.lua's tokens/s: the server's
  # translation of a line is nmt translate's.
  sed 's/.*"pieces": \[\(.*\)\].*/\1/' "$tmp/out" | awk -F'", "' '{ print ($0 == "" ? 0 : NF) + 1 }' >"$tmp/tokens"
  reference "nmt translate --batch-size 1" --batch-size 1
fi

rss() { awk -v k="$1:" '$1 == k { printf "%.1f MiB", $2 / 1024 }' "/proc/$server/status"; }
cpu() { awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$server/stat"; }
lines() { curl -s "$url/metrics" | sed -n 's/^nmt_batch_lines_total //p'; }
pair_lines() { curl -s "$url/metrics" | sed -n 's/^nmt_model_batch_lines_total{pair="\(.*\)"} \(.*\)/\1 \2/p'; }
# Every connection comes from 127.0.0.1, and one still waiting for its answer when wrk stops keeps its
# place: the server must take wrk's connections and this script's requests to /metrics beside them.
most=0
for c in $connections; do [ "$c" -gt "$most" ] && most=$c; done
per_client=()
case " $* " in *" --max-connections-per-client "*) ;; *) per_client=(--max-connections-per-client $((most + 16))) ;; esac
"$nmt" serve -m "$model" --port 0 --threads "$threads" --quiet --max-queue 100000 "${per_client[@]}" "$@" 2>"$tmp/serve.err" &
server=$!
url=""
for _ in $(seq 1200); do
  url="$(sed -n 's|^listening on \(http://.*\)$|\1|p' "$tmp/serve.err")"
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "$url" ] || { cat "$tmp/serve.err"; exit 1; }
echo "server VmRSS once listening: $(rss VmRSS)"
# The pairs as "source target" lines: each model's label "SOURCE-TARGET" split where both sides are
# languages of GET /languages (a code may itself hold a '-', as zh-Hans).
curl -s "$url/languages" | grep -o '"code":"[^"]*"' | cut -d'"' -f4 >"$tmp/codes"
pair_lines | awk 'NR == FNR { code[$1] = 1; next }
  { for (c in code) if (index($1, c "-") == 1 && (substr($1, length(c) + 2) in code)) print c, substr($1, length(c) + 2) }' \
  "$tmp/codes" - >"$tmp/pairs"
[ -s "$tmp/pairs" ] || { echo "serve_load: no language pair in $url/metrics" >&2; exit 1; }
while read -r s t; do
  curl -s -o /dev/null -w '' "$url/translate" -H 'Content-Type: application/json' \
    -d "{\"q\":\"$(head -1 "$sentences" | sed 's/[\\"]/\\&/g')\",\"source\":\"$s\",\"target\":\"$t\"}"
done <"$tmp/pairs"
echo "server VmRSS after one request to each of $(wc -l <"$tmp/pairs") pairs: $(rss VmRSS)"
tokens=""
[ "$(wc -l <"$tmp/pairs")" = 1 ] && [ -s "$tmp/tokens" ] && tokens="$tmp/tokens"
for c in $connections; do
  t=$(( c < 4 ? c : 4 ))
  at=$(cut -d' ' -f1 /proc/loadavg)
  before=$(cpu); lines_before=$(lines); pair_lines >"$tmp/pairs.before"
  TOKENS="$tokens" wrk -t"$t" -c"$c" -d"${seconds}s" --timeout 60s --latency -s "$root/tools/bench/serve.lua" "$url" -- \
    "$sentences" $(cat "$tmp/pairs") >"$tmp/wrk"
  # The requests in flight when wrk stopped are finished (the one that asks is itself in flight).
  until flight=$(curl -s "$url/metrics" | sed -n 's/^nmt_requests_in_flight //p'); [ -n "$flight" ] && [ "$flight" -le 1 ]; do
    kill -0 $server 2>/dev/null || { echo "serve_load: the server ended: $(cat "$tmp/serve.err")" >&2; exit 1; }
    sleep 0.2
  done
  after=$(cpu); lines_after=$(lines)
  printf 'serve, %3d connections: %s' "$c" "$(tail -1 "$tmp/wrk")"
  awk -v l=$((lines_after - lines_before)) -v b="$before" -v a="$after" -v at="$at" 'BEGIN {
    printf "  |  %.1f sentences/CPU-s, load %s", l / (a - b), at }'
  [ "$(wc -l <"$tmp/pairs")" = 1 ] || pair_lines | awk 'NR == FNR { b[$1] = $2; next } { printf "%s %s %d", FNR == 1 ? "  |  lines" : ",", $1, $2 - b[$1] }' "$tmp/pairs.before" -
  echo
done
echo "server VmRSS at the end: $(rss VmRSS), VmHWM (peak): $(rss VmHWM)"
kill -TERM $server
wait $server
server=""
