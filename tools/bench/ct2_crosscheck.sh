#!/usr/bin/env bash
# nmt against CTranslate2 on CTranslate2 model directories made with random weights:
#
#   tools/bench/ct2_crosscheck.sh CT2_DIR
#
# CT2_DIR is what tools/bench/build_ct2.sh built: CT2_DIR/venv/bin/python imports CTranslate2's module
# and CT2_DIR/build-dnnl/cli/ct2-translator is its command-line translator (CT2_BUILD picks another
# build folder). For each variant of tools/bench/ct2_crosscheck.py (pre- and post-norm, output bias or
# not, shared or separate embeddings and vocabularies, float32 or int8 weights on disk), the script
# makes the model through CTranslate2's TransformerSpec, draws SENTENCES (500) source lines of tokens
# and as many target lines, and checks (float32 arithmetic in both engines; an int8 model's weights
# dequantized):
#   - beam 4, 4-best, length penalty 0: `nmt translate --ct2-search --n-best 4` gives the
#     hypotheses of the Python Translator (translate_batch), in their order (two hypotheses whose
#     log-probabilities are within 1e-4 a token may swap), with log-probabilities within 1e-4 a
#     token; `nmt translate` without --ct2-search is compared the same way (its search may go on
#     where CTranslate2 stops, so it may find better hypotheses: reported, not a failure);
#   - greedy: `nmt translate --greedy` writes the Python Translator's lines (where they part at two
#     pieces whose log-probabilities are within 1e-4, a tie at float32 precision, reported apart);
#   - forced scores: `nmt score --tokens` gives the log-probability of each target token and of </s>
#     of the Python score_batch and of ct2-translator --task score --with_tokens_score, within 1e-4
#     (2e-4 for ct2-translator, which prints 6 significant digits).
# Both engines stop a hypothesis after 2 x source tokens + 10 (nmt's --max-length-ratio 2; the Python
# Translator's max_decoding_length, set for each source length); sentences whose n-best reaches that
# limit are counted apart (ct2_crosscheck.py). nmt's loop guard is off (CTranslate2 has none).
# An int8 model is also run with int8 arithmetic (nmt --precision int8, CTranslate2 compute_type
# int8): those comparisons are reported but not required to agree (the two engines quantize
# activations differently). A GELU model must be refused by nmt with the activation named.
#
# Output: one line a comparison (LABEL: counts, worst difference, mismatches), the mismatches
# themselves above it; exit status 1 when a required comparison has a mismatch. Environment: NMT
# (build/bin/nmt), SENTENCES (500), SEED (1), VARIANTS (all; a space-separated subset of
# `ct2_crosscheck.py variants`), KEEP (a folder that receives every model and output; none by
# default). Single-threaded throughout, so that the results do not depend on the machine's load.
set -euo pipefail
[ $# -eq 1 ] || { sed -n 4p "$0" >&2; exit 2; }
ct2=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
NMT=${NMT:-$here/../../build/bin/nmt}
SENTENCES=${SENTENCES:-500}
SEED=${SEED:-1}
KEEP=${KEEP:-}
python=$ct2/venv/bin/python
translator=${CT2_BUILD:-$ct2/build-dnnl}/cli/ct2-translator
helper=$here/ct2_crosscheck.py
[ -x "$python" ] && [ -x "$translator" ] || { echo "ct2_crosscheck.sh: $ct2 has no venv/bin/python or $translator (tools/bench/build_ct2.sh)" >&2; exit 1; }
[ -x "$NMT" ] || { echo "ct2_crosscheck.sh: no nmt at $NMT (build it, or set NMT)" >&2; exit 1; }
VARIANTS=${VARIANTS:-$("$python" "$helper" variants)}
if [ -n "$KEEP" ]; then mkdir -p "$KEEP"; work=$(cd "$KEEP" && pwd); else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
failed=0

# required COMMAND...: a comparison that must agree
required() { "$@" || failed=1; }
# reported COMMAND...: a comparison that is only reported
reported() { "$@" || true; }
# ct2cli OUT ARGS...: ct2-translator on one thread
ct2cli() {
  local out=$1
  shift
  OMP_NUM_THREADS=1 "$translator" --intra_threads 1 --inter_threads 1 --batch_size 32 "$@" >"$out" 2>"$out.log" ||
    { cat "$out.log" >&2; exit 1; }
}

for variant in $VARIANTS; do
  dir=$work/$variant
  rm -rf "$dir"
  "$python" "$helper" make "$variant" "$SEED" "$dir/model"
  "$python" "$helper" data "$dir/model" "$SENTENCES" "$SEED" "$dir/src" "$dir/tgt"
  if [[ $variant == *-gelu-* ]]; then
    if "$NMT" translate -m "$dir/model" -i "$dir/src" -q >/dev/null 2>"$dir/refusal"; then
      echo "$variant: nmt translated a GELU model" && failed=1
    elif grep -q activation "$dir/refusal"; then
      echo "$variant: refused as expected: $(head -1 "$dir/refusal")"
    else
      echo "$variant: refused without naming the activation: $(head -1 "$dir/refusal")" && failed=1
    fi
    continue
  fi
  computes=float32
  [[ $variant == *-int8 ]] && computes="float32 int8"
  for compute in $computes; do
    check=required
    [ "$compute" = int8 ] && check=reported
    precision=$([ "$compute" = int8 ] && echo int8 || echo fp32)
    label="$variant $compute"
    out=$dir/$compute
    mkdir -p "$out"
    nmt=("$NMT" translate -m "$dir/model" -i "$dir/src" --precision "$precision" --length-penalty 0
         --max-length-ratio 2 --loop-guard 0 --batch-size 32 --no-stream --threads 1 -q)
    "${nmt[@]}" -k 4 --n-best 4 --ct2-search >"$out/nmt.ct2search.nbest"
    "${nmt[@]}" -k 4 --n-best 4 >"$out/nmt.nbest"
    "${nmt[@]}" --greedy >"$out/nmt.greedy"
    "$python" "$helper" translate "$dir/model" "$dir/src" "$out/py.nbest" 4 4 "$compute" 2
    "$python" "$helper" translate "$dir/model" "$dir/src" "$out/py.greedy" 1 1 "$compute" 2
    $check "$python" "$helper" nbest "$label beam 4 --ct2-search" "$out/nmt.ct2search.nbest" "$out/py.nbest" 4 1e-4 "$dir/src" 2
    reported "$python" "$helper" nbest "$label beam 4 (nmt's own stop)" "$out/nmt.nbest" "$out/py.nbest" 4 1e-4 "$dir/src" 2
    cut -d' ' -f3- "$out/py.greedy" >"$out/py.greedy.text"
    $check "$python" "$helper" lines "$label greedy" "$out/nmt.greedy" "$out/py.greedy.text" "$dir/model" "$dir/src"
  done
  # nmt score runs the float32 forward pass, on an int8 model's dequantized weights
  "$NMT" score -m "$dir/model" -s "$dir/src" -t "$dir/tgt" --tokens --threads 1 >"$dir/nmt.scores"
  "$python" "$helper" score "$dir/model" "$dir/src" "$dir/tgt" "$dir/py.scores" float32
  ct2cli "$dir/cli.scores" --task score --src "$dir/src" --tgt "$dir/tgt" --model "$dir/model" --compute_type float32 \
    --with_tokens_score
  required "$python" "$helper" scores "$variant forced scores vs Python" "$dir/nmt.scores" "$dir/py.scores" 1e-4
  # ct2-translator prints 6 significant digits: 1e-4 of rounding at scores of 10 and more
  required "$python" "$helper" scores "$variant forced scores vs ct2-translator" "$dir/nmt.scores" "$dir/cli.scores" 2e-4
done
[ $failed -eq 0 ] && echo "ct2_crosscheck.sh: every required comparison agrees" || echo "ct2_crosscheck.sh: mismatches (above)"
exit $failed
