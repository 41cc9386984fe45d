#!/usr/bin/env bash
# `nmt translate` and `nmt score` end to end, on a tiny model trained inside the test: line order
# and empty lines, n-best and alignment formats, scores, alignment maps, invalid UTF-8, write errors
# and a closed pipe, missing or corrupt model directories, a model file or checkpoint instead of one.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"

# A toy parallel corpus: the target is the source with each word swapped for its "translation".
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model model # `nmt train` for a few seconds: a vocabulary of 48 pieces, d_model 32, one layer a side
M=model
T="--threads 1" # the products of a tiny model are too small to share between threads

# Line order, empty lines, one output line per input line.
printf 'the cat sees a dog\n\nbig red house\nthe tree\n\n' >in.txt
check "translate" 0 "$NMT" translate -m $M -i in.txt --threads 2 --batch-size 2
cp out all.txt
[ "$(wc -l <all.txt)" -eq 5 ] || say_fail "5 input lines gave $(wc -l <all.txt) output lines"
[ -z "$(sed -n 2p all.txt)" ] && [ -z "$(sed -n 5p all.txt)" ] || say_fail "empty lines did not stay empty"
[ -n "$(sed -n 1p all.txt)" ] || say_fail "line 1 was not translated"
# Each line alone (a batch of one) gives the same line: sorting and batching keep the order.
: >alone.txt
while IFS= read -r line; do printf '%s\n' "$line" | "$NMT" translate -m $M -q $T >>alone.txt; done <in.txt
cmp -s all.txt alone.txt || { say_fail "translating lines one at a time differs"; diff all.txt alone.txt; }
# -m also takes the model file, or a checkpoint (the vocabulary from the directory above checkpoints/):
# here the last checkpoint holds the final weights.
check "model file" 0 "$NMT" translate -m $M/model.safetensors -i in.txt $T
cmp -s out alone.txt || say_fail "-m MODEL_DIR/model.safetensors translates unlike -m MODEL_DIR"
check "checkpoint" 0 "$NMT" translate -m $M/checkpoints/step-00000400.safetensors -i in.txt $T
cmp -s out alone.txt || say_fail "-m the last checkpoint translates unlike the model directory"
check "not a model file" 1 "$NMT" translate -m in.txt -i in.txt $T
grep -q 'in.txt' err || say_fail "not a model file: $(cat err)"
# Empty input gives empty output; a missing input file is an error naming it.
check "empty input" 0 "$NMT" translate -m $M $T </dev/null
[ ! -s out ] || say_fail "empty input gave output"
check "missing input" 1 "$NMT" translate -m $M $T -i no-such-file.txt
grep -q 'no-such-file.txt' err || say_fail "missing input message: $(cat err)"
# Greedy, and stdin to stdout.
"$NMT" translate -m $M $T --greedy <in.txt >greedy.txt 2>err || say_fail "greedy: $(cat err)"
[ "$(wc -l <greedy.txt)" -eq 5 ] || say_fail "greedy line count"
# Sampling: a function of the seed and the line number only (the same on 1 and 2 threads and in
# batches of 1 and 64; twelve copies of each line drawn apart); another seed draws other lines (at
# temperature 5 even this peaked model's); top-k 1 is greedy search.
for i in $(seq 12); do cat in.txt; done >twelve.txt
check "sampling" 0 "$NMT" translate -m $M --threads 2 --sampling --seed 3 --temperature 5 -i twelve.txt
cp out sampled.txt
check "sampling, one thread, batches of 1" 0 "$NMT" translate -m $M --threads 1 --batch-size 1 --sampling --seed 3 --temperature 5 -i twelve.txt
cmp -s out sampled.txt || say_fail "sampling depends on threads or batches: $(diff out sampled.txt | head -5)"
[ "$(wc -l <sampled.txt)" -eq 60 ] && [ -z "$(sed -n 2p sampled.txt)" ] || say_fail "sampling kept neither lines nor empty lines"
[ "$(sort -u sampled.txt | wc -l)" -gt 5 ] || say_fail "sampling at temperature 5 drew the same lines again: $(sort -u sampled.txt)"
check "sampling, another seed" 0 "$NMT" translate -m $M $T --sampling --seed 4 --temperature 5 -i twelve.txt
cmp -s out sampled.txt && say_fail "seeds 3 and 4 drew the same translations"
check "top-k 1" 0 "$NMT" translate -m $M $T --sampling --sampling-topk 1 --seed 9 -i in.txt
cmp -s out greedy.txt || say_fail "top-k 1 sampling is not greedy: $(diff out greedy.txt | head -5)"
check "nucleus" 0 "$NMT" translate -m $M $T --sampling --sampling-topp 0.9 --temperature 2 -i in.txt
[ "$(wc -l <out)" -eq 5 ] || say_fail "nucleus sampling line count"
check "sampling option without --sampling" 2 "$NMT" translate -m $M $T --sampling-topk 5 -i in.txt
grep -q -- '--sampling-topk is for --sampling' err || say_fail "message: $(cat err)"
check "sampling with a beam" 2 "$NMT" translate -m $M $T --sampling -k 4 -i in.txt
grep -q 'it takes no --beam-size' err || say_fail "message: $(cat err)"
# --n-best N draws N samples a line (Moses lines, best score first); the single sample is among them.
check "samples" 0 "$NMT" translate -m $M $T --sampling --seed 3 --temperature 5 --n-best 3 -i in.txt
[ "$(wc -l <out)" -eq 11 ] || say_fail "3 samples of 3 lines and 1 of each of 2 empty ones: $(cat out)"
cp out samples.txt
check "one sample" 0 "$NMT" translate -m $M $T --sampling --seed 3 --temperature 5 -i in.txt
for i in 0 2 3; do
  grep -qxF "$(sed -n "$((i + 1))p" out)" <(awk -F' [|][|][|] ' -v i=$i '$1 == i { print $2 }' samples.txt) ||
    say_fail "line $i's sample is not among its 3 samples: $(cat samples.txt)"
done
check "temperature 0" 2 "$NMT" translate -m $M $T --sampling --temperature 0 -i in.txt
grep -q 'expected a number > 0' err || say_fail "message: $(cat err)"
check "top-p 1.5" 2 "$NMT" translate -m $M $T --sampling --sampling-topp 1.5 -i in.txt
# bf16 products where the CPU has them (same lines, in order); a clear refusal where it has not.
if grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null && [ "${NMT_GEMM:-}" != openblas ]; then
  check "bf16" 0 "$NMT" translate -m $M $T --precision bf16 -i in.txt
  [ "$(wc -l <out)" -eq 5 ] && [ -z "$(sed -n 2p out)" ] && [ -n "$(sed -n 3p out)" ] || say_fail "bf16 output: $(cat out)"
else
  check "bf16 unsupported" 2 "$NMT" translate -m $M $T --precision bf16 -i in.txt
  grep -q 'AVX512_BF16' err || say_fail "bf16 refusal message: $(cat err)"
fi
check "unknown precision" 2 "$NMT" translate -m $M $T --precision fp16 -i in.txt
grep -q "expected fp32, bf16, int8 or auto, got 'fp16'" err || say_fail "precision message: $(cat err)"

# n-best: `i ||| hypothesis ||| F0= logprob ||| score`, N per line (1 for an empty line), best first.
check "n-best" 0 "$NMT" translate -m $M $T -i in.txt --n-best 3 --print-alignment
cp out nbest.txt
grep -Evq '^[0-9]+ \|\|\| [^|]* \|\|\| F0= -?[0-9]+\.[0-9]+ \|\|\| -?[0-9]+\.[0-9]+ \|\|\|( [0-9]+-[0-9]+)*$' nbest.txt &&
  { say_fail "n-best format"; grep -Ev '^[0-9]+ \|\|\| [^|]* \|\|\| F0= ' nbest.txt | head -3; }
[ "$(cut -d' ' -f1 nbest.txt | tr '\n' ' ')" = "0 0 0 1 2 2 2 3 3 3 4 " ] || say_fail "n-best indices: $(cut -d' ' -f1 nbest.txt | tr '\n' ' ')"
awk -F' \\|\\|\\| ' '$1 == last && $4 + 0 > prev + 1e-9 { bad = 1 } { last = $1; prev = $4 }
  $1 == last { if (seen[$1 SUBSEP $2]++) bad = 1 } END { exit bad }' nbest.txt || say_fail "n-best not sorted or not distinct"
# The best of the n-best list is the translation, and its alignment points at real pieces.
awk -F' \\|\\|\\| ' '!($1 in best) { best[$1] = $2 } END { for (i = 0; i < 5; i++) print best[i] }' nbest.txt >best.txt
cmp -s best.txt all.txt || say_fail "n-best's first hypotheses differ from the translations"
# nmt score: one log-probability per pair, the same in any batch size. (Its equality with the
# decoder's own log-probabilities is a unit test: here a hypothesis's text could re-encode into other
# pieces than the decoder chose.)
awk -F' \\|\\|\\| ' 'NR == FNR { src[NR - 1] = $0; next } { print src[$1] > "src.txt"; print $2 > "hyp.txt" }' in.txt nbest.txt
check "score" 0 "$NMT" score -m $M -s src.txt -t hyp.txt --threads 2
cp out scores.txt
[ "$(wc -l <scores.txt)" -eq "$(wc -l <hyp.txt)" ] || say_fail "score line count"
check "score batch 1" 0 "$NMT" score -m $M $T -s src.txt -t hyp.txt --batch-size 1
paste out scores.txt | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 || $1 > 0) bad = 1 } END { exit bad }' ||
  say_fail "scores depend on the batch size"
check "score a checkpoint" 0 "$NMT" score -m $M/checkpoints/step-00000400.safetensors -s src.txt -t hyp.txt --threads 2
cmp -s out scores.txt || say_fail "score -m the last checkpoint differs from score -m the directory"
gzip -c src.txt >src.txt.gz
"$NMT" score -m $M $T -s src.txt.gz -t - <hyp.txt >gz-scores.txt 2>err && cmp -s gz-scores.txt scores.txt ||
  say_fail "score of a gzip source and a target on stdin: $(cat err)"
# --loss-json: its NLL is minus the sum of the scores; without smoothing the loss is the NLL, with it
# the loss is larger (the smoothed part spreads mass onto every piece).
check "score --loss-json" 0 "$NMT" score -m $M $T -s src.txt -t hyp.txt --loss-json loss.json
cmp -s out scores.txt || say_fail "--loss-json changed the scores"
check "score --loss-json eps 0" 0 "$NMT" score -m $M $T -s src.txt -t hyp.txt --loss-json loss0.json \
  --label-smoothing 0
awk -v loss="$(cat loss.json)" -v loss0="$(cat loss0.json)" '
  function field(s, k) { sub(".*\"" k "\": ", "", s); sub("[,}].*", "", s); return s + 0 }
  { sum += $1; lines++ }
  END {
    nll = field(loss, "nll_sum"); d = nll + sum; if (d < 0) d = -d
    if (d > 1e-4 * nll || field(loss, "tokens") < lines) exit 1
    if (field(loss0, "loss_sum") != field(loss0, "nll_sum") || field(loss, "loss_sum") <= nll) exit 1
  }' scores.txt || say_fail "--loss-json: $(cat loss.json) $(cat loss0.json) against the scores"
check "score --normalize" 0 "$NMT" score -m $M $T -s src.txt -t hyp.txt --normalize
paste out scores.txt | awk '{ if (!($1 <= 0 && $1 >= $2 - 1e-6)) bad = 1 } END { exit bad }' || say_fail "normalized scores"
head -3 hyp.txt >short.txt
check "score line counts" 1 "$NMT" score -m $M $T -s src.txt -t short.txt
grep -q "src.txt has more lines than short.txt" err || say_fail "line count message: $(cat err)"
check "score --precision int8" 2 "$NMT" score -m $M $T -s src.txt -t hyp.txt --precision int8
grep -q "expected fp32 or bf16, got 'int8'" err || say_fail "score --precision int8 message: $(cat err)"
# bf16 products: close to fp32's scores but not theirs, and the same on any thread count.
if grep -q avx512_bf16 /proc/cpuinfo && [ "${NMT_GEMM:-}" != openblas ]; then
  check "score bf16" 0 "$NMT" score -m $M -s src.txt -t hyp.txt --precision bf16 --threads 1
  cp out bf16-scores.txt
  check "score bf16, 2 threads" 0 "$NMT" score -m $M -s src.txt -t hyp.txt --precision bf16 --threads 2
  cmp -s out bf16-scores.txt || say_fail "bf16 scores depend on the thread count"
  cmp -s bf16-scores.txt scores.txt && say_fail "bf16 scores equal fp32's: bf16 did not multiply"
  paste bf16-scores.txt scores.txt | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 0.05 * (1 - $2)) bad = 1 } END { exit bad }' ||
    say_fail "bf16 scores far from fp32's"
fi

# Alignment maps: one SVG per line, numbered from 0 when there are several; `-` draws on stderr.
printf 'the cat sees a dog\n' | "$NMT" translate -m $M $T --alignment-map map.svg -q >/dev/null 2>err || say_fail "map: $(cat err)"
head -c 5 map.svg 2>/dev/null | grep -q '<?xml' || say_fail "map.svg not written"
mkdir maps
check "numbered maps" 0 "$NMT" translate -m $M $T -i in.txt --alignment-map maps/m.svg
ls maps/m.0.svg maps/m.2.svg maps/m.3.svg >/dev/null 2>&1 && [ ! -e maps/m.1.svg ] && [ ! -e maps/m.4.svg ] ||
  say_fail "numbered maps: $(ls maps 2>&1)"
printf 'the big cat\n' | "$NMT" translate -m $M $T --alignment-map - -q >/dev/null 2>map.err
grep -q 'sentence 0: the big cat' map.err && grep -q '[░▒▓█]' map.err || say_fail "terminal map: $(cat map.err)"

# Invalid UTF-8: an error naming the line, or with --skip-invalid an empty line and a warning.
printf 'the cat\n\xff\xfe dog\nthe dog\n' >bad.txt
check "invalid UTF-8" 1 "$NMT" translate -m $M $T -i bad.txt
grep -q 'bad.txt:2: invalid UTF-8 at byte 1' err || say_fail "invalid UTF-8 message: $(cat err)"
# The lines before the bad one are translated and written first.
cp out before-error.txt
printf 'the cat\n' | "$NMT" translate -m $M $T -q >cat.txt
cmp -s before-error.txt cat.txt || say_fail "line 1's translation was not written before the error: '$(cat before-error.txt)'"
check "--skip-invalid" 0 "$NMT" translate -m $M $T -i bad.txt --skip-invalid
[ "$(wc -l <out)" -eq 3 ] && [ -z "$(sed -n 2p out)" ] || say_fail "--skip-invalid output"
grep -q 'warning: bad.txt:2: invalid UTF-8' err || say_fail "--skip-invalid warning: $(cat err)"

# Output errors: a failed write is reported and leaves no half-written file; a closed pipe ends
# translate quietly (SIGPIPE: 141, as for every command).
NMT_FAULT=write:2 "$NMT" translate -m $M $T -i in.txt -o faulty.txt >/dev/null 2>err
[ $? -eq 1 ] && grep -q 'faulty.txt: write failed' err && [ ! -e faulty.txt ] || say_fail "write fault: $(cat err)"
check "-o" 0 "$NMT" translate -m $M $T -i in.txt -o written.txt
cmp -s written.txt all.txt || say_fail "-o output differs"
# More output than a pipe holds (64 KiB), so that nmt cannot finish before head has exited.
yes 'the small dog runs' | head -n 20000 >many.txt
"$NMT" translate -m $M $T -i many.txt --greedy --batch-size 8 2>pipe.err | head -n 1 >/dev/null
status=${PIPESTATUS[0]}
[ "$status" -eq 141 ] && [ ! -s pipe.err ] || say_fail "closed pipe: exit $status, $(cat pipe.err)"

# Input guards: an over-long line is skipped (an empty line) or cropped, with a warning naming it;
# a 20,000-character line costs nothing (it used to ask for gigabytes).
python3 -c "print('the cat'); print(' '.join(['the cat sees a dog'] * 4000)); print('the dog')" >long.txt
check "over-long line" 0 "$NMT" translate -m $M $T -i long.txt
[ "$(wc -l <out)" -eq 3 ] && [ -z "$(sed -n 2p out)" ] && [ -n "$(sed -n 3p out)" ] || say_fail "over-long output: $(cat out)"
grep -q 'warning: long.txt:2: [0-9]* pieces, more than --max-input-length 1000' err || say_fail "over-long warning: $(cat err)"
check "--max-length-crop" 0 "$NMT" translate -m $M $T -i long.txt --max-length 8 --max-input-length-crop
[ -n "$(sed -n 2p out)" ] && grep -q 'long.txt:2: [0-9]* pieces; translating the first 8' err || say_fail "crop: $(cat err)"
# Batches bounded by tokens give the same translations; `-i -` is stdin; gzip input is read.
check "--batch-tokens" 0 "$NMT" translate -m $M $T -i in.txt --batch-tokens 3
cmp -s out all.txt || say_fail "--batch-tokens changed the translations"
gzip -c in.txt >in.txt.gz
check "gzip input" 0 "$NMT" translate -m $M $T -i in.txt.gz --no-stream
cmp -s out all.txt || say_fail "gzip input differs"
"$NMT" translate -m $M $T -i - <in.txt >dash.txt 2>err && cmp -s dash.txt all.txt || say_fail "-i -: $(cat err)"

# Streaming: a coprocess gets each answer before it sends the next line.
# Bash unsets TR_PID once it reaps the coprocess, which can happen as soon as its input closes, so the
# PID to wait for is kept (bash keeps the exit status of a reaped child for `wait`).
coproc TR { "$NMT" translate -m $M $T -q 2>&1; }
tr_pid=$TR_PID
for l in 'the cat sees a dog' 'big red house'; do
  echo "$l" >&"${TR[1]}"
  IFS= read -r -t 60 answer <&"${TR[0]}" || { say_fail "--stream: no answer to '$l' within 60 s"; break; }
  [ "$answer" = "$(grep -n . in.txt | grep ":$l\$" | cut -d: -f1 | xargs -I{} sed -n {}p all.txt)" ] ||
    say_fail "--stream answered '$answer' to '$l'"
done
exec {TR[1]}>&-
wait "$tr_pid" || say_fail "--stream coprocess exit"

# Options are matched exactly; habits from Marian and fairseq are aliases; a repeated option is refused.
check "abbreviated option" 2 "$NMT" translate -m $M --max-length-r 3
grep -q "unknown option '--max-length-r' (options are never abbreviated; did you mean --max-length-ratio?)" err ||
  say_fail "abbreviation message: $(cat err)"
check "unknown option" 2 "$NMT" translate -m $M --frobnicate
check "max output length 0" 2 "$NMT" translate -m $M --max-output-length 0
grep -q -- "--max-output-length: expected an integer from 1 to 65536, got '0'" err || say_fail "bound message: $(cat err)"
check "-m twice" 2 "$NMT" translate -m $M -m other
grep -q -- "-m given more than once" err || say_fail "repeat message: $(cat err)"
check "beam aliases" 0 "$NMT" translate -m $M $T -i in.txt --nbest 2 --beam 3 --lenpen 1.0 --mini-batch 2
cp out fairseq.txt
check "beam aliases" 0 "$NMT" translate -m $M $T -i in.txt --n-best 2 -b 3 --length-penalty 1.0 --batch-size 2
cmp -s out fairseq.txt || say_fail "aliases differ from the options they stand for"
check "--cpu-threads" 0 "$NMT" translate -m $M --cpu-threads 1 -i in.txt --max-length 1000
cmp -s out all.txt || say_fail "--cpu-threads, --max-length: output differs"
check "--alignment hard" 0 "$NMT" translate -m $M $T -i in.txt --n-best 3 --alignment hard
cmp -s out nbest.txt || say_fail "--alignment hard differs from --print-alignment"
check "--alignment soft" 2 "$NMT" translate -m $M $T -i in.txt --alignment soft
# Word alignments count the words of the text; --print-pieces shows what piece alignments count.
check "word alignment" 0 "$NMT" translate -m $M $T -i in.txt --print-alignment --alignment-unit word --print-pieces
awk -F' \\|\\|\\| ' 'NR == FNR { words[NR] = split($0, w, " "); next }
  words[FNR] > 0 { n = split($1, t, " "); m = split($2, a, " ")
    for (k = 1; k <= m; k++) { split(a[k], st, "-"); if (st[1] >= words[FNR] || st[2] >= n) bad = 1 }
    if (split($3, sp, " ") < words[FNR]) bad = 1 }
  END { exit bad }' in.txt out || say_fail "word alignments out of range: $(cat out)"
[ "$(grep -v '^ |||' out | awk -F' \\|\\|\\| ' '{ print NF }' | sort -u | tr '\n' ' ')" = "4 " ] || say_fail "--print-pieces fields: $(cat out)"

# `nmt average` writes a model directory every command takes: the mean of the one final checkpoint
# is the model itself.
check "average" 0 "$NMT" average -q -o averaged --last 1 $M
check "translate the average" 0 "$NMT" translate -m averaged $T -i in.txt
cmp -s out all.txt || say_fail "the averaged model translates differently"
check "score with the average" 0 "$NMT" score -m averaged $T -s src.txt -t hyp.txt
cmp -s out scores.txt || say_fail "the averaged model scores differently"

# Usage errors and broken model directories.
check "n-best above beam" 2 "$NMT" translate -m $M --beam-size 2 --n-best 3
check "greedy n-best" 2 "$NMT" translate -m $M --greedy --n-best 2
check "no model" 2 "$NMT" translate
check "missing model dir" 1 "$NMT" translate -m no-such-dir
grep -q 'no-such-dir' err || say_fail "missing dir message: $(cat err)"
mkdir empty-dir
check "empty model dir" 1 "$NMT" translate -m empty-dir
grep -q 'empty-dir/model.safetensors' err || say_fail "empty dir message: $(cat err)"
mkdir broken && cp $M/spm.model broken/ && head -c 1000 $M/model.safetensors >broken/model.safetensors
check "truncated model" 1 "$NMT" translate -m broken </dev/null
grep -q 'broken/model.safetensors' err || say_fail "truncated model message: $(cat err)"
mkdir no-spm && cp $M/model.safetensors no-spm/
check "missing spm.model" 1 "$NMT" score -m no-spm -s in.txt -t in.txt
grep -q 'no-spm/spm.model' err || say_fail "missing spm message: $(cat err)"

[ $fail -eq 0 ] && echo "e2e_translate: all passed"
exit $fail
