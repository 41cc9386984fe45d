#!/usr/bin/env bash
# Peak memory of nmt translating with a model, imported (a CTranslate2 directory, an Argos Translate
# package, a Marian model) or its own:
#
#   tools/bench/import_memory.sh MODEL [INPUT]
#
# Prints the peak RSS (GNU time's %M) of `nmt translate -m MODEL --threads THREADS -q`:
#   - on an empty input, for each precision of PRECISIONS: the model read and its matrices packed,
#     what every translation starts with; and the same with NMT_GEMM=openblas in fp32, where nothing
#     is packed (the products read the float32 model): the reference, the model alone;
#   - with INPUT, translating it, for each precision and search of SEARCHES (greedy, beamK).
# Then checks that packing does not hold the model twice: each precision's peak on the empty input
# is at most the reference's plus SLACK_MIB (32; while a matrix is packed its float32 copy and its
# packed one are both in memory, the largest, the output layer, vocabulary x width x 4 bytes: raise
# SLACK_MIB above that for a large vocabulary); exit status 1 where it is not, 2 on bad usage.
# Memory, unlike time, does not depend on the machine's load; it does depend on the batch (INPUT's
# lengths and --batch-size) for the translations.
#
# Needs GNU time (/usr/bin/time). Environment: NMT (build/bin/nmt), THREADS (1), PRECISIONS ("fp32
# int8"), SEARCHES ("greedy beam4"), SLACK_MIB (32).
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n 5p "$0" >&2; exit 2; }
model=$1 input=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
NMT=${NMT:-$here/../../build/bin/nmt}
THREADS=${THREADS:-1}
PRECISIONS=${PRECISIONS:-fp32 int8}
SEARCHES=${SEARCHES:-greedy beam4}
SLACK_MIB=${SLACK_MIB:-32}
[ -e "$model" ] || { echo "import_memory.sh: no model $model" >&2; exit 2; }
[ -z "$input" ] || [ -r "$input" ] || { echo "import_memory.sh: cannot read $input" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "import_memory.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
case $SLACK_MIB in '' | *[!0-9]*) echo "import_memory.sh: SLACK_MIB must be a number of MiB" >&2; exit 2 ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/empty"

# peak_mib INPUT [nmt translate options...]: the peak RSS in MiB of one translation (its errors shown).
peak_mib() {
  local in=$1
  shift
  if ! /usr/bin/time -o "$tmp/time" -f "%M" "$NMT" translate -m "$model" --threads "$THREADS" -q -i "$in" "$@" \
    >/dev/null 2>"$tmp/err"; then
    echo "import_memory.sh: nmt translate $* failed: $(cat "$tmp/err")" >&2
    exit 1
  fi
  awk 'END { printf "%.1f", $1 / 1024 }' "$tmp/time"
}

search_flags() { case $1 in greedy) echo "--greedy" ;; beam*) echo "--beam-size ${1#beam}" ;; *) echo "bad search $1" >&2; exit 2 ;; esac; }

reference=$(NMT_GEMM=openblas peak_mib "$tmp/empty" --precision fp32)
echo "model $model, $THREADS thread(s); peak RSS in MiB"
echo "| precision | input | search | peak RSS | over the model alone |"
echo "| --- | --- | --- | --- | --- |"
echo "| fp32, nothing packed (NMT_GEMM=openblas) | none | - | $reference | 0 (the reference) |"
failed=0
for p in $PRECISIONS; do
  peak=$(peak_mib "$tmp/empty" --precision "$p")
  over=$(awk -v a="$peak" -v b="$reference" 'BEGIN { printf "%.1f", a - b }')
  echo "| $p | none | - | $peak | $over |"
  if awk -v o="$over" -v s="$SLACK_MIB" 'BEGIN { exit !(o > s) }'; then
    echo "FAIL $p: loading peaks $over MiB above the model alone (more than SLACK_MIB $SLACK_MIB): the float32 matrices and their packed copies are in memory together" >&2
    failed=1
  fi
done
if [ -n "$input" ]; then
  for p in $PRECISIONS; do for s in $SEARCHES; do
    # shellcheck disable=SC2046 # the flags are two words
    peak=$(peak_mib "$input" --precision "$p" $(search_flags "$s"))
    echo "| $p | $(basename "$input") | $s | $peak | $(awk -v a="$peak" -v b="$reference" 'BEGIN { printf "%.1f", a - b }') |"
  done; done
fi
[ "$failed" = 0 ] && echo "loading holds the model once (within $SLACK_MIB MiB) in: $PRECISIONS"
exit "$failed"
