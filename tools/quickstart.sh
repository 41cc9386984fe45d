#!/usr/bin/env bash
# The first thing to run: installs what is missing, builds nmt, generates the English→Hindi demo
# corpus, trains a small Transformer on it (a few minutes on 2 cores), scores the test split with
# `nmt bleu`, translates a few sentences and shows how "I drink tea." aligns, in the terminal and as
# an SVG file.
#
#   tools/quickstart.sh            reuse what is already built and trained
#   tools/quickstart.sh --fresh    regenerate and retrain from scratch
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

fresh=0
for arg in "$@"; do
  case $arg in
    --fresh) fresh=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "quickstart: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

step() { printf '\n==> %s\n' "$*" >&2; }

step "Dependencies and build"
bash tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
nmt=build/bin/nmt
"$nmt" --version

corpus=build/corpora/en-hi
run=build/runs/quickstart
if [ $fresh -eq 1 ]; then rm -rf "$corpus" "$run"; fi

step "Demo corpus (corpora/en-hi/README.md)"
build/bin/nmt-gen-en-hi --output "$corpus"
build/bin/nmt-gen-en-hi-check "$corpus"

if [ -f "$run/model.safetensors" ] && [ -f "$run/train.done" ]; then
  step "Training: reusing the model trained earlier in $run (pass --fresh to retrain)"
else
  step "Training (configs/quickstart.yaml; progress below; Ctrl-C saves a checkpoint and a rerun resumes)"
  "$nmt" train configs/quickstart.yaml
  touch "$run/train.done"
fi

step "Test BLEU (the demo test split: no test sentence occurs in training)"
"$nmt" translate -m "$run" -i "$corpus/test.en" -o "$run/test.hyp" --quiet
"$nmt" bleu "$corpus/test.hi" -i "$run/test.hyp"
"$nmt" bleu "$corpus/test.hi" -i "$run/test.hyp" -m chrf

step "A few translations"
printf '%s\n' "I drink tea." "She drinks tea." "They drank water." "Do you like mangoes?" "Ram's friend is reading a book in the garden." \
  | "$nmt" translate -m "$run" --quiet | paste -d '\t' <(printf '%s\n' "I drink tea." "She drinks tea." "They drank water." "Do you like mangoes?" "Ram's friend is reading a book in the garden.") - \
  | sed 's/\t/  →  /'

step "Where each Hindi word looks in the English (cross-attention, last decoder layer)"
echo "I drink tea." | "$nmt" translate -m "$run" --quiet --print-alignment --alignment-map - 
echo "I drink tea." | "$nmt" translate -m "$run" --quiet --alignment-map "$run/i-drink-tea.svg" >/dev/null
echo "The same map as an image: $run/i-drink-tea.svg"
