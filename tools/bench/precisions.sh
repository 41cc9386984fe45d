#!/usr/bin/env bash
# The precisions of one model side by side: speed, memory and quality of fp32, int8 and bf16, each
# with and without the vocabulary shortlist, at beam K and greedy, on the same sentences.
#
#   tools/bench/precisions.sh MODEL SRC REF
#
# Each configuration translates SRC with whole `nmt translate` processes (model loading included),
# REPEAT rounds taking turns; the cell is the median of the rounds' CPU seconds (user + sys: robust on
# a shared machine, unlike wall time) and the ratio of fp32's to it ("-" where a run took under 10
# ms). Quality: BLEU and chrF2 of the first round against REF (`nmt bleu`), and how many lines differ
# from fp32's. A precision this CPU refuses is left out with the reason; the shortlist rows need
# MODEL/shortlist.bin (`nmt shortlist -m MODEL`). Environment: NMT (build/bin/nmt), BEAM (5), ALPHA
# (the length penalty, 1.0), THREADS (1), REPEAT (3), PRECISIONS ("fp32 int8 bf16"). Prints a
# Markdown table on stdout.
set -euo pipefail
[ $# -eq 3 ] || { sed -n 5p "$0" >&2; exit 2; }
model=$1 src=$2 ref=$3
NMT=${NMT:-build/bin/nmt}
BEAM=${BEAM:-5} ALPHA=${ALPHA:-1.0} THREADS=${THREADS:-1} REPEAT=${REPEAT:-3}
PRECISIONS=${PRECISIONS:-fp32 int8 bf16}
command -v /usr/bin/time >/dev/null || { echo "precisions.sh: needs /usr/bin/time (Debian's package time)" >&2; exit 1; }
[ "$(wc -l <"$src")" -eq "$(wc -l <"$ref")" ] || { echo "precisions.sh: $src and $ref differ in lines" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The configurations: NAME|ARGS (name: precision, "+sl" with the shortlist, then the search).
configs=()
for p in $PRECISIONS; do
  if ! err=$("$NMT" translate -m "$model" --precision "$p" -q --threads 1 <<<"a" 2>&1 >/dev/null); then
    echo "precisions.sh: $p left out: $(echo "$err" | head -n 1)" >&2
    continue
  fi
  for search in "beam$BEAM" greedy; do
    if [ "$search" = greedy ]; then s="--beam-size 1"; else s="-k $BEAM --length-penalty $ALPHA"; fi
    configs+=("$p $search|--precision $p $s")
    [ -e "$model/shortlist.bin" ] && configs+=("$p+sl $search|--precision $p --shortlist $s")
  done
done

# One process: its CPU seconds and peak RSS into $work/NAME.times (a line a round).
run() { # KEY ARGS OUT
  local key=$1 args=$2 out=$3
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S %M" -o "$work/time" "$NMT" translate -m "$model" -i "$src" -q --threads "$THREADS" \
    $args >"$out"
  awk '{ printf "%.3f %d\n", $1 + $2, $3 }' "$work/time" >>"$work/$key.times"
}

for round in $(seq "$REPEAT"); do
  for i in "${!configs[@]}"; do
    out=$work/$i.hyp
    [ "$round" -gt 1 ] && out=/dev/null
    run "$i" "${configs[$i]#*|}" "$out"
  done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "| $(wc -l <"$src") lines, $THREADS thread(s), median of $REPEAT | CPU s | speed vs fp32 | peak RSS MB | BLEU | chrF2 | lines unlike fp32's |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for i in "${!configs[@]}"; do
  name=${configs[$i]%%|*}
  search=${name#* }
  base=""
  for j in "${!configs[@]}"; do [ "${configs[$j]%%|*}" = "fp32 $search" ] && base=$j; done
  cpu=$(cut -d' ' -f1 "$work/$i.times" | median)
  rss=$(cut -d' ' -f2 "$work/$i.times" | sort -n | tail -n 1)
  scores=$("$NMT" bleu "$ref" -i "$work/$i.hyp" -m bleu chrf -b | tr -d '[],' | xargs)
  ratio=- differ=-
  if [ -n "$base" ]; then
    ratio=$(awk -v a="$(cut -d' ' -f1 "$work/$base.times" | median)" -v b="$cpu" \
      'BEGIN { if (a > 0 && b > 0) printf "%.2f×", a / b; else printf "-" }')
    differ=$(paste -d'\t' "$work/$base.hyp" "$work/$i.hyp" | awk -F'\t' '$1 != $2' | wc -l)
  fi
  printf '| %s | %s | %s | %d | %s | %s | %s |\n' "$name" "$cpu" "$ratio" $((rss / 1024)) "${scores%% *}" \
    "${scores##* }" "$differ"
done
