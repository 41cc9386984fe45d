#!/usr/bin/env bash
# `nmt serve`'s glossary (the /translate field nmt adds to LibreTranslate's): as a list of pairs, as an
# object and as a form field, each answer equals `nmt translate --glossary FILE` on the same text and
# holds the target terms; requests without a glossary sent at the same time are answered as before
# (equal to `nmt translate`); bad glossaries are 400s naming the field and the entry.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
serve_test=e2e_serve_glossary
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"

printf 'cat\tbaum\nred house\tblau\n' >gloss.tsv
texts=("the Cat sees a dog" "big red house")
tr() { printf '%s\n' "$1" | "$NMT" translate -m $M --threads 1 -q "${@:2}"; }
with=("$(tr "${texts[0]}" --glossary gloss.tsv)" "$(tr "${texts[1]}" --glossary gloss.tsv)")
without=("$(tr "${texts[0]}")" "$(tr "${texts[1]}")")
case "${with[0]}" in *baum*) ;; *) say_fail "nmt translate --glossary: no baum in '${with[0]}'" ;; esac
[ "${with[0]}" != "${without[0]}" ] || say_fail "the glossary changed nothing: '${with[0]}'"

start glossary --batch-wait-ms 50
pairs='[["cat", "baum"], ["red house", "blau"]]'
post /translate "{\"q\": [\"${texts[0]}\", \"${texts[1]}\"], \"source\": \"en\", \"target\": \"de\", \"glossary\": $pairs}"
expect "pairs" 200 "{\"translatedText\":[\"${with[0]}\",\"${with[1]}\"]}"
case "$body" in *baum*blau*) ;; *) say_fail "pairs: the target terms are not in $body" ;; esac
post /translate "{\"q\": \"${texts[0]}\", \"source\": \"en\", \"target\": \"de\", \"glossary\": {\"cat\": \"baum\"}}"
expect "object" 200 "{\"translatedText\":\"${with[0]}\"}"
code="$(curl -s -m 20 -o resp -w '%{http_code}' "$url/translate" --data-urlencode "q=${texts[0]}" -d source=en -d target=de \
  --data-urlencode "glossary=$pairs")"
[ "$code $(cat resp)" = "200 {\"translatedText\":\"${with[0]}\"}" ] || say_fail "form: $code $(cat resp)"

# With and without a glossary at once (the batch window holds them together): each as alone.
clients=()
for i in 1 2 3; do
  curl -s -m 20 -o "plain$i" "$url/translate" -H 'Content-Type: application/json' \
    --data-binary "{\"q\": \"${texts[0]}\", \"source\": \"en\", \"target\": \"de\"}" &
  clients+=($!)
  curl -s -m 20 -o "glossed$i" "$url/translate" -H 'Content-Type: application/json' \
    --data-binary "{\"q\": \"${texts[0]}\", \"source\": \"en\", \"target\": \"de\", \"glossary\": $pairs}" &
  clients+=($!)
done
wait "${clients[@]}"
for i in 1 2 3; do
  [ "$(cat "plain$i")" = "{\"translatedText\":\"${without[0]}\"}" ] || say_fail "concurrent plain $i: $(cat "plain$i")"
  [ "$(cat "glossed$i")" = "{\"translatedText\":\"${with[0]}\"}" ] || say_fail "concurrent glossary $i: $(cat "glossed$i")"
done

post /translate '{"q": "a", "source": "en", "target": "de", "glossary": [["cat", "baum"], ["dog", ""]]}'
expect "empty term" 400 '{"error":"glossary[1]: the target term is empty"}'
post /translate '{"q": "a", "source": "en", "target": "de", "glossary": "cat"}'
expect "not a list" 400 'glossary: expected a list of [source term, target term] pairs or an object'
exit $fail
