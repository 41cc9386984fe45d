#!/usr/bin/env bash
# Decoding choices for a trained model, on a dev set: SRC translated once per setting (beam size and
# length penalty, plus any other `nmt translate` options), each translation scored against REF with
# BLEU and chrF2 and tested against the first setting's by sacreBLEU's paired bootstrap test
# (`nmt bleu --paired-bs`, 1,000 resamples). Prints a Markdown table on stdout: the setting, BLEU and
# chrF2 with their p-values, the output's length against the reference's (BLEU's ratio), and the wall
# and CPU seconds of the translation.
#
#   tools/decode_sweep.sh MODEL SRC REF SETTING...
#
# A SETTING is BEAM:ALPHA (e.g. 5:1.0, 8:1.4; beam 1 is greedy search), optionally followed by more
# `nmt translate` options after commas (e.g. 5:1.0,--precision,int8). The translations go to OUT
# (default MODEL/sweep-BASENAME-OF-SRC) and are kept until the model changes, so adding a setting
# translates only that one. Environment: NMT (default build/bin/nmt), THREADS (2), OUT.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { echo "usage: tools/decode_sweep.sh MODEL SRC REF BEAM:ALPHA[,OPTION...]..." >&2; exit 2; }
[ $# -ge 4 ] || usage
model=$(realpath "$1") src=$(realpath "$2") ref=$(realpath "$3")
shift 3
for f in "$src" "$ref"; do [ -f "$f" ] || { echo "decode_sweep: no file $f" >&2; exit 2; }; done
[ -d "$model" ] || { echo "decode_sweep: no model directory $model" >&2; exit 2; }
for setting in "$@"; do # every setting checked before any translation
  [[ "$setting" =~ ^[1-9][0-9]*:[0-9]+(\.[0-9]+)?(,.+)?$ ]] ||
    { echo "decode_sweep: a setting is BEAM:ALPHA[,OPTION...], not '$setting'" >&2; exit 2; }
done
cd "$root"
NMT="${NMT:-build/bin/nmt}"
THREADS="${THREADS:-2}"
OUT="${OUT:-$model/sweep-$(basename "$src")}"
mkdir -p "$OUT"
weights=$model/model.safetensors
[ -f "$weights" ] || weights=$model
hyps=() times=()
for setting in "$@"; do
  IFS=, read -r -a parts <<< "$setting"
  beam=${parts[0]%%:*} alpha=${parts[0]#*:}
  hyp=$OUT/$(tr ':,/ ' '_+__' <<< "$setting").hyp
  if [ ! "$hyp" -nt "$weights" ] || [ ! -s "$hyp.time" ]; then # translated again only after the model changed
    echo "decode_sweep: $setting" >&2
    /usr/bin/env time -f "%e %U %S" -o "$hyp.time" "$NMT" translate -m "$model" -q --threads "$THREADS" \
      -k "$beam" --length-penalty "$alpha" "${parts[@]:1}" -i "$src" -o "$hyp.part"
    mv "$hyp.part" "$hyp"
  fi
  hyps+=("$hyp")
  times+=("$(awk '{ printf "%.1f | %.1f", $1, $2 + $3 }' "$hyp.time")")
done
# Scores and p-values against the first setting, in the order of the settings.
mapfile -t cells < <("$NMT" bleu "$ref" -i "${hyps[@]}" -m bleu chrf --paired-bs -q | awk '
  function num(s) { sub(/.*: */, "", s); sub(/,$/, "", s); return s }
  /"BLEU": \{/ { metric = "bleu" } /"chrF2": \{/ { metric = "chrf" }
  /"score":/ { score[metric] = num($0) }
  /"p_value":/ { p[metric] = num($0) }
  /^    }/ {
    printf "%.2f%s | %.2f%s\n", score["bleu"], p["bleu"] == "null" ? "" : sprintf(" (%.3f)", p["bleu"]),
      score["chrf"], p["chrf"] == "null" ? "" : sprintf(" (%.3f)", p["chrf"]) }')
[ ${#cells[@]} -eq $# ] || { echo "decode_sweep: nmt bleu gave ${#cells[@]} systems for $# settings" >&2; exit 1; }
echo "| setting (beam:α) | BLEU (p) | chrF2 (p) | length ratio | seconds | CPU seconds |"
echo "| --- | --- | --- | --- | --- | --- |"
i=0
for setting in "$@"; do
  ratio=$("$NMT" bleu "$ref" -i "${hyps[$i]}" -q | awk -F'ratio = ' 'NF > 1 { split($2, a, " "); print a[1] }')
  echo "| $setting | ${cells[$i]} | ${ratio:-} | ${times[$i]} |"
  i=$((i + 1))
done
