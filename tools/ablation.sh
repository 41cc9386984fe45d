#!/usr/bin/env bash
# One-factor trials of a training config at an equal budget: CONFIG with one setting (or a few)
# changed per run, every run with the same batches and dropout seeds (both are functions of the seed
# and the step) and, unless a variant changes the vocabulary, the same vocabulary; each trained for
# the same number of steps or the same minutes, translated with beam 5 and scored on the config's
# validation set (BLEU and chrF), and on a test set when TEST names one. A trial validates once, at
# its end, greedily (its one validation only writes the model; the table's scores are beam 5):
# mid-run validation is paid from the budget, and a variant whose early outputs run long would pay
# more of it; each variant against the first by sacreBLEU's paired bootstrap test (`nmt bleu
# --paired-bs`) on that last set, and all runs drawn by `nmt plot`. Prints a Markdown table on stdout
# (each run's steps, minutes, the precision its products trained in, and its scores) and the bootstrap
# report on stderr.
#
#   tools/ablation.sh CONFIG [--minutes M | STEPS] VARIANT...
#
# STEPS defaults to 500; --minutes M trains each run for M minutes of the config's
# train.budget_clock (train.max_minutes, summed over resumes). A VARIANT is `recipe` (CONFIG as it
# is), POSITIONS-NORM (e.g. rope-pre: model.positions and model.norm_position), or settings
# KEY=VALUE[,KEY=VALUE...] of the config (e.g. model.dropout=0.1; commas inside [...] or {...} belong
# to the value), optionally named LABEL:KEY=VALUE... (e.g. news3:data.train=[{src: a, tgt: b}, ...]),
# the label then naming the run and its row; the first one named is the baseline of the paired tests. A variant that sets a vocab.* key trains its own vocabulary; the
# others share the one of CONFIG's own output directory (trained first if absent). Runs go to
# PREFIX<variant>[-Mmin] beside CONFIG's output directory, are resumed when interrupted (run the same
# command again) and keep their translations until their model changes; the curves go to
# PREFIXcurves.svg there (against steps; against minutes with --minutes). Environment: NMT (default
# build/bin/nmt), THREADS (2), ALPHA (the length penalty; default CONFIG's
# train.valid_length_penalty), TEST ("SRC REF", optional), PREFIX (default abl-NAME- for CONFIG
# NAME.yaml).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { echo "usage: tools/ablation.sh CONFIG [--minutes M | STEPS] VARIANT..." >&2; exit 2; }
[ $# -ge 1 ] || usage
config=$(realpath "$1")
shift
[ -f "$config" ] || { echo "ablation: no config $config" >&2; exit 2; }
cd "$root"
NMT="${NMT:-build/bin/nmt}"
THREADS="${THREADS:-2}"
name=$(basename "$config" .yaml)
PREFIX="${PREFIX:-abl-$name-}"
budget=(--set train.max_steps=500 --set train.max_minutes=0) suffix="" axis=steps
if [ "${1:-}" = "--minutes" ]; then
  [ $# -ge 2 ] || { echo "ablation: --minutes needs a number" >&2; exit 2; }
  budget=(--set "train.max_minutes=$2" --set train.max_steps=0) suffix="-${2}min" axis=minutes
  shift 2
elif [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  budget=(--set "train.max_steps=$1" --set train.max_minutes=0)
  shift
fi
[ $# -gt 0 ] || usage

resolved() { # KEY in the resolved config FILE: "valid.src", "valid.tgt", "valid_length_penalty" or "precision"
  awk -v key="$2" '
    /^  valid:/ { v = 1; next } /^  [a-z]/ { v = 0 }
    v && key == "valid.src" && /^    src:/ { gsub(/^    src: *"?|"$/, ""); print; exit }
    v && key == "valid.tgt" && /^    tgt:/ { gsub(/^    tgt: *"?|"$/, ""); print; exit }
    (key == "valid_length_penalty" || key == "precision") && $1 == key ":" { print $2; exit }' "$1"
}
outdir() { # the output directory CONFIG names (runs/NAME in the repository when it names none)
  local dir
  dir=$(awk '/^output:/ { sub(/^output: */, ""); gsub(/"/, ""); print }' "$config")
  case $dir in /*) echo "$dir" ;; "") echo "$root/runs/$name" ;; *) realpath -m "$(dirname "$config")/$dir" ;; esac
}
split_settings() { # KEY=VALUE[,KEY=VALUE...] into pairs, a comma inside brackets or braces kept
  pairs=()
  local text=$1 depth=0 current="" c i
  for ((i = 0; i < ${#text}; i++)); do
    c=${text:i:1}
    case $c in
      '[' | '{') depth=$((depth + 1)) ;;
      ']' | '}') depth=$((depth - 1)) ;;
    esac
    if [ "$c" = , ] && [ "$depth" -eq 0 ]; then pairs+=("$current") current=""; else current+=$c; fi
  done
  pairs+=("$current")
}
variant_settings() { # VARIANT: its --set options into settings, own_vocab 1 when it sets a vocab.* key,
  settings=() own_vocab=0 label=$1 # label: the run's name and row (LABEL: or the variant itself)
  local spec=$1
  if [[ "$spec" =~ ^([A-Za-z0-9_+-]+):(.*=.*)$ ]]; then label=${BASH_REMATCH[1]} spec=${BASH_REMATCH[2]}; fi
  if [ "$spec" = recipe ]; then
    :
  elif [[ "$spec" == *=* ]]; then
    split_settings "$spec"
    for pair in "${pairs[@]}"; do
      settings+=(--set "$pair")
      if [[ "$pair" == vocab.* ]]; then own_vocab=1; fi
    done
  elif [[ "$spec" =~ ^[a-z]+-(pre|post)$ ]]; then
    settings=(--set "model.positions=${spec%-*}" --set "model.norm_position=${spec#*-}")
  else
    echo "ablation: a variant is recipe, POSITIONS-NORM (e.g. rope-pre) or [LABEL:]KEY=VALUE[,KEY=VALUE...], not '$1'" >&2
    exit 2
  fi
}
for variant in "$@"; do variant_settings "$variant"; done # every variant checked before any training
# CONFIG's own output directory holds the shared vocabulary; the runs go beside it.
base=$(outdir)
runs=$(dirname "$base")
vocab=$base/spm.model
if [ ! -f "$vocab" ]; then # CONFIG's vocabulary, trained without training a model (one step, validated greedily)
  "$NMT" train "$config" --set train.max_steps=1 --set train.valid_every=1000000 --set train.valid_beam=1 --quiet \
    --threads "$THREADS"
fi
dirs=() hyps=() rows=() last_ref=""
for variant in "$@"; do
  variant_settings "$variant"
  out=$runs/$PREFIX$(tr '=,/' '-+_' <<< "$label")$suffix
  [ "$own_vocab" -eq 1 ] || settings+=(--set "vocab.model=$vocab")
  echo "ablation: $variant -> $out" >&2
  "$NMT" train "$config" "${settings[@]}" "${budget[@]}" --set train.patience=0 --set train.valid_every=1000000000 \
    --set train.valid_beam=1 --set "output=$out" --threads "$THREADS" --quiet
  alpha=${ALPHA:-$(resolved "$out/config.yaml" valid_length_penalty)}
  sets=("$(resolved "$out/config.yaml" valid.src) $(resolved "$out/config.yaml" valid.tgt)")
  [ -z "${TEST:-}" ] || sets+=("$TEST")
  cells=""
  for set in "${sets[@]}"; do
    read -r src ref <<< "$set"
    hyp=$out/$(basename "$src").hyp
    if [ ! "$hyp" -nt "$out/model.safetensors" ]; then # translated again only after the model changed
      "$NMT" translate -m "$out" -q --threads "$THREADS" -k 5 --length-penalty "$alpha" -i "$src" -o "$hyp"
    fi
    cells+=" $("$NMT" bleu -b "$ref" -i "$hyp") | $("$NMT" bleu -b "$ref" -i "$hyp" -m chrf) |"
    last_hyp=$hyp last_ref=$ref
  done
  read -r steps minutes < <(awk '
    /"step":/ { match($0, /"step":[0-9]+/); s = substr($0, RSTART + 7, RLENGTH - 7) }
    /"elapsed_s"/ { match($0, /"elapsed_s":[0-9.]+/); m = substr($0, RSTART + 12, RLENGTH - 12) }
    END { printf "%d %.1f\n", s, m / 60 }' "$out/train.log.jsonl")
  dirs+=("$out") hyps+=("$last_hyp")
  # The products' precision the run trained in (train.precision auto measures it at the start).
  rows+=("| $label | $steps | $minutes | $(resolved "$out/config.yaml" precision) |$cells")
done
# p-values of each variant against the first, on the last set scored (1,000 resamples).
[ ${#hyps[@]} -lt 2 ] || "$NMT" bleu "$last_ref" -i "${hyps[@]}" -m bleu chrf --paired-bs >&2
"$NMT" plot -q -x "$axis" -o "$runs/${PREFIX}curves.svg" "${dirs[@]}"
header="| variant | steps | minutes | precision | valid BLEU (beam 5) | valid chrF |"
rule="| --- | --- | --- | --- | --- | --- |"
[ -z "${TEST:-}" ] || header+=" test BLEU (beam 5) | test chrF |" rule+=" --- | --- |"
echo "$header"
echo "$rule"
printf '%s\n' "${rows[@]}"
