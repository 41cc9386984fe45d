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
# Translator's max_decoding_length, set for each source length) and end it there without eos; the
# sentences whose n-best reaches that limit are compared like the others and counted in the summary
# (ct2_crosscheck.py). nmt's loop guard is off (CTranslate2 has none).
# An int8 model is also run with int8 arithmetic (nmt --precision int8, CTranslate2 compute_type
# int8): those comparisons are reported but not required to agree (the two engines quantize
# activations differently). The variants cover ReLU, GELU, GELUTanh, GELUSigmoid and Swish, and
# layernorm_embedding.
#
# Output: one line a comparison (LABEL: counts, worst difference, mismatches), the mismatches
# themselves above it; exit status 1 when a required comparison has a mismatch. Environment: NMT
# (build/bin/nmt), SENTENCES (500), SEED (1), VARIANTS (all; a space-separated subset of
# `ct2_crosscheck.py variants`), KEEP (a folder that receives every model and output; none by
# default). Single-threaded throughout, so that the results do not depend on the machine's load.
# tools/bench/marian_crosscheck.sh sources this file for its comparisons (the functions below; the
# main part runs only when the file is run).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
helper=$here/ct2_crosscheck.py
failed=0

# required COMMAND...: a comparison that must agree
required() { "$@" || failed=1; }
# reported COMMAND...: a comparison that is only reported
reported() { "$@" || true; }
# ct2cli OUT ARGS...: $translator (ct2-translator) on one thread
ct2cli() {
  local out=$1
  shift
  OMP_NUM_THREADS=1 "$translator" --intra_threads 1 --inter_threads 1 --batch_size 32 "$@" >"$out" 2>"$out.log" ||
    { cat "$out.log" >&2; exit 1; }
}
# nmt_tokens IN OUT: nmt's output as the tokens CTranslate2 reads and writes: the same by default; a
# caller whose nmt reads text sets NMT_TOKENS to a command IN OUT that turns it into tokens
nmt_tokens() { if [ -n "${NMT_TOKENS:-}" ]; then $NMT_TOKENS "$1" "$2"; else cp "$1" "$2"; fi; }

# translations CHECK LABEL NMT_MODEL CT2_MODEL SRC NMT_SRC COMPUTE OUT: nmt on NMT_MODEL reading NMT_SRC
# against the Python Translator on CT2_MODEL reading SRC (tokens), in COMPUTE (float32 or int8): beam 4,
# 4-best with --ct2-search (CHECK: required or reported) and with nmt's own stop (reported), and greedy
# (CHECK); the outputs in OUT.
translations() {
  local check=$1 label=$2 nmt_model=$3 ct2_model=$4 src=$5 nmt_src=$6 compute=$7 out=$8 precision=fp32
  [ "$compute" = int8 ] && precision=int8
  mkdir -p "$out"
  local nmt=("$NMT" translate -m "$nmt_model" -i "$nmt_src" --precision "$precision" --length-penalty 0
             --max-length-ratio 2 --loop-guard 0 --batch-size 32 --no-stream --threads 1 -q)
  "${nmt[@]}" -k 4 --n-best 4 --ct2-search >"$out/nmt.ct2search.nbest.out"
  "${nmt[@]}" -k 4 --n-best 4 >"$out/nmt.nbest.out"
  "${nmt[@]}" --greedy >"$out/nmt.greedy.out"
  local f
  for f in ct2search.nbest nbest greedy; do nmt_tokens "$out/nmt.$f.out" "$out/nmt.$f"; done
  "$python" "$helper" translate "$ct2_model" "$src" "$out/py.nbest" 4 4 "$compute" 2
  "$python" "$helper" translate "$ct2_model" "$src" "$out/py.greedy" 1 1 "$compute" 2
  $check "$python" "$helper" nbest "$label beam 4 --ct2-search" "$out/nmt.ct2search.nbest" "$out/py.nbest" 4 1e-4 "$src" 2
  reported "$python" "$helper" nbest "$label beam 4 (nmt's own stop)" "$out/nmt.nbest" "$out/py.nbest" 4 1e-4 "$src" 2
  cut -d' ' -f3- "$out/py.greedy" >"$out/py.greedy.text"
  $check "$python" "$helper" lines "$label greedy" "$out/nmt.greedy" "$out/py.greedy.text" "$ct2_model" "$src"
}

# scores CHECK LABEL NMT_MODEL CT2_MODEL SRC TGT NMT_SRC NMT_TGT OUT: `nmt score --tokens` on NMT_MODEL
# (NMT_SRC, NMT_TGT; the float32 forward pass, on an int8 model's dequantized weights) against the Python
# score_batch and ct2-translator --task score on CT2_MODEL (SRC, TGT), per token (CHECK); with
# SCORES_RELATIVE=relative each tolerance scales with the log-probability's size beyond 1
scores() {
  local check=$1 label=$2 nmt_model=$3 ct2_model=$4 src=$5 tgt=$6 nmt_src=$7 nmt_tgt=$8 out=$9
  mkdir -p "$out"
  "$NMT" score -m "$nmt_model" -s "$nmt_src" -t "$nmt_tgt" --tokens --threads 1 >"$out/nmt.scores"
  "$python" "$helper" score "$ct2_model" "$src" "$tgt" "$out/py.scores" float32
  ct2cli "$out/cli.scores" --task score --src "$src" --tgt "$tgt" --model "$ct2_model" --compute_type float32 \
    --with_tokens_score
  $check "$python" "$helper" scores "$label forced scores vs Python" "$out/nmt.scores" "$out/py.scores" 1e-4 \
    ${SCORES_RELATIVE:-}
  # ct2-translator prints 6 significant digits: 1e-4 of rounding at scores of 10 and more
  $check "$python" "$helper" scores "$label forced scores vs ct2-translator" "$out/nmt.scores" "$out/cli.scores" 2e-4 \
    ${SCORES_RELATIVE:-}
}

# setup CT2 TOOL: python, translator and NMT from the CTranslate2 folder CT2 (tools/bench/build_ct2.sh),
# checked; TOOL names the script in errors
setup() {
  local ct2=$1 tool=$2
  python=$ct2/venv/bin/python
  translator=${CT2_BUILD:-$ct2/build-dnnl}/cli/ct2-translator
  NMT=${NMT:-$here/../../build/bin/nmt}
  [ -x "$python" ] && [ -x "$translator" ] || { echo "$tool: $ct2 has no venv/bin/python or $translator (tools/bench/build_ct2.sh)" >&2; exit 1; }
  [ -x "$NMT" ] || { echo "$tool: no nmt at $NMT (build it, or set NMT)" >&2; exit 1; }
}

# workdir: $work, KEEP or a temporary folder removed at exit
workdir() {
  if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; work=$(cd "$KEEP" && pwd); else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
}

main() {
  [ $# -eq 1 ] || { sed -n 4p "$0" >&2; exit 2; }
  setup "$(cd "$1" && pwd)" ct2_crosscheck.sh
  SENTENCES=${SENTENCES:-500}
  SEED=${SEED:-1}
  VARIANTS=${VARIANTS:-$("$python" "$helper" variants)}
  workdir
  for variant in $VARIANTS; do
    dir=$work/$variant
    rm -rf "$dir"
    "$python" "$helper" make "$variant" "$SEED" "$dir/model"
    "$python" "$helper" data "$dir/model" "$SENTENCES" "$SEED" "$dir/src" "$dir/tgt"
    computes=float32
    [[ $variant == *-int8 ]] && computes="float32 int8"
    for compute in $computes; do
      check=required
      [ "$compute" = int8 ] && check=reported
      translations $check "$variant $compute" "$dir/model" "$dir/model" "$dir/src" "$dir/src" "$compute" "$dir/$compute"
    done
    scores required "$variant" "$dir/model" "$dir/model" "$dir/src" "$dir/tgt" "$dir/src" "$dir/tgt" "$dir"
  done
  [ $failed -eq 0 ] && echo "ct2_crosscheck.sh: every required comparison agrees" || echo "ct2_crosscheck.sh: mismatches (above)"
  exit $failed
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
