#!/usr/bin/env bash
# nmt on Marian models against CTranslate2 on what CTranslate2's own Marian converter makes of them:
#
#   tools/bench/marian_crosscheck.sh CT2_DIR
#
# CT2_DIR is what tools/bench/build_ct2.sh built (CT2_DIR/venv/bin/python imports CTranslate2 and holds
# its converters; CT2_DIR/build-dnnl/cli/ct2-translator, or CT2_BUILD's). For each variant of
# tools/bench/marian_crosscheck.py (post-norm "dan" and pre-norm; ReLU, swish and gelu; tied-embeddings-all,
# tied-embeddings and none; with and without the output bias; Marian's sinusoids or a trained Wpos; with
# and without a LayerNorm of the embeddings)
# the script writes a random model folder as OPUS-MT releases one (model.npz with special:model.yml,
# decoder.yml, vocab.yml, source.spm and target.spm: SentencePiece models that hold the vocabulary's
# words whole, made by `nmt vocab`), converts it with CTranslate2's OpusMTConverter (what
# ct2-opus-mt-converter runs), draws SENTENCES (500) source lines and as many targets, and runs nmt
# on the folder itself (text in and out, through its source.spm and target.spm) against CTranslate2 on
# the conversion (the words' pieces), as tools/bench/ct2_crosscheck.sh compares (its functions, sourced):
#   - "marian" numerics (required): the converter's spec with Marian's own numbers where the converter
#     departs from them (marian_crosscheck.py: sinusoids, LayerNorm epsilon, the scaling with Wpos):
#     beam 4 4-best (`--ct2-search`: the same hypotheses in the same order, log-probabilities within
#     1e-4 a token), greedy (the same lines), forced scores (1e-4 a token times the log-probability's
#     size beyond 1: float32's rounding of these models' large logits; 2e-4 for ct2-translator);
#   - "converter" numerics (reported): the conversion as it is: greedy and forced scores, to measure
#     what the converter's departures change.
# Both engines end a hypothesis at 2 x source pieces + 10 pieces, without eos; nmt's loop guard is off.
#
# Output: one line a comparison, mismatches above it; exit status 1 when a required comparison has a
# mismatch. Environment: NMT (build/bin/nmt), SENTENCES (500), SEED (1), VARIANTS (the default list of
# `marian_crosscheck.py variants`; any NORM-ACT-TIE-BIAS-POS it names), KEEP (a folder that receives every
# model and output; none by default). Single-threaded throughout.
set -euo pipefail
[ $# -eq 1 ] || { sed -n 4p "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ct2_crosscheck.sh"
setup "$(cd "$1" && pwd)" marian_crosscheck.sh
SENTENCES=${SENTENCES:-500}
SEED=${SEED:-1}
marian=$here/marian_crosscheck.py
VARIANTS=${VARIANTS:-$("$python" "$marian" variants)}
NMT_TOKENS="$python $marian pieces"
# The reference models' logits are large (e2e_marian.sh's random weights): at log-probabilities of -9
# and below float32 moves a few tokens by more than 1e-4 in either engine (tests/support/marian_reference.py,
# float64, puts both off there)
SCORES_RELATIVE=relative
workdir

# SentencePiece models of the reference models' words (every model's vocabulary holds the same words)
"$python" "$here/../../tests/support/marian_reference.py" corpus "$SEED" 3000 >"$work/corpus.txt"
"$NMT" vocab -i "$work/corpus.txt" -s 64 -o "$work/unigram" -q
"$NMT" vocab -i "$work/corpus.txt" -s 68 -t bpe -o "$work/bpe" -q

for variant in $VARIANTS; do
  dir=$work/$variant
  rm -rf "$dir"
  "$python" "$marian" make "$variant" "$SEED" "$dir/model"
  cp "$work/unigram.model" "$dir/model/source.spm"
  cp "$work/bpe.model" "$dir/model/target.spm"
  "$python" "$marian" data "$dir/model" "$SENTENCES" "$SEED" "$dir/src" "$dir/src.txt" "$dir/tgt.txt"
  "$python" "$marian" pieces "$dir/tgt.txt" "$dir/tgt"
  for numerics in marian converter; do
    "$python" "$marian" convert "$dir/model" "$dir/ct2-$numerics" "$numerics" >/dev/null
    out=$dir/$numerics
    if [ $numerics = marian ]; then
      translations required "$variant ($numerics numerics)" "$dir/model" "$dir/ct2-$numerics" "$dir/src" "$dir/src.txt" \
        float32 "$out"
      scores required "$variant ($numerics numerics)" "$dir/model" "$dir/ct2-$numerics" "$dir/src" "$dir/tgt" \
        "$dir/src.txt" "$dir/tgt.txt" "$out"
    else
      mkdir -p "$out"
      "$NMT" translate -m "$dir/model" -i "$dir/src.txt" --greedy --max-length-ratio 2 --loop-guard 0 --threads 1 -q \
        >"$out/nmt.greedy.out"
      nmt_tokens "$out/nmt.greedy.out" "$out/nmt.greedy"
      "$python" "$helper" translate "$dir/ct2-$numerics" "$dir/src" "$out/py.greedy" 1 1 float32 2
      cut -d' ' -f3- "$out/py.greedy" >"$out/py.greedy.text"
      reported "$python" "$helper" lines "$variant ($numerics numerics) greedy" "$out/nmt.greedy" "$out/py.greedy.text" \
        >"$out/greedy.report"
      tail -1 "$out/greedy.report"
      scores reported "$variant ($numerics numerics)" "$dir/model" "$dir/ct2-$numerics" "$dir/src" "$dir/tgt" \
        "$dir/src.txt" "$dir/tgt.txt" "$out" | grep -v ': line '
    fi
  done
done
[ $failed -eq 0 ] && echo "marian_crosscheck.sh: every required comparison agrees" || echo "marian_crosscheck.sh: mismatches (above)"
exit $failed
