#!/usr/bin/env bash
# nmt side by side with CTranslate2 on one model and one test set:
#
#   tools/bench/ct2_compare.sh CT2_DIR MODEL_DIR TEST.src TEST.ref
#
# CT2_DIR is what tools/bench/build_ct2.sh built (CT2_DIR/src, CT2_DIR/build-dnnl, CT2_DIR/build-openblas);
# BACKEND picks CTranslate2's build: dnnl (default; oneDNN for float32 and int8 products) or openblas
# (OpenBLAS for float32, Ruy for int8). Both use GNU OpenMP.
#
# MODEL_DIR is an nmt model directory or a CTranslate2 one (model.bin):
#   - nmt's: `nmt convert --to ct2` converts it into a CTranslate2 model; nmt translates raw text
#     with its own directory, CTranslate2 pieces of MODEL_DIR/spm.model;
#   - CTranslate2's: both engines read that directory (nmt imports it, docs/model-formats.md), and both
#     translate the pieces of SPM (default MODEL_DIR/spm.model), spm_decode'd for BLEU.
# The model is checked first by forced decoding: the log-probability of each reference (pieces + eos)
# under both engines (nmt score, ct2-translator --task score) must agree to 1e-3 per token (|difference
# of the sums| / tokens, each pair). Then both engines translate TEST.src for each precision (fp32,
# int8: CTranslate2's compute_type float32 and int8, quantized at load time like nmt's), search (beam4,
# beam5, greedy) and thread count of THREADS, REPEAT times each, taking turns (nmt, ct2, nmt, ct2), and
# the script prints sentences/s, target tokens/s (pieces + eos of the detokenized output, re-encoded),
# peak RSS, BLEU and the 1-minute load average when the run started, and nmt's speed ratio against the
# faster CTranslate2 layout (on N > 1 threads one translator on N threads, N x 1, and N translators of
# one thread, 1 x N), with how many of CTranslate2's outputs (the last layout's) are not nmt's.
# Timings are of whole commands (model loading included; CTranslate2 reads pre-encoded pieces, nmt
# raw text for its own model directory). On a machine other jobs load, the
# figures are indicative: compare runs whose load column is alike.
#
# PRECISIONS may also name bf16: nmt's bfloat16 products (CPUs with AVX512_BF16) against the faster of
# CTranslate2's float32 and int8 runs, which has no bfloat16 on CPUs (the comparison a user makes).
#
# Search settings are the same in both: batches of 32 sentences, sorted by length within windows
# of 16 batches (nmt's --batch-size with its window; ct2's --read_batch_size), the output may be
# empty (--min_decoding_length 0). Length penalty ALPHA (default 0): the two engines normalise
# differently when it is not 0 (CTranslate2 divides by |y|^alpha, |y| without eos, and stops a
# sentence after beam-size finished hypotheses; nmt by GNMT's ((5 + |y|) / 6)^alpha, |y| with
# eos, and stops when no live hypothesis can win), so at 0 both rank by log-probability and stop
# when the best hypothesis has ended: the same search. nmt's loop guard is off (--loop-guard 0:
# CTranslate2 has none). Both stop an output at MAX_LENGTH pieces (256 by default; ct2's
# --max_decoding_length, nmt's --max-output-length with --max-length-ratio 100, so that nmt's own
# bound of 2 x source pieces + 10 does not end it first): one bound for every sentence, so outputs
# that loop (an undertrained model's do) run to the same length in both. With LENGTH=ratio nmt
# keeps its own bound instead (outputs and their lengths then differ: compare tokens/s).
#
# Needs (tools/install-deps.sh --bench, tools/bench/build_ct2.sh): python3-numpy, sentencepiece
# (spm_encode, spm_decode), GNU time (/usr/bin/time), libopenblas0-openmp for BACKEND openblas.
# Environment: NMT (build/bin/nmt), BACKEND (dnnl), THREADS ("2"; e.g. "1 2"), REPEAT (2), ALPHA (0), MAX_LENGTH (256), LENGTH (same),
# CT2_OPENBLAS_DIR (the folder of the OpenMP libopenblas.so.0), PYTHON (/usr/bin/python3, with numpy),
# SPM (a CTranslate2 model's SentencePiece model), KEEP (a folder that receives every output as
# ENGINE.PRECISION.SEARCH.THREADS.RUN.hyp; none by default), PRECISIONS ("fp32 int8"; or bf16) and SEARCHES
# ("beam4 beam5 greedy"): a subset, e.g. to keep each run short on a shared machine.
set -euo pipefail
[ $# -eq 4 ] || { sed -n 4p "$0" >&2; exit 2; }
root=$(cd "$1" && pwd) model=$2 src=$3 ref=$4
here=$(cd "$(dirname "$0")" && pwd)
NMT=${NMT:-$here/../../build/bin/nmt}
BACKEND=${BACKEND:-dnnl}
THREADS=${THREADS:-2}
REPEAT=${REPEAT:-2}
MAX_LENGTH=${MAX_LENGTH:-256}
LENGTH=${LENGTH:-same}
case $LENGTH in
  same) nmt_length="--max-output-length $MAX_LENGTH --max-length-ratio 100" ;;
  ratio) nmt_length= ;;
  *) echo "ct2_compare.sh: LENGTH is same or ratio, not $LENGTH" >&2; exit 2 ;;
esac
PRECISIONS=${PRECISIONS:-fp32 int8}
SEARCHES=${SEARCHES:-beam4 beam5 greedy}
ALPHA=${ALPHA:-0}
KEEP=${KEEP:-}
PYTHON=${PYTHON:-/usr/bin/python3} # Debian's, with python3-numpy
build=$root/build-$BACKEND
translator=$build/cli/ct2-translator
batch=32
[ -x "$translator" ] || { echo "ct2_compare.sh: no $translator (tools/bench/build_ct2.sh SNAPSHOT $root)" >&2; exit 1; }
ct2_libs=$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} # for ct2-translator only; nmt keeps its own
if [ "$BACKEND" = openblas ]; then
  # CTranslate2's threads are OpenMP's, and its own builds link an OpenBLAS made for OpenMP
  # (USE_OPENMP=1) so that both share one pool; Debian's default libopenblas.so.0 runs its own
  # pthreads. libopenblas0-openmp installs the OpenMP one beside it (not as the default).
  blas=${CT2_OPENBLAS_DIR:-/usr/lib/$(gcc -print-multiarch)/openblas-openmp}
  [ -f "$blas/libopenblas.so.0" ] || { echo "ct2_compare.sh: no OpenMP OpenBLAS in $blas (libopenblas0-openmp)" >&2; exit 1; }
  ct2_libs=$build:$blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -f "$model/model.bin" ]; then # a CTranslate2 directory: both engines read it, both read pieces
  spm=${SPM:-$model/spm.model}
  [ -f "$spm" ] || { echo "ct2_compare.sh: no SentencePiece model $spm for $model (set SPM)" >&2; exit 1; }
  ct2_model=$model nmt_src=$work/src.pieces nmt_ref=$work/ref.pieces nmt_pieces=1
else
  "$NMT" convert -m "$model" --to ct2 -o "$work/ct2" -q
  spm=$model/spm.model ct2_model=$work/ct2 nmt_src=$src nmt_ref=$ref nmt_pieces=0
fi
spm_encode --model="$spm" <"$src" >"$work/src.pieces"
spm_encode --model="$spm" <"$ref" >"$work/ref.pieces"

echo "== forced decoding of the references (conversion check)"
score_threads=${THREADS##* }
"$NMT" score -m "$model" -s "$nmt_src" -t "$nmt_ref" --threads "$score_threads" >"$work/nmt.scores"
LD_LIBRARY_PATH=$ct2_libs OPENBLAS_NUM_THREADS=$score_threads "$translator" --model "$ct2_model" --intra_threads "$score_threads" \
  --task score --src "$work/src.pieces" --tgt "$work/ref.pieces" --with_tokens_score \
  >"$work/ct2.scores" 2>"$work/ct2.log" || { cat "$work/ct2.log" >&2; exit 1; }
# ct2 lines: mean ||| tokens ||| per-token log-probs (pieces + eos); nmt: their sum
awk -F' \\|\\|\\| ' 'NR == FNR { nmt[FNR] = $1; next }
  { n = split($3, t, " "); s = 0; for (i = 1; i <= n; i++) s += t[i]; d = (s - nmt[FNR]) / n; if (d < 0) d = -d
    if (d > worst) worst = d; sum += d; lines++ }
  END { if (lines == 0 || lines != FNR) { print "ct2_compare.sh: the score files have different lengths"; exit 1 }
        printf "per-token log-probability difference: mean %.2e, worst %.2e over %d pairs\n", sum / lines, worst, lines
        exit worst > 1e-3 }' "$work/nmt.scores" "$work/ct2.scores" ||
  { echo "ct2_compare.sh: the converted model does not score like nmt's" >&2; exit 1; }

sentences=$(wc -l <"$src")
report() { # report ENGINE PRECISION SEARCH HYP TIMEFILE LOAD: a table row; the seconds in $work/ENGINE.s
  local seconds rss user sys tokens bleu
  read -r seconds rss user sys <"$5"
  tokens=$(( $(spm_encode --model="$spm" <"$4" | wc -w) + sentences ))
  bleu=$("$NMT" bleu "$ref" -i "$4" -b)
  awk -v e="$1" -v p="$2" -v s="$3" -v h="$threads" -v n="$sentences" -v t="$seconds" -v k="$tokens" -v r="$rss" \
    -v b="$bleu" -v c="$user" -v y="$sys" -v l="$6" 'BEGIN {
      printf "%-8s %-5s %-7s %3s %7.2f %7.2f %8.1f %10.0f %8.3f %6s %5s\n", e, p, s, h, t, c + y, n / t, k / t, r / 1048576, b, l }'
  echo "$seconds" >"$work/$1.s"
  [ -z "$KEEP" ] || cp "$4" "$KEEP/$1.$2.$3.$threads.$run.hyp"
}
load() { cut -d' ' -f1 /proc/loadavg; }
echo "== $sentences sentences of $src, CTranslate2 $BACKEND, length penalty $ALPHA, $(date -u '+%F %H:%M UTC'), $(nproc) CPUs"
printf '%-8s %-5s %-7s %3s %7s %7s %8s %10s %8s %6s %5s\n' engine prec search thr seconds "CPU s" sent/s tokens/s "RSS GiB" BLEU load
for precision in $PRECISIONS; do
  # CTranslate2 has no bfloat16 on CPUs: nmt's bf16 meets the faster of its float32 and int8.
  case $precision in
    fp32) computes=float32 ;;
    int8) computes=int8 ;;
    bf16) computes="float32 int8" ;;
    *) echo "ct2_compare.sh: precision $precision: fp32, int8 or bf16" >&2; exit 2 ;;
  esac
  for search in $SEARCHES; do
    case $search in
      beam*) nmt_flag="-k ${search#beam}" ct2_beam=${search#beam} ;;
      greedy) nmt_flag=--greedy ct2_beam=1 ;;
      *) echo "ct2_compare.sh: search $search: beamN or greedy" >&2; exit 2 ;;
    esac
    for threads in $THREADS; do
      layouts="$threads 1"
      [ "$threads" -gt 1 ] && layouts+=" 1 $threads" # one translator on all threads; one per thread
      for ((run = 1; run <= REPEAT; run++)); do
        l=$(load)
        # shellcheck disable=SC2086 # nmt_flag and nmt_length are words
        /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$NMT" translate -m "$model" -i "$nmt_src" --precision $precision \
          $nmt_flag $nmt_length --length-penalty "$ALPHA" --loop-guard 0 --batch-size $batch --no-stream --threads "$threads" -q >"$work/nmt.out"
        if [ $nmt_pieces = 1 ]; then spm_decode --model="$spm" <"$work/nmt.out" >"$work/nmt.hyp"; else mv "$work/nmt.out" "$work/nmt.hyp"; fi
        report nmt $precision $search "$work/nmt.hyp" "$work/time" "$l"
        best=
        for compute in $computes; do
          # shellcheck disable=SC2086 # two numbers a layout
          set -- $layouts
          while [ $# -ge 2 ]; do
            intra=$1 inter=$2
            shift 2
            l=$(load)
            LD_LIBRARY_PATH=$ct2_libs OPENBLAS_NUM_THREADS=$intra /usr/bin/time -f '%e %M %U %S' -o "$work/time" \
              "$translator" --model "$ct2_model" --src "$work/src.pieces" \
              --intra_threads "$intra" --inter_threads "$inter" --compute_type "$compute" --beam_size $ct2_beam \
              --length_penalty "$ALPHA" --min_decoding_length 0 --max_decoding_length "$MAX_LENGTH" --batch_size $batch --read_batch_size $((16 * batch)) \
              >"$work/ct2.pieces" 2>"$work/ct2.log" || { cat "$work/ct2.log" >&2; exit 1; }
            spm_decode --model="$spm" <"$work/ct2.pieces" >"$work/ct2.hyp"
            report "ct2-${intra}x$inter" "$([ "$compute" = float32 ] && echo fp32 || echo int8)" $search "$work/ct2.hyp" "$work/time" "$l"
            # The outputs compared with nmt's are those of the faster run (of either compute type for bf16).
            if awk -v a="$best" -v b="$(cat "$work/ct2-${intra}x$inter.s")" 'BEGIN { exit !(a == "" || b < a) }'; then
              best=$(cat "$work/ct2-${intra}x$inter.s")
              differ=$(awk 'NR == FNR { a[FNR] = $0; next } $0 != a[FNR] { d++ } END { print d + 0 }' "$work/nmt.hyp" "$work/ct2.hyp")
            fi
          done
        done
        awk -v c="$best" -v n="$(cat "$work/nmt.s")" -v d="$differ" -v s="$sentences" \
          'BEGIN { printf "nmt speed / faster ct2 speed: %.2fx (outputs unlike nmt'"'"'s: %d of %d)\n", c / n, d, s }'
      done
    done
  done
done
