#!/usr/bin/env bash
# Model directories written whole and read with care: `nmt convert` and `nmt average` refuse an output
# file that is (a link to) one of their inputs, and a failed write (full disk, fsync error) leaves no
# directory that looks like a model; a shortlist of another vocabulary of the same size, a sparse
# gigabyte shortlist.bin and a loop of symbolic links each get a message that says what is wrong.
set -u
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
check_timeout=60
said() { # said NAME TEXT: the last command's stderr holds TEXT
  grep -qF -- "$2" "$err" || { say_fail "$1: stderr lacks '$2':"; cat "$err"; }
}
tiny_model --corpus toy 300
tiny_model --config c.yaml A
"$NMT" train c.yaml --threads 1 --quiet 2>train.err || { echo "FAIL train: $(cat train.err)"; exit 1; }
sum_a=$(cd A && sha256sum model.safetensors spm.model checkpoints/*)

# ---- an output file that is an input, through a link ----
mkdir B && ln -s ../A/model.safetensors B/model.safetensors
check "convert onto a link to its input" 2 "$NMT" convert -m A -o B --precision int8 --overwrite
said "convert onto a link to its input" "nmt convert: -o B: B/model.safetensors is A/model.safetensors (the same file, through a link)"
mkdir C && ln -s ../A/checkpoints/step-00000020.safetensors C/model.safetensors
check "average onto a link to its input" 2 "$NMT" average --last 2 -o C --overwrite A
said "average onto a link to its input" "C/model.safetensors is A/checkpoints/step-00000020.safetensors (the same file, through a link)"
[ "$(cd A && sha256sum model.safetensors spm.model checkpoints/*)" = "$sum_a" ] || say_fail "an input changed"
# A link to a file that is no input is replaced by the new file, never written through.
echo keep >elsewhere && rm B/model.safetensors && ln -s ../elsewhere B/model.safetensors
check "convert over a link elsewhere" 0 "$NMT" convert -m A -o B --precision int8 --overwrite -q
[ "$(cat elsewhere)" = keep ] || say_fail "convert wrote through a link in the output directory"
check "B translates" 0 "$NMT" translate -m B -q --greedy -i toy.train.en

# ---- a failed write leaves no half-written model directory ----
# faulty COMMAND NAME SPEC...: COMMAND (writing NAME) with NMT_FAULT=SPEC fails with exit 1 and leaves
# NAME absent (a new directory) and no temporary beside it, or runs through (SPEC past its last write).
faulty() {
  local cmd=$1 name=$2 spec status; shift 2
  for spec in "$@"; do
    rm -rf "$name"
    NMT_FAULT=$spec bash -c "$cmd" >/dev/null 2>fault.err
    status=$?
    if [ $status -eq 0 ]; then [ -s "$name/model.safetensors" ] && [ -s "$name/spm.model" ] || say_fail "$name $spec: exit 0, incomplete"
    else
      [ $status -eq 1 ] || say_fail "$name $spec: exit $status"
      [ -e "$name" ] && say_fail "$name $spec: left $(ls "$name" | tr '\n' ' ')($(cat fault.err))"
    fi
    ls | grep -q "^$name\.tmp\." && say_fail "$name $spec: a temporary was left"
  done
}
faulty "'$NMT' convert -m A -o D --precision int8 -q" D write:1 write:3 write:8 write:20 write:60 write:200 fsync:1 fsync:2 fsync:3 fsync:4
faulty "'$NMT' average --last 2 -o E A -q" E write:1 write:3 write:8 write:20 write:60 fsync:1 fsync:2 fsync:3
# Over an existing model with --overwrite, a failure leaves it as it was.
"$NMT" convert -m A -o F --precision int8 -q || say_fail "convert F"
sum_f=$(cd F && sha256sum *)
for spec in write:3 fsync:2 fsync:3; do
  NMT_FAULT=$spec "$NMT" convert -m A -o F --precision fp32 --overwrite -q 2>/dev/null && continue
  [ "$(cd F && sha256sum *)" = "$sum_f" ] || say_fail "a failed convert --overwrite ($spec) changed F"
done

# ---- shortlists and links that are not what they seem ----
"$NMT" shortlist -m A -k 5 --frequent 5 -q || say_fail "shortlist"
check "translate with the shortlist" 0 "$NMT" translate -m A --shortlist -q -i toy.train.en
cp -r A other
"$NMT" vocab --input toy.train.de,toy.train.en --size 40 --type bpe --output other-vocab/spm --quiet || say_fail "vocab"
cp other-vocab/spm.model other/spm.model
"$NMT" shortlist -m other -k 5 --frequent 5 -q || say_fail "shortlist of another vocabulary"
cp A/spm.model other/spm.model
check "a shortlist of another vocabulary" 1 "$NMT" translate -m other --shortlist -q -i toy.train.en
said "a shortlist of another vocabulary" "other/shortlist.bin was built with another vocabulary than other/spm.model (fingerprint"
truncate -s 1G other/shortlist.bin
check "a sparse 1 GB shortlist" 1 bash -c 'ulimit -v 2000000; exec "$@"' _ "$NMT" translate -m other --shortlist -q -i toy.train.en
said "a sparse 1 GB shortlist" "other/shortlist.bin: 1073741824 bytes, more than a shortlist of a 40-piece vocabulary can be"
mkdir loop && cp A/spm.model loop/ && ln -s model.safetensors loop/m2 && ln -s m2 loop/model.safetensors
check "a loop of links" 1 "$NMT" translate -m loop -q -i toy.train.en
said "a loop of links" "loop/model.safetensors: a loop of symbolic links (ELOOP)"

[ $fail -eq 0 ] && echo "e2e_model_dir: all checks passed"
exit $fail
