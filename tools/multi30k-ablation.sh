#!/usr/bin/env bash
# The positions x normalisation ablation of docs/experiments/multi30k.md: configs/multi30k-small.yaml with one factor
# changed, every run with the same batches and dropout seeds (both are functions of the seed and the
# step), trained for the same number of steps or the same minutes, then translated with beam 5 and
# scored on val and test_2016_flickr (BLEU and chrF), each variant against the first by sacreBLEU's
# paired bootstrap test (`nmt bleu --paired-bs`), and all runs drawn by `nmt plot`. Prints a Markdown
# table on stdout and the bootstrap reports on stderr.
#
#   tools/multi30k-ablation.sh [--minutes M | STEPS] [VARIANT...]
#
# STEPS defaults to 500 (~10 minutes each on 2 cores); --minutes M trains each run for M minutes of
# wall-clock time instead (train.max_minutes, summed over resumes). A VARIANT is POSITIONS-NORM, e.g.
# rope-pre, or settings KEY=VALUE[,KEY=VALUE...] of the config, e.g. model.dropout=0.3 (the recipe
# with one change undone); the default is sinusoidal-post learned-post rope-post sinusoidal-pre, and
# the first one named is the baseline of the paired tests. Runs go to runs/abl-VARIANT[-Mmin] (resumed
# when interrupted: run the same command again; a finished run's translations are kept) and share the
# vocabulary of runs/multi30k-small (trained first if absent); the curves go to runs/abl-curves.svg
# (against steps; against minutes with --minutes). Environment: NMT (default build/bin/nmt), DATA
# (default ../shared/corpora/multi30k), THREADS (2), ALPHA (the length penalty, 1.5).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
NMT="${NMT:-build/bin/nmt}"
DATA="${DATA:-../shared/corpora/multi30k}"
THREADS="${THREADS:-2}"
ALPHA="${ALPHA:-1.5}"
budget=(--set train.max_steps=500) suffix="" axis=steps
if [ "${1:-}" = "--minutes" ]; then
  [ $# -ge 2 ] || { echo "multi30k-ablation: --minutes needs a number" >&2; exit 2; }
  budget=(--set "train.max_minutes=$2" --set train.max_steps=0) suffix="-${2}min" axis=minutes
  shift 2
elif [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
  budget=(--set "train.max_steps=$1" --set train.max_minutes=0)
  shift
fi
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(sinusoidal-post learned-post rope-post sinusoidal-pre)
config=configs/multi30k-small.yaml
vocab=runs/multi30k-small/spm.model
if [ ! -f "$vocab" ]; then # the first run's vocabulary, trained without training a model
  "$NMT" train "$config" --set train.max_steps=1 --set train.valid_every=1000 --quiet --threads "$THREADS"
fi
dirs=() val_hyps=() test_hyps=() rows=()
for variant in "${variants[@]}"; do
  settings=()
  if [[ "$variant" == *=* ]]; then
    IFS=, read -r -a pairs <<< "$variant"
    for pair in "${pairs[@]}"; do settings+=(--set "$pair"); done
    out=runs/abl-$(tr '=,' '-+' <<< "$variant")$suffix
  elif [[ "$variant" =~ ^[a-z]+-(pre|post)$ ]]; then
    settings=(--set "model.positions=${variant%-*}" --set "model.norm_position=${variant#*-}")
    out=runs/abl-$variant$suffix
  else
    echo "multi30k-ablation: a variant is POSITIONS-NORM (e.g. rope-pre) or KEY=VALUE[,KEY=VALUE...], not '$variant'" >&2
    exit 2
  fi
  echo "ablation: $variant -> $out" >&2
  "$NMT" train "$config" "${settings[@]}" "${budget[@]}" \
    --set train.patience=0 --set "vocab.model=../$vocab" --set "output=../$out" --threads "$THREADS" --quiet
  for split in val test_2016_flickr; do # translated again only after the model changed
    [ "$out/$split.hyp" -nt "$out/model.safetensors" ] && continue
    "$NMT" translate -m "$out" -q --threads "$THREADS" -k 5 --length-penalty "$ALPHA" -i "$DATA/$split.en" \
      -o "$out/$split.hyp"
  done
  read -r steps minutes < <(awk '
    /"step":/ { match($0, /"step":[0-9]+/); s = substr($0, RSTART + 7, RLENGTH - 7) }
    /"elapsed_s"/ { match($0, /"elapsed_s":[0-9.]+/); m = substr($0, RSTART + 12, RLENGTH - 12) }
    END { printf "%d %.1f\n", s, m / 60 }' "$out/train.log.jsonl")
  val=$("$NMT" bleu -b "$DATA/val.de" -i "$out/val.hyp") test=$("$NMT" bleu -b "$DATA/test_2016_flickr.de" -i "$out/test_2016_flickr.hyp")
  chrf=$("$NMT" bleu -b "$DATA/test_2016_flickr.de" -i "$out/test_2016_flickr.hyp" -m chrf)
  dirs+=("$out") val_hyps+=("$out/val.hyp") test_hyps+=("$out/test_2016_flickr.hyp")
  rows+=("| $variant | $steps | $minutes | $val | $test | $chrf |")
done
# p-values of each variant against the first, on test (sacreBLEU's paired bootstrap, 1,000 resamples).
"$NMT" bleu "$DATA/test_2016_flickr.de" -i "${test_hyps[@]}" -m bleu chrf --paired-bs >&2
"$NMT" plot -q -x "$axis" -o runs/abl-curves.svg "${dirs[@]}"
echo "| variant | steps | minutes | val BLEU (beam 5) | test BLEU (beam 5) | test chrF |"
echo "| --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
