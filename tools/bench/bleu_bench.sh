#!/usr/bin/env bash
# Times `nmt bleu` (and sacreBLEU, when its source tree is given) on a 100,000-line corpus built from
# a text file: the references are its lines repeated in a shuffled order, the hypotheses the same
# lines with words dropped, swapped and replaced (awk, fixed seed), so that scores are realistic.
#
#   tools/bench/bleu_bench.sh [TEXT_FILE] [NMT_BINARY] [SACREBLEU_SRC] [LINES]
#
# TEXT_FILE defaults to ../shared/corpora/multi30k/train.de. Prints wall-clock seconds per metric.
set -eu
text=${1:-../shared/corpora/multi30k/train.de}
nmt=$(realpath "${2:-build/bin/nmt}")
sacrebleu_src=${3:-}
lines=${4:-100000}
python=${PYTHON:-python3}
[ -r "$text" ] || { echo "cannot read $text"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

awk -v n="$lines" 'BEGIN { srand(7) } { line[NR] = $0 }
  END { for (i = 0; i < n; i++) print line[int(rand() * NR) + 1] }' "$text" >"$work/ref.txt"
awk 'BEGIN { srand(11) } {
  n = split($0, w, " "); out = ""
  for (i = 1; i <= n; i++) {
    r = rand()
    if (r < 0.08) continue                                      # drop
    if (r < 0.14 && i < n) { t = w[i]; w[i] = w[i + 1]; w[i + 1] = t }  # swap with the next
    if (r > 0.95) w[i] = "xyz" int(rand() * 50)                 # replace
    out = out (out == "" ? "" : " ") w[i]
  }
  print out }' "$work/ref.txt" >"$work/hyp.txt"

seconds() { # seconds COMMAND...: wall-clock time of one run, output discarded
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

echo "corpus: $(wc -l <"$work/hyp.txt") lines, $(wc -w <"$work/hyp.txt") hypothesis words ($text)"
printf '%-8s %12s %14s\n' metric "nmt (s)" "sacreBLEU (s)"
for metric in bleu chrf ter; do
  ours=$(seconds "$nmt" bleu "$work/ref.txt" -i "$work/hyp.txt" -m $metric)
  theirs=-
  if [ -n "$sacrebleu_src" ]; then
    theirs=$(PYTHONPATH="$sacrebleu_src" seconds "$python" -m sacrebleu "$work/ref.txt" -i "$work/hyp.txt" -m $metric)
  fi
  printf '%-8s %12.3f %14s\n' $metric "$ours" "$theirs"
done
"$nmt" bleu "$work/ref.txt" -i "$work/hyp.txt" -m bleu chrf ter -f text
