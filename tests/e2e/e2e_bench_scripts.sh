#!/usr/bin/env bash
# The benchmark scripts run on the tiny model and print what they promise (speed itself is never
# asserted: machines differ); bad usage of either exits 2. tools/bench/scaling.sh: its inputs hold
# exactly the asked number of source pieces (as `nmt bench translate` counts them); one row per
# precision, search, batch size and length, and a forced-decoding row per batch size and length.
# tools/bench/serve_load.sh (when wrk is installed): one model with its references, and 70 connections
# (more than the server takes from one address by default) answered without errors, with target
# tokens/s; two models (the same directory as en-de and en-fr) with the requests spread over both pairs
# and the server's memory after loading, after a request a pair and at the end. tools/bench/import_memory.sh:
# its rows, and its check of the load's peak passed. tools/bench/precisions.sh: a row per precision,
# shortlist or not, and search, fp32 its own baseline.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model "$tmp/model"
bench=$NMT_SOURCE_DIR/tools/bench
export NMT

check "scaling without a model" 2 "$bench/scaling.sh"
check "scaling on a missing model" 2 "$bench/scaling.sh" "$tmp/none"
grep -q "no model.safetensors" "$err" || say_fail "scaling on a missing model: $(cat "$err")"

check "scaling" 0 env SOURCE="$tmp/model.train.en" LENGTHS="3 7" BATCHES="1 4" PRECISIONS="fp32 int8" BEAMS="2 1" \
  MIN_LINES=2 THREADS=1 "$bench/scaling.sh" "$tmp/model"
# Rows (| model | precision | search | batch | source pieces | lines | ...): every combination once, with
# exactly the pieces asked for.
cells() { awk -F'|' -v OFS='|' -v cols="$1" '{ for (i = 2; i < NF; i++) gsub(/^ +| +$/, "", $i) } $2 == "model" && $3 !~ /^(precision|batch)$/ && NF == cols + 2' "$out"; }
cells 16 | cut -d'|' -f3-7 | sort >"$tmp/rows"
for p in fp32 int8; do for k in "beam 2" greedy; do for b in 1 4; do for l in 3.0 7.0; do
  echo "$p|$k|$b|$l|$([ $b = 1 ] && echo 2 || echo 4)"
done; done; done; done | sort >"$tmp/want"
cmp -s "$tmp/rows" "$tmp/want" || say_fail "scaling's translate rows: $(cat "$out")"
cells 11 | cut -d'|' -f3-5 | sort >"$tmp/rows"
printf '1|3|2\n1|7|2\n4|3|4\n4|7|4\n' >"$tmp/want"
cmp -s "$tmp/rows" "$tmp/want" || say_fail "scaling's forced-decoding rows: $(cat "$out")"

check "precisions without a reference" 2 "$bench/precisions.sh" "$tmp/model" "$tmp/model.train.en"
if [ -x /usr/bin/time ]; then
  head -6 "$tmp/model.train.en" >"$tmp/six.en"
  head -6 "$tmp/model.train.de" >"$tmp/six.de"
  [ -e "$tmp/model/shortlist.bin" ] || say_fail "the tiny model has no shortlist"
  check "precisions" 0 env PRECISIONS="fp32 int8" BEAM=2 REPEAT=2 "$bench/precisions.sh" "$tmp/model" "$tmp/six.en" "$tmp/six.de"
  # A row per precision, with and without the shortlist, and search; fp32 is its own baseline.
  awk -F'|' 'NR > 2 { gsub(/ /, "", $2); print $2 }' "$out" | sort >"$tmp/rows"
  printf '%s\n' fp32beam2 fp32greedy fp32+slbeam2 fp32+slgreedy int8beam2 int8greedy int8+slbeam2 int8+slgreedy |
    sort >"$tmp/want"
  cmp -s "$tmp/rows" "$tmp/want" || say_fail "precisions' rows: $(cat "$out")"
  grep -Eq '^\| fp32 beam2 \| [0-9.]+ \| (1\.00×|-) \| [0-9]+ \| [0-9.]+ \| [0-9.]+ \| 0 \|$' "$out" ||
    say_fail "precisions' fp32 row: $(cat "$out")"
else
  echo "SKIP precisions: no GNU time"
fi

# tools/bench/import_memory.sh on the tiny model exported to CTranslate2: a row for the reference,
# each precision and each search, and the model held once while it is packed.
check "import_memory without a model" 2 "$bench/import_memory.sh"
check "import_memory on a missing model" 2 "$bench/import_memory.sh" "$tmp/none"
if [ -x /usr/bin/time ]; then
  "$NMT" convert -m "$tmp/model" --to ct2 -o "$tmp/ct2" -q || say_fail "nmt convert --to ct2"
  head -5 "$tmp/model.train.en" >"$tmp/five"
  check "import_memory" 0 env SEARCHES="greedy beam2" "$bench/import_memory.sh" "$tmp/ct2" "$tmp/five"
  [ "$(grep -cE '^[|] (fp32|int8) [|] five [|] (greedy|beam2) [|] [0-9.]+ [|] -?[0-9.]+ [|]$' "$out")" = 4 ] &&
    grep -qE '^[|] fp32, nothing packed .* [|] none [|] - [|] [0-9.]+ [|]' "$out" &&
    grep -q "^loading holds the model once (within 32 MiB) in: fp32 int8$" "$out" || say_fail "import_memory: $(cat "$out")"
else
  echo "SKIP import_memory: no GNU time"
fi

check "serve_load without its sentences" 2 "$bench/serve_load.sh" "$tmp/model"
command -v wrk >/dev/null && command -v curl >/dev/null || { echo "SKIP serve_load: wrk or curl is not installed"; exit $fail; }
head -20 "$tmp/model.train.en" >"$tmp/sentences"
# 70 connections: more than the server takes from one address by default.
check "serve_load, one model" 0 env THREADS=1 "$bench/serve_load.sh" "$tmp/model" "$tmp/sentences" 1 "70"
grep -q "^nmt translate (batches of 64) .* sentences/CPU-s" "$out" || say_fail "serve_load: no reference: $(cat "$out")"
grep -Eq "^serve,  70 connections: sentences/s [0-9.]+  tokens/s [0-9.]+ .* errors 0 .*sentences/CPU-s, load" "$out" ||
  say_fail "serve_load, one model: $(cat "$out") $(cat "$err")"
check "serve_load, two pairs" 0 env THREADS=1 SKIP_REFERENCE=1 "$bench/serve_load.sh" "$tmp/model" "$tmp/sentences" 1 "2" \
  -m "$tmp/model" --source-lang en --target-lang fr
grep -q "^nmt translate" "$out" && say_fail "serve_load: SKIP_REFERENCE ran the references"
grep -q "^server VmRSS after one request to each of 2 pairs: [0-9.]* MiB$" "$out" || say_fail "serve_load: $(cat "$out")"
grep -q "^server VmRSS at the end: [0-9.]* MiB, VmHWM (peak): [0-9.]* MiB$" "$out" || say_fail "serve_load: $(cat "$out")"
grep -Eq "errors 0 .*  [|]  lines en-(de|fr) [1-9][0-9]*, en-(de|fr) [1-9][0-9]*$" "$out" ||
  say_fail "serve_load: the requests are not spread over both pairs: $(cat "$out") $(cat "$err")"
exit $fail
