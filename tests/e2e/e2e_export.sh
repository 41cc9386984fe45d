#!/usr/bin/env bash
# `nmt convert --to ct2|argos` end to end on tiny models trained inside the test (post-norm with
# sinusoids and all embeddings tied; pre-norm with learned positions and nothing tied; the decoder's
# embedding tied to the output): each exports as a CTranslate2 directory and an Argos package, and both
# read back by nmt (the package as it is, and either turned back into nmt's own directory) translate
# and score bit-identically to the original in float32; int8 and float16 exports stay within what
# their rounding gives; exporting twice gives the same bytes; what cannot be expressed or written is
# refused with the field or flag named, and nothing is replaced without --overwrite.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"

tiny_model m
head -40 m.train.en >src.txt
head -40 m.train.de >tgt.txt
printf 'the cat sees a dog\na big red house\n\nthe small tree sleeps\n' >>src.txt
printf 'der katze sieht ein hund\nein gross rot haus\n\nder klein baum schlaeft\n' >>tgt.txt

# Short runs of the variants: their weights only need to be the model's own.
variant() {
  cat >"$1.yaml" <<YAML
model: {d_model: 16, heads: 2, ffn: 32, encoder_layers: 2, decoder_layers: 1, dropout: 0.0, $2}
vocab: {size: 40}
data:
  train: {src: m.train.en, tgt: m.train.de}
train: {batch_tokens: 300, max_steps: 30, valid_every: 1000, save_every: 1000}
output: $1
YAML
  "$NMT" train "$1.yaml" --threads 1 --quiet >"$1.train.out" 2>&1 || { say_fail "train $1"; cat "$1.train.out"; }
}
variant pre "norm_position: pre, positions: learned, tie_embeddings: none"
variant dec "tie_embeddings: decoder"
variant rope "positions: rope"

# A model and what it reads back as must agree in every byte of translations, n-best scores and
# forced scores.
same_outputs() {
  local a=$1 b=$2 x
  for x in "$a" "$b"; do
    "$NMT" translate -m "$x" -i src.txt --beam-size 3 --n-best 2 -q >"$x.tr" 2>"$x.tr.err" || { say_fail "translate -m $x"; cat "$x.tr.err"; }
    "$NMT" score -m "$x" -s src.txt -t tgt.txt --tokens >"$x.sc" 2>"$x.sc.err" || { say_fail "score -m $x"; cat "$x.sc.err"; }
  done
  cmp -s "$a.tr" "$b.tr" || { say_fail "$b translates unlike $a"; diff "$a.tr" "$b.tr" | head -5; }
  cmp -s "$a.sc" "$b.sc" || { say_fail "$b scores unlike $a"; diff "$a.sc" "$b.sc" | head -5; }
}

for m in m pre dec rope; do
  check "$m: --to ct2" 0 "$NMT" convert -m $m --to ct2 -o $m.ct2
  grep -q "wrote $m.ct2 (CTranslate2 model, float32)" err || say_fail "$m: convert message: $(cat err)"
  for f in model.bin config.json shared_vocabulary.json; do [ -f $m.ct2/$f ] || say_fail "$m: no $f in the ct2 export"; done
  grep -q '"add_source_eos": true' $m.ct2/config.json || say_fail "$m: config.json: $(cat $m.ct2/config.json)"
  # nmt's own CTranslate2 reader takes it (token mode: the pieces themselves are read).
  check "$m: the ct2 export reads" 0 "$NMT" translate -m $m.ct2 -q <<<"▁the ▁cat"
  [ -s out ] || say_fail "$m: the ct2 export translated nothing"
  check "$m: ct2 -> nmt" 0 "$NMT" convert -m $m.ct2 --precision fp32 --spm $m/spm.model -o $m.back -q
  same_outputs $m $m.back

  check "$m: --to argos" 0 "$NMT" convert -m $m --to argos -o $m-en_de.argosmodel --source-lang en --target-lang de -q
  same_outputs $m $m-en_de.argosmodel
  check "$m: argos -> nmt" 0 "$NMT" convert -m $m-en_de.argosmodel --precision fp32 --spm $m/spm.model -o $m.back2 -q
  same_outputs $m $m.back2
done

# Without --precision an import keeps the model's own: fp32 from float32 weights, int8 from int8
# ones (a CTranslate2 int8 export, an int8 model directory).
check "ct2 -> nmt, its precision" 0 "$NMT" convert -m m.ct2 --spm m/spm.model -o m.keep
grep -q "(fp32, " err || say_fail "ct2 float32 -> nmt without --precision: $(cat err)"
same_outputs m m.keep
check "int8 --to ct2" 0 "$NMT" convert -m m --to ct2 --quantization int8 -o m8.ct2 -q
check "int8 ct2 -> nmt, its precision" 0 "$NMT" convert -m m8.ct2 --spm m/spm.model -o m8.keep
grep -q "(int8, " err || say_fail "ct2 int8 -> nmt without --precision: $(cat err)"
check "int8 directory" 0 "$NMT" convert -m m --precision int8 -o m8 -q
check "int8 directory, its precision" 0 "$NMT" convert -m m8 -o m8.again
grep -q "(int8, " err || say_fail "an int8 directory without --precision: $(cat err)"
cmp -s m8/model.safetensors m8.again/model.safetensors || say_fail "an int8 directory converted again differs"

# The package is what argos-translate installs: one top-level folder with metadata.json, model/ and
# sentencepiece.model.
if command -v python3 >/dev/null; then
  python3 - m-en_de.argosmodel <<'PY' || say_fail "the Argos package's layout"
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
names = set(z.namelist())
for n in ["m-en_de/metadata.json", "m-en_de/sentencepiece.model", "m-en_de/model/model.bin",
          "m-en_de/model/config.json", "m-en_de/model/shared_vocabulary.json"]:
    assert n in names, n
meta = json.loads(z.read("m-en_de/metadata.json"))
assert (meta["from_code"], meta["to_code"], meta["type"]) == ("en", "de", "translate"), meta
PY
fi

# An Argos package re-exports with its own languages (stored entries: the metadata reads as it is),
# and becomes nmt's own directory with its own SentencePiece model.
check "argos -> argos" 0 "$NMT" convert -m m-en_de.argosmodel --to argos -o re.argosmodel -q
grep -aq '"from_code": "en"' re.argosmodel && grep -aq '"to_code": "de"' re.argosmodel || say_fail "re-export: the package's languages"
same_outputs m re.argosmodel
check "argos -> nmt, its own spm" 0 "$NMT" convert -m m-en_de.argosmodel --precision fp32 -o m.back3 -q
same_outputs m m.back3
cmp -s m.back3/spm.model m/spm.model || say_fail "the import's spm.model is not the package's"

# A model nmt imported re-exports faithfully: CTranslate2's own test model (two vocabularies, an
# output bias, no source eos) translates and scores the same after the round trip.
F="$NMT_SOURCE_DIR/../shared/models/ct2-aren-transliteration/v2/aren-transliteration"
if [ -f "$F/model.bin" ]; then
  head -30 "$F/../../inputs.txt" >ar.txt
  check "re-export a CTranslate2 model" 0 "$NMT" convert -m "$F" --to ct2 -o aren.ct2 -q
  for f in source_vocabulary.json target_vocabulary.json; do [ -f aren.ct2/$f ] || say_fail "aren: no $f"; done
  "$NMT" translate -m "$F" -i ar.txt -q >aren.a || say_fail "translate aren"
  "$NMT" translate -m aren.ct2 -i ar.txt -q >aren.b || say_fail "translate the re-export"
  cmp -s aren.a aren.b || say_fail "the re-exported CTranslate2 model translates otherwise"
  "$NMT" score -m "$F" -s ar.txt -t aren.a --tokens >aren.sa && "$NMT" score -m aren.ct2 -s ar.txt -t aren.a --tokens >aren.sb
  cmp -s aren.sa aren.sb || say_fail "the re-exported CTranslate2 model scores otherwise"
else
  echo "e2e_export: $F is absent: the re-export of CTranslate2's test model is not checked"
fi

# Exporting twice gives the same bytes.
check "export again" 0 "$NMT" convert -m m --to argos -o again.argosmodel --source-lang en --target-lang de -q
# (the top-level folder is named after the file: compare the model files instead)
check "ct2 again" 0 "$NMT" convert -m m --to ct2 -o again.ct2 -q
cmp -s again.ct2/model.bin m.ct2/model.bin || say_fail "two exports differ"

# Quantized exports: int8 keeps most translations and every score close; float16 nearly all.
for q in int8 int16 float16 bfloat16; do
  check "--quantization $q" 0 "$NMT" convert -m m --to argos -o m-$q.argosmodel --source-lang en --target-lang de --quantization $q -q
  "$NMT" translate -m m-$q.argosmodel -i src.txt -q >$q.tr || say_fail "translate the $q export"
  "$NMT" score -m m-$q.argosmodel -s src.txt -t tgt.txt >$q.sc || say_fail "score the $q export"
  "$NMT" translate -m m -i src.txt -q >fp32.tr
  "$NMT" score -m m -s src.txt -t tgt.txt >fp32.sc
  same=$(paste fp32.tr $q.tr | awk -F'\t' '$1 == $2' | wc -l)
  [ "$same" -ge 40 ] || say_fail "$q: $same of 44 translations as the float32 model's"
  paste fp32.sc $q.sc | awk -v q=$q '{ d = $1 - $2; if (d < 0) d = -d; if (d > 0.1 * ($1 < 0 ? -$1 : $1) + 0.02) { print "FAIL " q ": score " $1 " became " $2; bad = 1 } } END { exit bad }' || fail=1
done
small=$(stat -c %s m-int8.argosmodel) full=$(stat -c %s m-en_de.argosmodel)
[ "$small" -lt "$full" ] || say_fail "the int8 package ($small bytes) is not smaller than the float32 one ($full)"

# Refusals.
# The languages recorded at training (data.src_lang / data.tgt_lang, here from train.en / train.de)
# name the package; a CTranslate2 directory records none.
check "argos with the recorded languages" 0 "$NMT" convert -m m --to argos -o recorded.argosmodel -q
python3 -c 'import json, sys, zipfile; m = json.loads(zipfile.ZipFile(sys.argv[1]).read("recorded/metadata.json"))
assert (m["from_code"], m["to_code"]) == ("en", "de"), m' recorded.argosmodel || say_fail "the recorded languages"
check "argos without languages" 2 "$NMT" convert -m m.ct2 --to argos -o x.argosmodel
grep -q -- '--source-lang' err || say_fail "missing languages: $(cat err)"
check "argos name" 2 "$NMT" convert -m m --to argos -o x.zip --source-lang en --target-lang de
check "bad quantization" 2 "$NMT" convert -m m --to ct2 -o x.ct2 --quantization int4
check "--precision with --to" 2 "$NMT" convert -m m --to ct2 -o x.ct2 --precision int8
check "unknown format" 2 "$NMT" convert -m m --to marian -o x
check "ct2 over a ct2 model" 2 "$NMT" convert -m m --to ct2 -o m.ct2
check "package over a package" 2 "$NMT" convert -m m --to argos -o m-en_de.argosmodel --source-lang en --target-lang de
cmp -s again.ct2/model.bin m.ct2/model.bin || say_fail "a refused export changed m.ct2"
check "overwrite" 0 "$NMT" convert -m pre --to ct2 -o m.ct2 --overwrite -q
check "ct2 onto its input" 2 "$NMT" convert -m m.ct2 --to ct2 -o m.ct2 --overwrite
check "ct2 -> nmt without --spm" 1 "$NMT" convert -m dec.ct2 --precision fp32 -o x
grep -q -- '--spm' err || say_fail "import without a SentencePiece model: $(cat err)"
check "ct2 -> nmt with another vocabulary" 1 "$NMT" convert -m dec.ct2 --precision fp32 --spm m/spm.model -o x
grep -q 'pieces but the model' err || say_fail "wrong --spm: $(cat err)"
[ ! -e x ] || say_fail "a refused import left x"
check "--spm for nmt's own" 2 "$NMT" convert -m m --precision fp32 --spm m/spm.model -o x

exit $fail
