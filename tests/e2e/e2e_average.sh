#!/usr/bin/env bash
# `nmt average` end to end: the mean of explicit files and of the last N checkpoints of a model
# directory (read back through the safetensors header with od), written as a model directory (with
# the vocabulary and config beside it) or as a bare weights file, and its errors and exit codes.
# (That the directory translates: e2e_translate.)
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
# The first float of the data section: 8-byte header length N, N header bytes, then the data.
first_float() {
  local n; n=$(od -An -t u8 -N 8 "$1" | tr -d ' ')
  od -An -t f4 -j $((8 + n)) -N 4 "$1" | tr -d ' '
}
mkdir -p "$tmp/run/checkpoints"
for s in 1 2 3 10; do tiny_model --constant "$tmp/run/checkpoints/step-$(printf %08d $s).safetensors" "$s" || fail=1; done
tiny_model --constant "$tmp/run/checkpoints/step-00000011.safetensors.tmp.99" 1000 # an interrupted write: ignored

check "explicit files" 0 "$NMT" average -o "$tmp/a.safetensors" "$tmp/run/checkpoints/step-00000001.safetensors" "$tmp/run/checkpoints/step-00000002.safetensors"
[ "$(first_float "$tmp/a.safetensors")" = "1.5" ] || { echo "FAIL mean of 1 and 2 is $(first_float "$tmp/a.safetensors")"; fail=1; }
check "--last 2" 0 "$NMT" average -o "$tmp/b.safetensors" --last 2 "$tmp/run"
[ "$(first_float "$tmp/b.safetensors")" = "6.5" ] || { echo "FAIL mean of steps 3 and 10 is $(first_float "$tmp/b.safetensors")"; fail=1; }
grep -q "step-00000003.safetensors" "$tmp/err" && grep -q "step-00000010.safetensors" "$tmp/err" || { echo "FAIL listed inputs"; cat "$tmp/err"; fail=1; }
check "--last 3 --quiet" 0 "$NMT" average -q -o "$tmp/c.safetensors" --last 3 "$tmp/run"
[ -s "$tmp/err" ] && say_fail "--quiet printed"
[ "$(first_float "$tmp/c.safetensors")" = "5" ] || { echo "FAIL mean of 2, 3, 10 is $(first_float "$tmp/c.safetensors")"; fail=1; }

tiny_model --constant "$tmp/other.safetensors" 1 4
check "different configs" 1 "$NMT" average -o "$tmp/d.safetensors" "$tmp/a.safetensors" "$tmp/other.safetensors"
grep -q "its model differs from .* (heads: 4, not 2)" "$tmp/err" || { echo "FAIL config message"; cat "$tmp/err"; fail=1; }
check "--ema without moving averages" 1 "$NMT" average --ema -o "$tmp/d.safetensors" --last 2 "$tmp/run"
grep -q "step-00000003.safetensors: no ema.\* tensors (a checkpoint of a run without train.ema_decay" "$tmp/err" ||
  { echo "FAIL --ema message"; cat "$tmp/err"; fail=1; }
check "too few checkpoints" 1 "$NMT" average -o "$tmp/d.safetensors" --last 5 "$tmp/run"
grep -q "holds 4 checkpoints, fewer than --last 5" "$tmp/err" || { echo "FAIL --last message"; cat "$tmp/err"; fail=1; }
printf 'not a model' >"$tmp/junk.safetensors"
check "foreign file" 1 "$NMT" average -o "$tmp/d.safetensors" "$tmp/junk.safetensors"
grep -q "junk.safetensors: not a safetensors file" "$tmp/err" || { echo "FAIL foreign message"; cat "$tmp/err"; fail=1; }
[ -e "$tmp/d.safetensors" ] && say_fail "a failed average left an output"
# A model directory: weights, and the spm.model and config.yaml of the inputs' directory.
printf 'a vocabulary' >"$tmp/run/spm.model"
printf 'model: {}\n' >"$tmp/run/config.yaml"
check "model directory" 0 "$NMT" average -q -o "$tmp/avg" --last 2 "$tmp/run"
[ "$(first_float "$tmp/avg/model.safetensors")" = "6.5" ] || say_fail "model directory weights"
cmp -s "$tmp/run/spm.model" "$tmp/avg/spm.model" && cmp -s "$tmp/run/config.yaml" "$tmp/avg/config.yaml" ||
  say_fail "model directory: spm.model or config.yaml not copied"
# A model directory that holds a model is written again only with --overwrite.
check "onto a model" 2 "$NMT" average -q -o "$tmp/avg" --last 3 "$tmp/run"
grep -q "avg already holds a model (.*avg/model.safetensors).*--overwrite" "$tmp/err" || say_fail "onto a model: $(cat "$tmp/err")"
[ "$(first_float "$tmp/avg/model.safetensors")" = "6.5" ] || say_fail "a refused average changed the model"
check "--overwrite" 0 "$NMT" average -q -o "$tmp/avg" --last 3 "$tmp/run" --overwrite
[ "$(first_float "$tmp/avg/model.safetensors")" != "6.5" ] || say_fail "--overwrite did not replace the model"
# Operands may come before and after the options.
check "operands around options" 0 "$NMT" average "$tmp/run/checkpoints/step-00000001.safetensors" -q -o "$tmp/avg2" \
  "$tmp/run/checkpoints/step-00000003.safetensors"
[ "$(first_float "$tmp/avg2/model.safetensors")" = "2" ] || say_fail "mean of 1 and 3"
mkdir -p "$tmp/other/checkpoints" && tiny_model --constant "$tmp/other/checkpoints/step-00000001.safetensors" 1
printf 'another vocabulary' >"$tmp/other/spm.model"
check "two vocabularies" 1 "$NMT" average -o "$tmp/avg3" "$tmp/run/checkpoints/step-00000001.safetensors" \
  "$tmp/other/checkpoints/step-00000001.safetensors"
grep -q "do not share one vocabulary" "$tmp/err" || { echo "FAIL vocabulary message"; cat "$tmp/err"; fail=1; }
check "no vocabulary" 1 "$NMT" average -o "$tmp/avg4" "$tmp/a.safetensors"
grep -q "spm.model: missing" "$tmp/err" || { echo "FAIL missing vocabulary message"; cat "$tmp/err"; fail=1; }
check "no output" 2 "$NMT" average "$tmp/a.safetensors"
check "no inputs" 2 "$NMT" average -o "$tmp/d.safetensors"
check "--last with two dirs" 2 "$NMT" average -o "$tmp/d.safetensors" --last 2 "$tmp/run" "$tmp/run"
check "--last zero" 2 "$NMT" average -o "$tmp/d.safetensors" --last 0 "$tmp/run"
[ $fail -eq 0 ] && echo "e2e_average: all passed"
exit $fail
