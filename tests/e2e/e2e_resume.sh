#!/usr/bin/env bash
# Training always resumes or starts again by itself: a run killed, or whose first checkpoint failed
# to write (full disk, EIO on fsync), left only a log: the rerun starts again and ends bit for bit as
# an uninterrupted run. Damaged checkpoints are set aside so that the run's new ones are not pruned
# for them; --overwrite starts again with nothing of the old run. Weighted corpora resume the same way.
set -u
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model --corpus toy 300
tiny_model --config c.yaml straight
train=("$NMT" train c.yaml --threads 1 --quiet)
"${train[@]}" 2>err || { echo "FAIL the straight run: $(cat err)"; exit 1; }
# The tensors of a safetensors file: what follows its 8-byte header length and JSON header (a
# checkpoint's header holds the training time).
tensors() { local len; len=$(od -An -t u8 -N8 "$1" | tr -d ' '); tail -c +$((9 + len)) "$1"; }
same_as_straight() { # NAME DIR: DIR's model and last checkpoint are the straight run's
  cmp -s straight/model.safetensors "$2/model.safetensors" &&
    cmp -s <(tensors straight/checkpoints/step-00000020.safetensors) <(tensors "$2/checkpoints/step-00000020.safetensors") ||
    say_fail "$1: the rerun differs from an uninterrupted run"
}

# The first checkpoint's write or fsync fails: only a log is left, and the rerun starts again.
for fault in write:21 fsync:6 fsync:7; do
  NMT_FAULT=$fault "${train[@]}" --set output=failed 2>err && say_fail "$fault: the run did not fail"
  grep -q "checkpoints/step-00000010\|train.log.jsonl" err || say_fail "$fault: '$(cat err)'"
  [ -s failed/train.log.jsonl ] || say_fail "$fault: no log was left"
  check "rerun after $fault" 0 "${train[@]}" --set output=failed
  same_as_straight "$fault" failed
  rm -rf failed
done
# The model's write after the last checkpoint fails (the 11th fsync here): the rerun resumes at the
# end and writes the model of that checkpoint, not leave the one of the checkpoint before.
NMT_FAULT=fsync:11 "${train[@]}" --set output=failed 2>err && say_fail "fsync:11: the run did not fail"
grep -q "model.safetensors" err && [ -f failed/checkpoints/step-00000020.safetensors ] || say_fail "fsync:11: '$(cat err)'"
check "rerun after fsync:11" 0 "${train[@]}" --set output=failed
same_as_straight fsync:11 failed
rm -rf failed
# Killed with SIGKILL at some moment of its first second (vocabulary, caches, steps or a checkpoint
# being written): the rerun always completes the same run.
for delay in 0.05 0.15 0.3 0.6; do
  "${train[@]}" --set output=killed & job=$!
  sleep $delay
  kill -9 $job 2>/dev/null
  wait $job 2>/dev/null
  check "rerun after kill -9 at ${delay}s" 0 "${train[@]}" --set output=killed
  same_as_straight "kill -9 at ${delay}s" killed
  rm -rf killed
done

# Weighted corpora with subword sampling resume as one corpus does: stopped at step 10 and run on,
# the same model as 20 steps straight.
weighted=(--set 'data.train=[{src: toy.train.en, tgt: toy.train.de}, {src: toy.train.en, tgt: toy.train.de, weight: 2}]'
          --set vocab.sampling_alpha=0.2)
"${train[@]}" --set output=wstraight "${weighted[@]}" 2>err || say_fail "weighted, straight: $(cat err)"
"${train[@]}" --set output=wresumed "${weighted[@]}" --set train.max_steps=10 2>err || say_fail "weighted, 10 steps: $(cat err)"
check "weighted, resumed" 0 "${train[@]}" --set output=wresumed "${weighted[@]}"
cmp -s wstraight/model.safetensors wresumed/model.safetensors || say_fail "weighted corpora: the resumed run differs"
cmp -s straight/model.safetensors wstraight/model.safetensors && say_fail "weighted corpora: the same model as one corpus"

# A model or a checkpoint is still protected.
cp -r straight kept && rm -r kept/checkpoints
check "a model without checkpoints" 1 "${train[@]}" --set output=kept
grep -qF "kept already holds a trained model (model.safetensors) and no checkpoint to resume from" err ||
  say_fail "a model without checkpoints: '$(cat err)'"

# Damaged checkpoints of later steps than the one resumed are set aside with a warning, and the
# checkpoints the run writes next are kept.
"${train[@]}" --set output=damaged --set train.max_steps=50 --set train.keep_last=10 2>err || say_fail "50 steps: $(cat err)"
for s in 30 40 50; do
  f=damaged/checkpoints/step-000000$s.safetensors
  printf '\x55' | dd of=$f bs=1 seek=$(($(stat -c %s $f) - 5)) conv=notrunc status=none
done
check "resume among damaged checkpoints" 0 "${train[@]}" --set output=damaged --set train.max_steps=30
grep -qF "warning: the damaged checkpoint is set aside as $tmp/damaged/checkpoints/step-00000050.safetensors.damaged" err ||
  say_fail "no warning on setting a damaged checkpoint aside: '$(cat err)'"
[ "$(ls damaged/checkpoints | tr '\n' ' ')" = "step-00000020.safetensors step-00000030.safetensors step-00000030.safetensors.damaged step-00000040.safetensors.damaged step-00000050.safetensors.damaged " ] ||
  say_fail "after resuming among damaged checkpoints: $(ls damaged/checkpoints | tr '\n' ' ')"
check "resume after the set-aside" 0 "$NMT" train c.yaml --threads 1 --set output=damaged --set train.max_steps=40
grep -q "resuming from .*step-00000030" err || say_fail "the new checkpoint was not resumed from: '$(cat err)'"

# --overwrite starts again even where checkpoints exist, says so, and keeps nothing of the old run.
cp -r straight again
check "--overwrite over checkpoints" 0 "$NMT" train c.yaml --threads 1 --set output=again --set train.max_steps=10 --overwrite
grep -qF -- "--overwrite: starting again from step 0; deleted the previous run's 4 files and 2 checkpoints in $tmp/again" err ||
  say_fail "--overwrite did not say it starts again: '$(grep -v '^ ' err | head -5)'"
grep -q "resuming" err && say_fail "--overwrite resumed"
[ "$(ls again/checkpoints | tr '\n' ' ')" = "step-00000010.safetensors " ] || say_fail "--overwrite kept: $(ls again/checkpoints)"
"${train[@]}" --set output=ten --set train.max_steps=10 || say_fail "10 steps"
cmp -s <(tensors again/checkpoints/step-00000010.safetensors) <(tensors ten/checkpoints/step-00000010.safetensors) ||
  say_fail "--overwrite is not a fresh run"

# output: . beside the user's own config.yaml: their file (comments, layout) is never replaced; the
# resolved config goes to config.resolved.yaml, which a resume and `nmt shortlist` read.
mkdir own && cp toy.train.* own/
sed -e 's/^output: straight/output: .  # train here/' -e 's|toy.train|./toy.train|g' c.yaml >own/config.yaml
echo "# my notes" >>own/config.yaml
cp own/config.yaml mine.yaml
(cd own && "$NMT" train config.yaml --threads 1 --quiet --set train.max_steps=10) 2>err || say_fail "output: .: $(cat err)"
cmp -s own/config.yaml mine.yaml || say_fail "the user's config.yaml was replaced: $(head -n 3 own/config.yaml)"
head -n 1 own/config.resolved.yaml | grep -q "^# The resolved configuration of an nmt run" ||
  say_fail "no config.resolved.yaml"
(cd own && "$NMT" train config.yaml --threads 1 --set train.max_steps=20 --set train.batch_tokens=250) 2>err ||
  say_fail "resume with output: .: $(cat err)"
grep -q "resuming from" err && grep -qF "warning: train.batch_tokens is 250 but the run being resumed used 300" err ||
  say_fail "the resume did not compare with config.resolved.yaml: $(grep -v '^ ' err | head -3)"
cmp -s own/config.yaml mine.yaml || say_fail "the resume replaced the user's config.yaml"
grep -q "batch_tokens: 250" own/config.resolved.yaml || say_fail "config.resolved.yaml is not the resumed run's"
check "shortlist from config.resolved.yaml" 0 "$NMT" shortlist -m own -q -k 5 --frequent 5
mkfifo fifo_dir_config && mkdir fifo_model && cp straight/model.safetensors straight/spm.model fifo_model/ &&
  mv fifo_dir_config fifo_model/config.yaml
check_timeout=20 check "a FIFO as config.yaml" 1 "$NMT" shortlist -m fifo_model -q
grep -q "training corpus cannot be found" err || say_fail "a FIFO as config.yaml: '$(cat err)'"

# A run refused at start leaves no new directory behind (its parents included); a vocab.size the
# corpus cannot give is named.
printf '\n\n' >blank.en && printf 'a\nb\n' >ab.de
check "no pairs" 1 "${train[@]}" --set 'data.train={src: blank.en, tgt: ab.de}' --set output=new/dir
[ -e new ] && say_fail "a refused run left $(find new | tr '\n' ' ')"
mkdir there
check "vocab.size too large" 1 "${train[@]}" --set vocab.size=500 --set output=there/dir
grep -q "vocab.size 500 is more pieces than this corpus gives: SentencePiece allows at most [0-9]* here; set vocab.size to" err ||
  say_fail "vocab.size too large: '$(cat err)'"
[ -d there ] && [ ! -e there/dir ] || say_fail "a refused run left there/dir, or removed its parent"

[ $fail -eq 0 ] && echo "e2e_resume: all checks passed"
exit $fail
