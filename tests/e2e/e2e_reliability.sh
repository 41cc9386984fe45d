#!/usr/bin/env bash
# What a careless or hostile user can do to nmt's files, and the exact answer to each: outputs are
# written through symbolic links, FIFOs and /dev/null, never replacing them; an output that is empty,
# a directory or one of the inputs is a usage error before any work; a trained model is never
# overwritten by a fresh start; a refused run changes no file; changed settings are named on resume;
# another vocabulary of the same size, a flipped bit in a checkpoint, a FIFO or /dev/zero in a model
# directory, an endless line and a corpus without pairs each get a message that says what is wrong.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
check_timeout=60
said() { # said NAME TEXT: the last command's stderr holds TEXT
  grep -qF -- "$2" err || { say_fail "$1: stderr lacks '$2':"; cat err; }
}

. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model --corpus toy 300
tiny_model --config config.yaml model
train=("$NMT" train config.yaml --threads 1 --quiet)
check "train" 0 "${train[@]}"
[ -s model/model.safetensors ] && [ -s model/checkpoints/step-00000020.safetensors ] || { echo "FAIL no model"; exit 1; }
printf 'the cat sees a dog\na big house\n' >in.txt
tr_base=("$NMT" translate --threads 1 -q --greedy)
tr=("${tr_base[@]}" -m model)

# ---- outputs are written through what is there ----
echo old >real.txt && chmod 640 real.txt && ln -s real.txt link.txt
check "-o onto a symlink" 0 "${tr[@]}" -i in.txt -o link.txt
[ -L link.txt ] || say_fail "-o replaced the symbolic link"
[ "$(wc -l <real.txt)" -eq 2 ] || say_fail "-o did not write the file the link names"
[ "$(stat -c %a real.txt)" = 640 ] || say_fail "-o changed the mode to $(stat -c %a real.txt)"
mkfifo fifo
cat fifo >from_fifo & reader=$!
check "-o onto a FIFO" 0 "${tr[@]}" -i in.txt -o fifo
wait $reader
[ -p fifo ] || say_fail "-o replaced the FIFO"
[ "$(wc -l <from_fifo)" -eq 2 ] || say_fail "the FIFO's reader got $(wc -l <from_fifo) lines"
check "-o /dev/null" 0 "${tr[@]}" -i in.txt -o /dev/null
[ -c /dev/null ] || say_fail "/dev/null is no longer a device"
ls | grep -q '\.tmp\.' && say_fail "a temporary was left: $(ls | grep '\.tmp\.')"

# ---- outputs that are a mistake: exit 2 before any work ----
check "-o ''" 2 "${tr[@]}" -i in.txt -o ''
said "-o ''" "nmt translate: --output '': an empty path; name the file to write"
mkdir adir
check "-o a directory" 2 "${tr[@]}" -i in.txt -o adir
said "-o a directory" "nmt translate: --output adir: a directory; name the file to write in it"
cp in.txt same.txt
check "-o onto -i" 2 "${tr[@]}" -i same.txt -o same.txt
said "-o onto -i" "nmt translate: --output same.txt is also an input (--input same.txt): writing it would destroy what is read"
cmp -s in.txt same.txt || say_fail "-o onto -i changed the input"
check "--alignment-map onto -i" 2 "${tr[@]}" -i same.txt --alignment-map same.txt
check "average -o onto its input" 2 "$NMT" average -o model/checkpoints/step-00000020.safetensors \
  model/checkpoints/step-00000010.safetensors model/checkpoints/step-00000020.safetensors
said "average -o onto its input" "is also an input (model/checkpoints/step-00000020.safetensors)"
check "average --last -o onto a checkpoint" 2 "$NMT" average --last 2 -o model/checkpoints/step-00000010.safetensors model
check "average -o ''" 2 "$NMT" average -o '' model/model.safetensors
check "plot -o a directory" 2 "$NMT" plot -o adir model
check "plot -o onto the log" 2 "$NMT" plot -o model/train.log.jsonl model
check "vocab --output a directory" 2 "$NMT" vocab --input toy.train.en --size 40 --output adir/
touch x.model
check "vocab --output onto its input" 2 "$NMT" vocab --input toy.train.en,x.model --size 40 --output x
said "vocab --output onto its input" "--output x.model is also an input (--input x.model)"
check "score --loss-json ''" 2 "$NMT" score -m model -s in.txt -t in.txt --loss-json ''
touch afile
check "train output a file" 1 "${train[@]}" --set output=afile
said "train output a file" "nmt train: output $tmp/afile: not a directory (output names the model directory to train into)"
check "train output ''" 2 "${train[@]}" --set "output=''"
said "train output ''" "nmt train: --set output='': output: an empty path; name it (or leave the key out for its default)"
check "train --set =1" 2 "${train[@]}" --set =1
said "train --set =1" "nmt train: --set =1: expected section.key=value"

# ---- training never destroys a trained model ----
cp -r model kept
rm -r kept/checkpoints
sum_before=$(cd kept && sha256sum model.safetensors config.yaml train.log.jsonl)
check "fresh start over a model" 1 "${train[@]}" --set output=kept
said "fresh start over a model" "kept already holds a trained model (model.safetensors) and no checkpoint to resume from: starting again from step 0 would overwrite it. Train into a new output directory, fine-tune from it with train.init_from: $tmp/kept,"
said "fresh start over a model" "or pass --overwrite to start again here"
[ "$(cd kept && sha256sum model.safetensors config.yaml train.log.jsonl)" = "$sum_before" ] ||
  say_fail "the refused start changed a file"
[ ! -e kept/checkpoints ] || [ -z "$(ls kept/checkpoints)" ] || say_fail "the refused start wrote a checkpoint"
check "--overwrite" 0 "${train[@]}" --set output=kept --overwrite
[ -s kept/checkpoints/step-00000020.safetensors ] || say_fail "--overwrite did not train"

# A changed setting is named; the new value is used.
check "resume with a changed batch" 0 "${train[@]}" --set train.max_steps=30 --set train.batch_tokens=250
said "resume with a changed batch" "warning: train.batch_tokens is 250 but the run being resumed used 300: the continuation uses the new value and is not bit-identical"
# (the values as config.yaml holds them: words, shortest numbers, pairs)
check "resume with a changed schedule" 0 "${train[@]}" --set train.max_steps=30 --set train.batch_tokens=250 \
  --set train.optimizer.schedule=cosine --set train.optimizer.decay_steps=1000 --set train.optimizer.betas=[0.9,0.99]
said "resume with a changed schedule" "warning: train.optimizer.schedule is cosine but the run being resumed used inverse_sqrt"
said "resume with a changed schedule" "warning: train.optimizer.decay_steps is 1000 but the run being resumed used 0"
said "resume with a changed schedule" "warning: train.optimizer.betas is [0.9, 0.99] but the run being resumed used [0.9, 0.98]"
cp toy.train.en toy.orig.en && sed -i '1s/.*/the red house/' toy.train.en
check "resume on changed text" 0 "${train[@]}" --set train.max_steps=20 --set train.batch_tokens=250
said "resume on changed text" "warning: data.train ($tmp/toy.train.en, $tmp/toy.train.de) is not the text the run being resumed was trained on"
rm model/corpus-train.bin # the checkpoint, not the corpus cache, remembers the text trained on
check "resume on changed text without its cache" 0 "${train[@]}" --set train.max_steps=20 --set train.batch_tokens=250
said "resume on changed text without its cache" "warning: data.train ($tmp/toy.train.en, $tmp/toy.train.de) is not the text the run being resumed was trained on"
mv toy.orig.en toy.train.en
# A changed setting the training text depends on is named, and not said again as changed text.
check "resume with a changed max_length" 0 "${train[@]}" --set train.max_steps=20 --set train.batch_tokens=250 \
  --set data.max_length=77
said "resume with a changed max_length" "warning: data.max_length is 77 but the run being resumed used 128"
! grep -q "is not the text" err || say_fail "resume with a changed max_length: warned twice: $(cat err)"
check "resume with another vocab.size" 1 "${train[@]}" --set train.max_steps=40 --set vocab.size=50
said "resume with another vocab.size" "vocab.size is 50 but"
said "resume with another vocab.size" "/model/spm.model, trained at the first run into this directory, has 40 pieces"
grep -q "batch_tokens: 250" model/config.yaml || say_fail "config.yaml is not the resumed run's"
grep -q "size: 50" model/config.yaml && say_fail "the refused resume rewrote config.yaml"

# A flipped bit in the newest checkpoint is damage: skipped with a warning, and it does not outlive
# the checkpoint written after resuming from the one before: it is set aside.
newest=model/checkpoints/step-00000030.safetensors
size=$(stat -c %s $newest)
printf '\x55' | dd of=$newest bs=1 seek=$((size - 5)) conv=notrunc status=none
check "flipped bit" 0 "${train[@]}" --set train.max_steps=30 --set train.batch_tokens=250
said "flipped bit" "warning: skipping a damaged checkpoint: $tmp/model/checkpoints/step-00000030.safetensors: damaged: the tensor data does not match the checksum"
"$NMT" average -o probe.safetensors $newest >/dev/null 2>&1 || say_fail "the damaged checkpoint was not replaced"
[ "$(ls model/checkpoints | grep -c 'safetensors$')" -eq 2 ] || say_fail "keep_last 2: $(ls model/checkpoints)"
[ -e $newest.damaged ] || say_fail "the damaged checkpoint was not set aside"
# A damaged checkpoint of a later step must not outlive the one written after it.
head -c 1000 /dev/urandom >model/checkpoints/step-00000099.safetensors
check "a damaged later checkpoint" 0 "${train[@]}" --set train.max_steps=40 --set train.batch_tokens=250
said "a damaged later checkpoint" "warning: skipping a damaged checkpoint: $tmp/model/checkpoints/step-00000099.safetensors"
[ "$(ls model/checkpoints | tr '\n' ' ')" = "step-00000030.safetensors step-00000030.safetensors.damaged step-00000040.safetensors step-00000099.safetensors.damaged " ] ||
  say_fail "after pruning: $(ls model/checkpoints)"
# A config.yaml that no longer loads: the resume goes on without the comparison, and says so; a
# directory whose checkpoints are all damaged is no resume, so its config.yaml is not read at all.
cp -r model broken
printf '%s\nmodel: [\n' "$(head -n 1 model/config.yaml)" >model/config.yaml # nmt's own, damaged
check "resume with a broken config.yaml" 0 "${train[@]}" --set train.max_steps=50 --set train.batch_tokens=250
said "resume with a broken config.yaml" "warning: cannot compare with the settings of the run being resumed: "
grep -q "batch_tokens: 250" model/config.yaml || say_fail "the resume did not write config.yaml again"
echo 'model: [' >broken/config.yaml
for c in broken/checkpoints/*; do head -c 100 /dev/urandom >"$c"; done
check "no checkpoint left, broken config.yaml" 1 "${train[@]}" --set output=broken
said "no checkpoint left, broken config.yaml" "and 2 checkpoints, none usable to resume from"
grep -qF "cannot compare" err && say_fail "a fresh start read the config.yaml of a run it does not resume"

# Another vocabulary of the same size: refused by its fingerprint.
cp -r model other
"$NMT" vocab --input toy.train.de,toy.train.en --size 40 --type bpe --output other-vocab/spm --quiet || say_fail "vocab"
cp other-vocab/spm.model other/spm.model # (nmt vocab refuses to write it there)
check "another spm.model" 1 "${tr_base[@]}" -m other -i in.txt
said "another spm.model" "other/spm.model is not the vocabulary other/model.safetensors was trained with (fingerprint"

# ---- inputs are bounded ----
mkfifo kept/train.log.jsonl.new && rm kept/train.log.jsonl && mv kept/train.log.jsonl.new kept/train.log.jsonl
check "a FIFO as the training log" 1 "${train[@]}" --set output=kept --set train.max_steps=30
said "a FIFO as the training log" "kept/train.log.jsonl: not a regular file (a FIFO)"
check "plot a FIFO log" 1 "$NMT" plot -o p.svg kept
said "plot a FIFO log" "kept/train.log.jsonl: not a regular file (a FIFO)"
mkdir fifo_model && cp model/spm.model model/config.yaml fifo_model/ && mkfifo fifo_model/model.safetensors
check "FIFO as model.safetensors" 1 "${tr_base[@]}" -m fifo_model -i in.txt
said "FIFO as model.safetensors" "fifo_model/model.safetensors: not a regular file (a FIFO)"
mkdir zero_model && cp model/model.safetensors zero_model/ && ln -s /dev/zero zero_model/spm.model
check "spm.model -> /dev/zero" 1 "${tr_base[@]}" -m zero_model -i in.txt
said "spm.model -> /dev/zero" "zero_model/spm.model: not a regular file (a character device)"
check "-i /dev/zero" 1 bash -c 'ulimit -v 4000000; exec "$@"' _ "${tr[@]}" -i /dev/zero
said "-i /dev/zero" "nmt translate: /dev/zero:1: a line longer than 1048576 bytes"
{ echo "the cat"; head -c 2000000 /dev/zero | tr '\0' a; echo; } >long.txt
check "a line too long" 1 "${tr[@]}" -i long.txt
said "a line too long" "nmt translate: long.txt:2: a line longer than 1048576 bytes (the limit of a text line; a binary file?)"
: >empty.en && printf '\n\n\n' >blank.en && printf 'a\nb\nc\n' >abc.de
check "no usable pairs" 1 "$NMT" train config.yaml --quiet --set 'data.train={src: blank.en, tgt: abc.de}' --set output=none
said "no usable pairs" "no sentence pairs in $tmp/blank.en and $tmp/abc.de after skipping 3 lines with an empty side: nothing to train on"
check "vocab on empty text" 1 "$NMT" vocab --input blank.en,empty.en --size 40 --output v --quiet
said "vocab on empty text" "nmt vocab: no text to train a vocabulary on in blank.en and the other inputs: every line is empty"
check "lr: 1e999" 2 "${train[@]}" --set train.optimizer.lr=1e999
said "lr: 1e999" "--set train.optimizer.lr=1e999: train.optimizer.lr: 1e999 is too large for a number (it overflows to infinity)"
printf 'data:\n  train: {src: toy.train.en, tgt: toy.train.de}\n# caf\xe9\n' >latin1.yaml
check "an invalid byte in YAML" 1 "$NMT" train latin1.yaml
said "an invalid byte in YAML" "nmt train: latin1.yaml:3:6: incomplete UTF-8 octet sequence"

[ $fail -eq 0 ] && echo "e2e_reliability: all checks passed"
exit $fail
