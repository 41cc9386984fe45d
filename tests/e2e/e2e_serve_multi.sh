#!/usr/bin/env bash
# `nmt serve` with two models, on loopback only: the tiny En->De model and a tiny "Fr"->En one (its
# "French" is English spelled backwards), both trained inside the test with their languages taken from
# the corpus suffixes. /languages lists every language with its targets, the one reached through
# English included; every pair's translation, the two-step one through English too (text, HTML, a
# file), equals `nmt translate` (piped through both models); a pair the server cannot do is a 400
# naming the pairs it has; POST /detect and source "auto" answer the served source CLD2 finds;
# OpenNMT-py's id and the native source/target choose the model; /metrics per model;
# libretranslatepy's request shapes (urllib, form-encoded). A model's languages: wrongly given, given
# before its -m, a pair twice; a model trained on train.src/train.tgt (training warns) refused until
# they are given, and recorded with data.src_lang/data.tgt_lang; a CTranslate2 directory (../shared,
# when present) refused without --source-lang/--target-lang and served with them, and an Argos package
# of it (folder or archive) served with the pair of its metadata.json.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
serve_test=e2e_serve_multi
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"

fr_model fr2en
grep -q '^  src_lang: fr$' fr2en/config.yaml && grep -q '^  tgt_lang: en$' fr2en/config.yaml ||
  say_fail "the languages are not in the resolved config: $(grep _lang fr2en/config.yaml)"

en=("the cat sees a dog" "big red house")
fr=("eht tac sees a god" "gib der esuoh")
tr() { printf '%s\n' "$2" | "$NMT" translate -m "$1" --threads 1 -q; }

start multi -m fr2en --n-best 2
grep -q '^serving en-de with model$' multi.err && grep -q '^serving fr-en with fr2en$' multi.err ||
  say_fail "the models served: $(cat multi.err)"

languages='[{"code":"en","name":"English","targets":["de"]},{"code":"de","name":"German","targets":[]},'
languages+='{"code":"fr","name":"French","targets":["en","de"]}]'
[ "$(curl -s "$url/languages")" = "$languages" ] || say_fail "languages: $(curl -s "$url/languages")"

# Each pair as the CLI translates it; French to German in two steps.
post /translate "{\"q\": \"${en[0]}\", \"source\": \"en\", \"target\": \"de\"}"
expect "en-de" 200 "{\"translatedText\":\"$(tr model "${en[0]}")\"}"
post /translate "{\"q\": [\"${fr[0]}\", \"${fr[1]}\"], \"source\": \"fr\", \"target\": \"en\"}"
expect "fr-en" 200 "{\"translatedText\":[\"$(tr fr2en "${fr[0]}")\",\"$(tr fr2en "${fr[1]}")\"]}"
pivot="$(tr fr2en "${fr[1]}" | "$NMT" translate -m model --threads 1 -q)"
post /translate "{\"q\": \"${fr[1]}\", \"source\": \"fr\", \"target\": \"de\", \"alternatives\": 1}"
expect "fr-de through en" 200 "{\"translatedText\":\"$pivot\",\"alternatives\":["
# Streamed through English: the second step's events, then the answer as without streaming.
curl -s -N -m 20 -o events.txt "$url/translate" -H 'Accept: text/event-stream' -H 'Content-Type: application/json' \
  --data-binary "{\"q\": \"${fr[1]}\", \"source\": \"fr\", \"target\": \"de\"}"
joined="$(sed -n 's/^data: {"index":0,"text":"\(.*\)"}$/\1/p' events.txt | awk '{ printf "%s", $0 }')"
[ "$joined" = "$pivot" ] && grep -qxF "data: {\"translatedText\":\"$pivot\"}" events.txt ||
  say_fail "fr-de streamed: $(cat events.txt)"
post /translate "{\"q\": \"<p>${fr[1]}</p>\", \"source\": \"fr\", \"target\": \"de\", \"format\": \"html\"}"
expect "fr-de html" 200 "{\"translatedText\":\"<p>$pivot</p>\"}"
printf '%s\n' "${fr[1]}" >doc.txt
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@doc.txt -F source=fr -F target=de)"
file_url="$(sed -n 's/.*"translatedFileUrl":"\([^"]*\)".*/\1/p' resp)"
[ "$code" = 200 ] && [ "$(curl -s "$file_url")" = "$pivot" ] || say_fail "fr-de file: $code $(cat resp)"

# A glossary's source terms are the request's language, not the English of a second step's source.
post /translate "{\"q\": \"${fr[1]}\", \"source\": \"fr\", \"target\": \"de\", \"glossary\": [[\"der\", \"blau\"]]}"
expect "fr-de glossary" 400 '{"error":"glossary: not through English (fr-en-de): a glossary needs a model of the pair"}'

# Pairs the server cannot do, in LibreTranslate's words, naming what it has.
post /translate '{"q": "a", "source": "de", "target": "fr"}'
expect "de-fr" 400 '{"error":"French (fr) is not available as a target language from German (de) (this server translates en-de, fr-en, and through en where both steps are served)"}'
post /translate '{"q": "a", "source": "en", "target": "cs"}'
expect "en-cs" 400 '{"error":"cs is not supported (this server translates en-de, fr-en)"}'

# Detection among the served sources (en, fr), and source "auto".
english="A man in a blue shirt is standing on a ladder and cleaning the windows of the house."
french="Un homme en chemise bleue est debout sur une échelle et nettoie les fenêtres de la maison."
post /detect "{\"q\": \"$english\"}"
expect "detect en" 200 '[{"confidence":'
case "$body" in '[{"confidence":'*',"language":"en"}'*) ;; *) say_fail "detect en: $body";; esac
code="$(curl -s -o resp -w '%{http_code}' "$url/detect" --data-urlencode "q=$french")"
case "$code $(cat resp)" in '200 [{"confidence":'*',"language":"fr"}'*) ;; *) say_fail "detect fr: $code $(cat resp)";; esac
post /detect '{"q": "12345"}'
expect "detect nothing" 200 '[{"confidence":0.0,"language":"en"}]'
post /detect '{"source": "en"}'
expect "detect without q" 400 '{"error":"Invalid request: missing q parameter"}'
post /translate "{\"q\": \"$english\", \"source\": \"auto\", \"target\": \"de\"}"
expect "auto" 200 "{\"translatedText\":\"$(tr model "$english")\",\"detectedLanguage\":{\"confidence\":"
case "$body" in *'"language":"en"}}') ;; *) say_fail "auto: $body";; esac

# OpenNMT-py's id and the native source/target choose the model.
post /translator/translate "[{\"src\": \"${fr[0]}\", \"id\": 1}]"
expect "opennmt id 1" 200 "\"tgt\":\"$(tr fr2en "${fr[0]}")\""
post /translator/translate "[{\"src\": \"${en[0]}\", \"id\": 0}]"
expect "opennmt id 0" 200 "\"tgt\":\"$(tr model "${en[0]}")\""
post /translator/translate "[{\"src\": \"${en[0]}\", \"id\": 2}]"
expect "opennmt id 2" 400 'id 2: no such model (the ids are 0 to 1'
post /v1/translate "{\"q\": \"${fr[0]}\", \"source\": \"fr\", \"target\": \"en\"}"
expect "native fr-en" 200 "\"text\":\"$(tr fr2en "${fr[0]}")\""
post /v1/translate "{\"q\": \"${fr[0]}\", \"source\": \"fr\", \"target\": \"de\", \"alignment\": true}"
expect "native alignment through en" 400 'alignment: not available for a pair translated through en'

# Metrics: the queues of each model, /detect's requests.
curl -s "$url/metrics" >metrics.txt
grep -q '^nmt_model_queue_depth{pair="en-de"} 0$' metrics.txt && grep -q '^nmt_model_batch_lines_total{pair="fr-en"} [1-9]' metrics.txt &&
  grep -q '^nmt_requests_total{endpoint="/detect",code="200"} 3$' metrics.txt || say_fail "metrics: $(grep -E 'model|detect' metrics.txt)"

# libretranslatepy's shapes: urllib POSTs form-encoded bodies (translate, detect) and GETs /languages
# with an empty form body.
if command -v python3 >/dev/null; then
  python3 - "$url/" "${fr[1]}" "$pivot" "$french" >py.out 2>&1 <<'PY' || say_fail "libretranslatepy shapes: $(cat py.out)"
import json, sys
from urllib import parse, request
url, text, want, french = sys.argv[1:]
def call(path, params, method=None):
    req = request.Request(url + path, data=parse.urlencode(params).encode(), method=method)
    return json.loads(request.urlopen(req, timeout=20).read().decode())
got = call("translate", {"q": text, "source": "fr", "target": "de"})["translatedText"]
assert got == want, (got, want)
assert call("detect", {"q": french})[0]["language"] == "fr"
assert [l["code"] for l in call("languages", {}, method="GET")] == ["en", "de", "fr"]
PY
fi

# A model's languages: wrongly given, given before any -m, or the same pair twice.
check "bad code" 1 "$NMT" serve -m model --source-lang english --port 0
grep -q "model: --source-lang: 'english' is not a language code" "$err" || say_fail "bad code: $(cat "$err")"
check "flag before -m" 2 "$NMT" serve --source-lang en -m model --port 0
grep -q -- "--source-lang comes after the -m of its model" "$err" || say_fail "flag before -m: $(cat "$err")"
check "same pair twice" 1 "$NMT" serve -m model -m fr2en --source-lang en --target-lang de --port 0
grep -q "model and fr2en both translate en-de: one model a pair" "$err" || say_fail "same pair: $(cat "$err")"

# A model trained on files whose suffixes are no language codes records none: training warns, serving
# refuses it until its languages follow its -m; data.src_lang/data.tgt_lang record them.
tiny_model --corpus toy
mv toy.train.en toy.train.src && mv toy.train.de toy.train.tgt
tiny_model --config toy.yaml toy
sed -i 's/toy\.train\.en/toy.train.src/; s/toy\.train\.de/toy.train.tgt/' toy.yaml
check "train without languages" 0 "$NMT" train toy.yaml --threads 1 --quiet
grep -q "warning: the model's languages are not recorded" "$err" || say_fail "no warning: $(cat "$err")"
check "serve without languages" 1 "$NMT" serve -m toy --port 0
grep -q "toy: its languages are not recorded" "$err" || say_fail "unrecorded languages: $(cat "$err")"
start toy -m toy --source-lang de --target-lang en
grep -q '^serving de-en with toy$' toy.err || say_fail "toy with languages: $(cat toy.err)"
check "train with languages" 0 "$NMT" train toy.yaml --threads 1 --quiet --overwrite --set data.src_lang=en --set data.tgt_lang=de
! grep -q "warning: the model's languages" "$err" && grep -q '^  src_lang: en$' toy/config.yaml ||
  say_fail "data.src_lang: $(cat "$err"; grep _lang toy/config.yaml)"

# A CTranslate2 directory records no languages: refused without them, served with them.
ct2="$NMT_SOURCE_DIR/../shared/models/ct2-aren-transliteration/v2/aren-transliteration"
if [ -f "$ct2/model.bin" ]; then
  check "ct2 without languages" 1 "$NMT" serve -m model -m "$ct2" --port 0
  grep -q "its languages are not recorded (a CTranslate2 directory" "$err" || say_fail "ct2 refused: $(cat "$err")"
  start ct2 -m "$ct2" --source-lang ar --target-lang en
  [ "$(curl -s "$url/languages")" = '[{"code":"en","name":"English","targets":["de"]},{"code":"de","name":"German","targets":[]},{"code":"ar","name":"Arabic","targets":["en","de"]}]' ] ||
    say_fail "ct2 languages: $(curl -s "$url/languages")"
  word="$(head -1 "$NMT_SOURCE_DIR/../shared/models/ct2-aren-transliteration/inputs.txt")"
  post /translate "{\"q\": \"$word\", \"source\": \"ar\", \"target\": \"en\"}"
  expect "ct2 ar-en" 200 "{\"translatedText\":\"$(tr "$ct2" "$word")\"}"

  # An Argos package of that model (with the tiny model's SentencePiece model: the translation need not be
  # good, only the CLI's) records its pair in metadata.json: as a folder and as an archive, no flags needed;
  # a flag after its -m wins.
  mkdir -p pkg/model && cp "$ct2"/* pkg/model/ && cp model/spm.model pkg/sentencepiece.model
  echo '{"package_version": "1.0", "from_code": "ar", "to_code": "en"}' >pkg/metadata.json
  start argos -m pkg
  grep -q '^serving ar-en with pkg$' argos.err || say_fail "argos folder: $(cat argos.err)"
  post /translate "{\"q\": \"$word\", \"source\": \"ar\", \"target\": \"de\"}"
  expect "argos ar-de through en" 200 "{\"translatedText\":\"$(tr pkg "$word" | "$NMT" translate -m model --threads 1 -q)\"}"
  if command -v python3 >/dev/null; then
    python3 -c 'import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(sys.argv[2]):
        z.write(root + "/")
        for f in files: z.write(os.path.join(root, f))' ar_en.argosmodel pkg
    start archive -m ar_en.argosmodel --target-lang fr
    grep -q '^serving ar-fr with ar_en.argosmodel$' archive.err || say_fail "argos archive: $(cat archive.err)"
  fi
else
  echo "e2e_serve_multi: no CTranslate2 fixture, its part skipped"
fi
exit $fail
