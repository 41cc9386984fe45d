#!/usr/bin/env bash
# Cost against sentence length and batch size. Builds inputs of exactly 10, 20, 50, 100 and 200 source
# pieces from real sentences (consecutive words of SOURCE, sentences joined where one is too short, a word
# that would overshoot the length left out; a word's pieces are counted once with `nmt score --tokens`,
# which is exact because the SentencePiece model splits at white space), then per model, precision, search
# and batch size runs `nmt bench translate` on each input, and `nmt score` (forced decoding of the input
# as its own target: a target of exactly that many pieces, whatever the model would stop at) at each batch
# size. Optionally profiles both with `perf record`.
#   tools/bench/scaling.sh MODEL_DIR...
#
# Environment: NMT (build/bin/nmt), THREADS (2), SOURCE (../shared/corpora/de-en/newstest2014.en from the
# repository), LENGTHS ("10 20 50 100 200"), BATCHES ("1 8 32 64"), PRECISIONS ("fp32 int8"; empty: no
# translation table), BEAMS ("5 1"; 1 = greedy), MIN_LINES (8: a run decodes as many lines as its batch
# size, at least MIN_LINES, so one batch or MIN_LINES batches of one line), SCORE (1: the forced decoding
# table, fp32 only, as `nmt score` runs), PROFILE (0; 1: perf profiles of MIN_LINES lines in one batch
# at PROFILE_LENGTHS (LENGTHS) with PROFILE_BEAMS (BEAMS), and of `nmt score`).
# Every row gives wall time, the process's CPU seconds (user + sys) and the 1-minute load average when it
# started. "search CPU-s" is the process's CPU seconds less those of the same command on one line of the
# shortest length (model loading, quantization and start-up), and the per-CPU-second rates use it: on a
# machine other work shares these stay comparable where wall-clock rates do not. Below 0.1 search CPU-s
# they are left out ("-"): the clock's ticks and the start-up's own spread then outweigh the search.
# Target tokens are pieces + eos, as `nmt bench` counts them. Markdown tables on stdout, progress on
# stderr.
set -euo pipefail
[ $# -ge 1 ] || { sed -n 9p "$0" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
nmt="${NMT:-$root/build/bin/nmt}"
threads=${THREADS:-2}
source_file=${SOURCE:-$root/../shared/corpora/de-en/newstest2014.en}
lengths=${LENGTHS:-"10 20 50 100 200"} batches=${BATCHES:-"1 8 32 64"}
precisions=${PRECISIONS-"fp32 int8"} beams=${BEAMS:-"5 1"}
min_lines=${MIN_LINES:-8}
profile_lengths=${PROFILE_LENGTHS:-$lengths} profile_beams=${PROFILE_BEAMS:-$beams}
for m in "$@"; do [ -f "$m/model.safetensors" ] || { echo "scaling: $m: no model.safetensors" >&2; exit 2; }; done
[ -r "$source_file" ] || { echo "scaling: cannot read $source_file (set SOURCE)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
longest=0 shortest="" lines=$min_lines
for b in $batches; do [ "$b" -gt "$lines" ] && lines=$b; done
for l in $lengths; do
  [ "$l" -gt "$longest" ] && longest=$l
  [ -z "$shortest" ] || [ "$l" -lt "$shortest" ] && shortest=$l
done

# Pieces of every word of the first lines of SOURCE (enough words for every input), by the first model's
# SentencePiece model: score --tokens lists a log-probability per target piece and one for eos.
need=$(( lines * (longest + 20) ))
awk -v need="$need" '{ print; n += NF } n > need { exit }' "$source_file" >"$tmp/source"
tr -s ' \t' '\n\n' <"$tmp/source" | grep . | awk '!seen[$0]++' >"$tmp/words"
echo "scaling: counting the pieces of $(wc -l <"$tmp/words") words" >&2
"$nmt" score -q -m "$1" -s "$tmp/words" -t "$tmp/words" --tokens --threads "$threads" |
  awk -F' [|][|][|] ' '{ print split($2, a, " ") - 1 }' >"$tmp/pieces"
for l in $lengths; do
  awk -v L="$l" -v N="$lines" 'NR == FNR { p[$1] = $2; next }
    { for (i = 1; i <= NF; i++) w[++nw] = $i }
    END { k = 1
      for (line = 1; line <= N; line++) {
        s = 0; out = ""
        while (s < L && k <= nw) { q = p[w[k]]; if (s + q <= L) { out = out (out == "" ? "" : " ") w[k]; s += q }; k++ }
        if (s < L) { print "scaling: SOURCE too short for " N " lines of " L " pieces" > "/dev/stderr"; exit 1 }
        print out } }' <(paste "$tmp/words" "$tmp/pieces") "$tmp/source" >"$tmp/in.$l"
  for b in $batches; do head -"$(( b > min_lines ? b : min_lines ))" "$tmp/in.$l" >"$tmp/in.$l.$b"; done
  head -"$min_lines" "$tmp/in.$l" >"$tmp/in.$l.profile"
done
head -1 "$tmp/in.$shortest" >"$tmp/one"

load() { cut -d' ' -f1 /proc/loadavg; }
# timed OUT COMMAND...: runs it with its stdout in OUT; sets wall, cpu (user + sys), rss (MiB), at (load).
timed() {
  local out=$1; shift
  at=$(load)
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >"$out"
  read -r wall user sys rss <"$tmp/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  rss=$(( rss / 1024 ))
}
field() { sed -n "s/.*\"$1\": \\([0-9.]*\\).*/\\1/p" "$2"; }

[ -z "$precisions" ] || echo "| model | precision | search | batch | source pieces (mean) | lines | wall s | CPU-s | search CPU-s | sentences/s | target tokens/s | sentences/CPU-s | target tokens/CPU-s | mean output pieces | peak RSS MiB | load |"
[ -z "$precisions" ] || echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for m in "$@"; do
  for p in $precisions; do
    for k in $beams; do
      search=$([ "$k" = 1 ] && echo greedy || echo "beam $k")
      timed "$tmp/json" "$nmt" bench translate -q -m "$m" -i "$tmp/one" --beam-size "$k" --batch-size 1 --precision "$p" --threads "$threads" --json
      base=$cpu
      for b in $batches; do
        for l in $lengths; do
          echo "scaling: $m $p $search batch $b, $l pieces" >&2
          timed "$tmp/json" "$nmt" bench translate -q -m "$m" -i "$tmp/in.$l.$b" --beam-size "$k" --batch-size "$b" --precision "$p" --threads "$threads" --json
          awk -v m="$(basename "$m")" -v p="$p" -v s="$search" -v b="$b" -v src="$(field source_tokens "$tmp/json")" -v w="$wall" -v c="$cpu" -v base="$base" \
              -v n="$(field sentences "$tmp/json")" -v t="$(field target_tokens "$tmp/json")" -v secs="$(field seconds "$tmp/json")" \
              -v mean="$(field mean_output_pieces "$tmp/json")" -v r="$(field peak_rss_gib "$tmp/json")" -v at="$at" 'BEGIN {
            sc = c - base
            rates = sc < 0.1 ? "| - | -" : sprintf("| %.2f | %.0f", n / sc, t / sc)
            printf "| %s | %s | %s | %d | %.1f | %d | %.1f | %.2f | %.2f | %.2f | %.0f %s | %.1f | %.0f | %s |\n",
              m, p, s, b, src / n - 1, n, w, c, sc, n / secs, t / secs, rates, mean, r * 1024, at }'
        done
      done
    done
  done
done

if [ "${SCORE:-1}" = 1 ]; then
  echo
  echo "Forced decoding (\`nmt score\`, fp32; each line its own target: source and target of exactly that many pieces):"
  echo
  echo "| model | batch | pieces (source = target) | lines | wall s | CPU-s | search CPU-s | target tokens/CPU-s | CPU-ms per line | peak RSS MiB | load |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for m in "$@"; do
    timed "$tmp/scores" "$nmt" score -q -m "$m" -s "$tmp/one" -t "$tmp/one" --batch-size 1 --threads "$threads"
    base=$cpu
    for b in $batches; do
      for l in $lengths; do
        echo "scaling: $m score batch $b, $l pieces" >&2
        timed "$tmp/scores" "$nmt" score -q -m "$m" -s "$tmp/in.$l.$b" -t "$tmp/in.$l.$b" --batch-size "$b" --threads "$threads"
        awk -v m="$(basename "$m")" -v b="$b" -v l="$l" -v n="$(wc -l <"$tmp/in.$l.$b")" -v w="$wall" -v c="$cpu" -v base="$base" \
            -v r="$rss" -v at="$at" 'BEGIN {
          sc = c - base
          rates = sc < 0.1 ? "| - | -" : sprintf("| %.0f | %.1f", n * (l + 1) / sc, 1000 * sc / n)
          printf "| %s | %d | %d | %d | %.1f | %.2f | %.2f %s | %d | %s |\n", m, b, l, n, w, c, sc, rates, r, at }'
      done
    done
  done
fi

# Shares of the profile: the products (packed fp32 tiles, int8 VNNI panels, their packing and the int8
# activation quantization) against attention's scores, softmax, weighted sums and int8 cache widening;
# the kernel's share ([k]: page faults of loading and allocation, scheduling) and the rest beside them.
share() {
  perf report -i "$tmp/perf.data" --no-children --sort symbol --stdio 2>/dev/null | awk -v what="$1" '
    $1 ~ /%$/ { v = $1 + 0; s = $3
      if ($2 == "[k]") kernel += v
      else if (s ~ /^(tiles_|panel_|pack_panels|nmt_gemm|nmt_packed_gemm|quantize_row)/) prod += v
      else if (s ~ /^(scores|weighted|softmax_range|attention_|nmt_attention|nmt_kv_widen|widen_i8)/) att += v
      else other += v }
    END { printf "| %s | %.1f%% | %.1f%% | %.2f | %.1f%% | %.1f%% |\n", what, prod, att, att / (prod > 0 ? prod : 1), kernel, other }'
}
if [ "${PROFILE:-0}" = 1 ]; then
  command -v perf >/dev/null || { echo "scaling: perf is not installed" >&2; exit 1; }
  echo
  echo "Profiles (\`perf record\`, share of the process's samples, model loading included):"
  echo
  echo "| run | products | attention | attention / products | kernel | other |"
  echo "| --- | --- | --- | --- | --- | --- |"
  for m in "$@"; do
    for l in $profile_lengths; do
      for k in $profile_beams; do
        echo "scaling: profiling $m beam $k at $l pieces" >&2
        perf record -q -F 499 -o "$tmp/perf.data" -- "$nmt" bench translate -q -m "$m" -i "$tmp/in.$l.profile" \
          --beam-size "$k" --batch-size "$min_lines" --threads "$threads" >/dev/null 2>&1
        share "$(basename "$m") translate fp32, $([ "$k" = 1 ] && echo greedy || echo "beam $k"), batch $min_lines, $l pieces"
      done
      perf record -q -F 499 -o "$tmp/perf.data" -- "$nmt" score -q -m "$m" -s "$tmp/in.$l.profile" -t "$tmp/in.$l.profile" \
        --batch-size "$min_lines" --threads "$threads" >/dev/null 2>&1
      share "$(basename "$m") score, batch $min_lines, $l pieces"
    done
  done
fi
