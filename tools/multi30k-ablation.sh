#!/usr/bin/env bash
# The positions x normalisation ablation of the README: configs/multi30k-small.yaml with one
# factor changed, every run trained for the same number of steps (the same batches and dropout seeds:
# both are functions of the seed and the step), then translated with beam 5 and scored on
# test_2016_flickr. Prints one Markdown table row per run on stdout.
#
#   tools/multi30k-ablation.sh [STEPS] [VARIANT...]
#
# STEPS defaults to 500 (~10 minutes each on 2 cores); a VARIANT is POSITIONS-NORM, e.g. rope-pre;
# the default is sinusoidal-post learned-post rope-post sinusoidal-pre. Runs go to runs/abl-VARIANT
# (resumed when interrupted) and share the vocabulary of runs/multi30k-small (trained first if absent).
# Environment: NMT (default build/bin/nmt), DATA (default ../shared/corpora/multi30k), THREADS (2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
NMT="${NMT:-build/bin/nmt}"
DATA="${DATA:-../shared/corpora/multi30k}"
THREADS="${THREADS:-2}"
steps="${1:-500}"
[ $# -gt 0 ] && shift
variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(sinusoidal-post learned-post rope-post sinusoidal-pre)
config=configs/multi30k-small.yaml
vocab=runs/multi30k-small/spm.model
if [ ! -f "$vocab" ]; then # the first run's vocabulary, trained without training a model
  "$NMT" train "$config" --set train.max_steps=1 --set train.valid_every=1000 --quiet --threads "$THREADS"
fi
echo "| positions | norm | val BLEU (greedy) | val loss | test BLEU (beam 5) | minutes |"
echo "| --- | --- | --- | --- | --- | --- |"
for variant in "${variants[@]}"; do
  positions=${variant%-*} norm=${variant#*-}
  out=runs/abl-$variant
  echo "ablation: $variant, $steps steps -> $out" >&2
  "$NMT" train "$config" --set "model.positions=$positions" --set "model.norm_position=$norm" \
    --set "train.max_steps=$steps" --set "vocab.model=../$vocab" --set "output=../$out" \
    --threads "$THREADS" --quiet
  "$NMT" translate -m "$out" -q --threads "$THREADS" -i "$DATA/test_2016_flickr.en" -o "$out/test.hyp"
  test_bleu=$("$NMT" bleu -b "$DATA/test_2016_flickr.de" -i "$out/test.hyp")
  # the last validation and the training time, from the run's log
  read -r val_bleu val_loss minutes < <(awk '
    /"event":"valid"/ { match($0, /"bleu":[-0-9.e]+/); b = substr($0, RSTART + 7, RLENGTH - 7)
                        match($0, /"loss":[-0-9.e]+/); l = substr($0, RSTART + 7, RLENGTH - 7) }
    /"elapsed_s"/ { match($0, /"elapsed_s":[0-9.]+/); m = substr($0, RSTART + 12, RLENGTH - 12) }
    END { printf "%.2f %.3f %.1f\n", b, l, m / 60 }' "$out/train.log.jsonl")
  echo "| $positions | $norm | $val_bleu | $val_loss | $test_bleu | $minutes |"
done
