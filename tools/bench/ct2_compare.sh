#!/usr/bin/env bash
# nmt side by side with CTranslate2 on one model and one test set:
#
#   tools/bench/ct2_compare.sh CT2_SRC_DIR MODEL_DIR TEST.src TEST.ref
#
# CT2_SRC_DIR is a CTranslate2 source tree with its third_party submodules cpu_features, spdlog,
# cxxopts and ruy (with ruy's own third_party/cpuinfo) in place. Its CPU backend is expected in
# CT2_SRC_DIR/build-nmt (a build folder or a link to one: libctranslate2.so at its top,
# cli/ct2-translator); when that has no ct2-translator the script builds it there (OpenBLAS for
# float32, Ruy for int8; no MKL or oneDNN), at nice 19.
#
# `nmt convert --to ct2` converts the nmt model directory into a CTranslate2 model (float32: the
# variables CTranslate2's own converters would write); the conversion is checked by forced decoding: the log-probability of each reference (pieces + eos) under both
# engines (nmt score, ct2-translator --task score) must agree to 1e-3 per token (|difference of
# the sums| / tokens, each pair). Then both engines translate TEST.src at beam 5 and greedy, fp32
# and int8 (CTranslate2's compute_type float32 and int8, quantized at load time like nmt's), on
# THREADS threads, REPEAT times each, and the script prints sentences/s, target tokens/s
# (pieces + eos of the detokenized output, re-encoded), peak RSS and BLEU of each run, and nmt's
# speed ratio. Timings are of whole commands (model loading included; CTranslate2 reads pre-encoded
# pieces, nmt raw text).
#
# Search settings are the same in both: batches of 32 sentences, sorted by length within windows
# of 16 batches (nmt's --batch-size with its window; ct2's --read_batch_size), the output may be
# empty (--min_decoding_length 0). Length penalty ALPHA (default 0): the two engines normalise
# differently when it is not 0 (CTranslate2 divides by |y|^alpha, |y| without eos, and stops a
# sentence after beam-size finished hypotheses; nmt by GNMT's ((5 + |y|) / 6)^alpha, |y| with
# eos, and stops when no live hypothesis can win), so at 0 both rank by log-probability and stop
# when the best hypothesis has ended: the same search. Differences left: the longest output
# (nmt: 2 x source pieces + 10; ct2: 256 pieces, --max_decoding_length).
#
# Needs (tools/install-deps.sh --bench): cmake, g++, libopenblas-dev, sentencepiece (spm_encode,
# spm_decode), GNU time (/usr/bin/time). Environment: NMT (build/bin/nmt), THREADS (2), REPEAT (2),
# ALPHA (0), CT2_OPENBLAS_DIR (the folder of the OpenMP libopenblas.so.0), KEEP (a folder that
# receives every output as
# ENGINE.PRECISION.SEARCH.RUN.hyp; none by default), PRECISIONS ("fp32 int8") and SEARCHES
# ("beam5 greedy"): a subset, e.g. to keep each run short on a shared machine.
set -euo pipefail
[ $# -eq 4 ] || { sed -n 3p "$0" >&2; exit 2; }
ct2=$(cd "$1" && pwd) model=$2 src=$3 ref=$4
here=$(cd "$(dirname "$0")" && pwd)
NMT=${NMT:-$here/../../build/bin/nmt}
THREADS=${THREADS:-2}
REPEAT=${REPEAT:-2}
PRECISIONS=${PRECISIONS:-fp32 int8}
SEARCHES=${SEARCHES:-beam5 greedy}
ALPHA=${ALPHA:-0}
KEEP=${KEEP:-}
build=$ct2/build-nmt
translator=$build/cli/ct2-translator
batch=32

if [ ! -x "$translator" ]; then
  for sub in cpu_features spdlog cxxopts ruy ruy/third_party/cpuinfo; do
    [ -f "$ct2/third_party/$sub/CMakeLists.txt" ] || { echo "ct2_compare.sh: $ct2/third_party/$sub is missing" >&2; exit 1; }
  done
  echo "== building CTranslate2 (OpenBLAS + Ruy) in $build" >&2
  cmake -S "$ct2" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWITH_MKL=OFF -DWITH_OPENBLAS=ON -DWITH_RUY=ON \
    -DOPENMP_RUNTIME=COMP -DBUILD_CLI=ON >"$build.cmake.log" 2>&1 || { tail -20 "$build.cmake.log" >&2; exit 1; }
  nice -n 19 cmake --build "$build" -j2 >"$build.build.log" 2>&1 || { tail -20 "$build.build.log" >&2; exit 1; }
fi
# CTranslate2's threads are OpenMP's, and its own builds link an OpenBLAS made for OpenMP
# (USE_OPENMP=1) so that both share one pool; Debian's default libopenblas.so.0 runs its own
# pthreads. libopenblas0-openmp installs the OpenMP one beside it (not as the default).
blas=${CT2_OPENBLAS_DIR:-/usr/lib/$(gcc -print-multiarch)/openblas-openmp}
[ -f "$blas/libopenblas.so.0" ] || { echo "ct2_compare.sh: no OpenMP OpenBLAS in $blas (libopenblas0-openmp)" >&2; exit 1; }
ct2_libs="$build:$blas${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" # for ct2-translator only; nmt keeps its own

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$NMT" convert -m "$model" --to ct2 -o "$work/ct2" -q
spm_encode --model="$model/spm.model" <"$src" >"$work/src.pieces"
spm_encode --model="$model/spm.model" <"$ref" >"$work/ref.pieces"

echo "== forced decoding of the references (conversion check)"
"$NMT" score -m "$model" -s "$src" -t "$ref" --threads "$THREADS" >"$work/nmt.scores"
LD_LIBRARY_PATH=$ct2_libs OPENBLAS_NUM_THREADS=$THREADS "$translator" --model "$work/ct2" --intra_threads "$THREADS" \
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
report() { # report ENGINE PRECISION SEARCH HYP TIMEFILE: a table row; the seconds in $work/ENGINE.s
  local seconds rss user sys tokens bleu
  read -r seconds rss user sys <"$5"
  tokens=$(( $(spm_encode --model="$model/spm.model" <"$4" | wc -w) + sentences ))
  bleu=$("$NMT" bleu "$ref" -i "$4" -b)
  awk -v e="$1" -v p="$2" -v s="$3" -v n="$sentences" -v t="$seconds" -v k="$tokens" -v r="$rss" -v b="$bleu" \
    -v c="$user" -v y="$sys" 'BEGIN { printf "%-8s %-5s %-7s %7.2f %7.2f %8.1f %10.0f %8.3f %6s\n",
                                          e, p, s, t, c + y, n / t, k / t, r / 1048576, b }'
  echo "$seconds" >"$work/$1.s"
  [ -z "$KEEP" ] || cp "$4" "$KEEP/$1.$2.$3.$run.hyp"
}
echo "== $sentences sentences of $src, $THREADS threads, length penalty $ALPHA, $(date -u '+%F %H:%M UTC')"
printf '%-8s %-5s %-7s %7s %7s %8s %10s %8s %6s\n' engine prec search seconds "CPU s" sent/s tokens/s "RSS GiB" BLEU
for precision in $PRECISIONS; do
  compute=$([ $precision = fp32 ] && echo float32 || echo int8)
  for search in $SEARCHES; do
    if [ $search = beam5 ]; then nmt_flag="-k 5" ct2_beam=5; else nmt_flag=--greedy ct2_beam=1; fi
    for ((run = 1; run <= REPEAT; run++)); do
      # shellcheck disable=SC2086 # nmt_flag is one or two words
      /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$NMT" translate -m "$model" -i "$src" --precision $precision \
        $nmt_flag --length-penalty "$ALPHA" --batch-size $batch --no-stream --threads "$THREADS" -q >"$work/nmt.hyp"
      report nmt $precision $search "$work/nmt.hyp" "$work/time"
      best=
      for layout in "$THREADS 1" "1 $THREADS"; do # one translator on all threads; one per thread
        read -r intra inter <<<"$layout"
        LD_LIBRARY_PATH=$ct2_libs OPENBLAS_NUM_THREADS=$intra /usr/bin/time -f '%e %M %U %S' -o "$work/time" \
          "$translator" --model "$work/ct2" --src "$work/src.pieces" \
          --intra_threads "$intra" --inter_threads "$inter" --compute_type "$compute" --beam_size $ct2_beam \
          --length_penalty "$ALPHA" --min_decoding_length 0 --batch_size $batch --read_batch_size $((16 * batch)) \
          >"$work/ct2.pieces" 2>"$work/ct2.log" || { cat "$work/ct2.log" >&2; exit 1; }
        spm_decode --model="$model/spm.model" <"$work/ct2.pieces" >"$work/ct2.hyp"
        report "ct2-${intra}x$inter" $precision $search "$work/ct2.hyp" "$work/time"
        best=$(awk -v a="$best" -v b="$(cat "$work/ct2-${intra}x$inter.s")" 'BEGIN { print (a == "" || b < a) ? b : a }')
      done
      awk -v c="$best" -v n="$(cat "$work/nmt.s")" 'BEGIN { printf "nmt speed / faster ct2 speed: %.2fx\n", c / n }'
    done
  done
done
