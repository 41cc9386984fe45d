#!/usr/bin/env bash
# `nmt serve` end to end with curl, on loopback only (127.0.0.1) and a tiny model trained inside the
# test: every endpoint (LibreTranslate's frontend settings and refused suggestions too), translations equal to `nmt
# translate` (alone and under 16 concurrent clients), LibreTranslate form bodies (urlencoded and
# multipart, a browser's "\r\n" answered as "\n"), alternatives (on demand, without --n-best) and HTML, files (/translate_file and
# /download_file), OpenNMT-py and native n-best and alignment, API keys in the body or a header, the
# error codes in LibreTranslate's words (400, 403, 404, 405, 413, 503 with Retry-After, 504), the
# access log, SIGTERM draining.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
serve_test=e2e_serve
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"

lines=("the cat sees a dog" "big red house" "the small tree runs" "a dog likes the blue house" "the cat")
printf '%s\n' "${lines[@]}" >in.txt
"$NMT" translate -m $M --threads 1 -q <in.txt >want.txt
# Each line alone (sequential requests are batches of one: the same products, the same last bits).
: >nbest.txt; : >align.txt
for i in "${!lines[@]}"; do
  printf '%s\n' "${lines[$i]}" | "$NMT" translate -m $M --threads 1 -q --n-best 3 --print-alignment | sed "s/^0 /$i /" >>nbest.txt
  printf '%s\n' "${lines[$i]}" | "$NMT" translate -m $M --threads 1 -q --print-alignment >>align.txt
done
want() { sed -n "$1p" want.txt; }

start main --n-best 3 --max-batch 8 --char-limit 300 --max-body 4096
grep -q '^listening on http://127.0.0.1:' main.err || say_fail "no 'listening on' line"

# LibreTranslate: a string, a list, a form body, alternatives, source auto, the languages.
post /translate "{\"q\": \"${lines[0]}\", \"source\": \"en\", \"target\": \"de\"}"
expect "libre string" 200
[ "$body" = "{\"translatedText\":\"$(want 1)\"}" ] || say_fail "libre string: $body, want $(want 1)"
post /translate "{\"q\": [\"${lines[1]}\", \"${lines[2]}\"], \"source\": \"en\", \"target\": \"de\", \"format\": \"text\"}"
[ "$body" = "{\"translatedText\":[\"$(want 2)\",\"$(want 3)\"]}" ] || say_fail "libre list: $body"
code="$(curl -s -o resp -w '%{http_code}' "$url/translate" --data-urlencode "q=${lines[3]}" -d source=auto -d target=de)"
body="$(cat resp)"
[ "$body" = "{\"translatedText\":\"$(want 4)\",\"detectedLanguage\":{\"confidence\":96.0,\"language\":\"en\"}}" ] ||
  say_fail "libre form: $code $body"
post /translate "{\"q\": \"${lines[0]}\", \"source\": \"en\", \"target\": \"de\", \"alternatives\": 2}"
alts="$(awk -F' \\|\\|\\| ' '$1 == 0 { n++; if (n > 1) printf "%s\"%s\"", (n > 2 ? "," : ""), $2 }' nbest.txt)"
[ "$body" = "{\"translatedText\":\"$(want 1)\",\"alternatives\":[$alts]}" ] || say_fail "alternatives: $body, want [$alts]"
post /translate "{\"q\": \"two\\nlines\", \"source\": \"en\", \"target\": \"de\"}"
two="$(printf 'two\nlines\n' | "$NMT" translate -m $M --threads 1 -q | paste -sd'|')"
[ "$(printf '%s' "$body" | sed 's/\\u000a/|/g')" = "{\"translatedText\":\"$two\"}" ] || say_fail "a text of two lines: $body, want $two"
# A line of two sentences: each translated alone, joined with a space.
post /translate '{"q": "The cat sees a dog. A big house.", "source": "en", "target": "de"}'
two="$(printf 'The cat sees a dog.\nA big house.\n' | "$NMT" translate -m $M --threads 1 -q | paste -sd' ')"
[ "$body" = "{\"translatedText\":\"$two\"}" ] || say_fail "two sentences: $body, want $two"
# LibreTranslate's web page posts multipart/form-data.
code="$(curl -s -o resp -w '%{http_code}' "$url/translate" -F "q=${lines[2]}" -F source=en -F target=de -F format=text)"
[ "$code $(cat resp)" = "200 {\"translatedText\":\"$(want 3)\"}" ] || say_fail "libre multipart: $code $(cat resp)"
# A browser sends a textarea's line breaks in a form as "\r\n": the answer's are "\n", as LibreTranslate's.
code="$(curl -s -o resp -w '%{http_code}' "$url/translate" -F "q=${lines[0]}"$'\r\n'"${lines[1]}" -F source=en -F target=de)"
[ "$code $(cat resp)" = "200 {\"translatedText\":\"$(want 1)\\u000a$(want 2)\"}" ] || say_fail "libre multipart CRLF: $code $(cat resp)"
# More alternatives than --n-best - 1: those there are, as LibreTranslate answers fewer than asked.
post /translate "{\"q\": \"${lines[0]}\", \"source\": \"en\", \"target\": \"de\", \"alternatives\": 3}"
[ "$body" = "{\"translatedText\":\"$(want 1)\",\"alternatives\":[$alts]}" ] || say_fail "alternatives over --n-best: $body, want [$alts]"
post /translate "{\"q\": \"${lines[0]}\", \"source\": \"en\", \"target\": \"de\", \"alternatives\": \"x\"}"
expect "alternatives not a number" 400 'Invalid request: alternatives parameter is not a number'
# Files: a .txt file translated line by line, an .html one as HTML; each kept for download under a
# random name, as LibreTranslate answers.
printf '%s\n%s\n' "${lines[0]}" "${lines[1]}" >doc.txt
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@doc.txt -F source=en -F target=de)"
file_url="$(sed -n 's|^{"translatedFileUrl":"\(http://127\.0\.0\.1:[0-9]*/download_file/[0-9a-f]\{32\}\.doc\.txt\)"}$|\1|p' resp)"
[ "$code" = 200 ] && [ -n "$file_url" ] || say_fail "translate_file: $code $(cat resp)"
curl -s -D headers -o got.txt "$file_url"
printf '%s\n%s\n' "$(want 1)" "$(want 2)" >want-doc.txt
cmp -s got.txt want-doc.txt || say_fail "the translated file: $(cat got.txt)"
grep -qi '^Content-Disposition: attachment; filename="doc.txt"' headers || say_fail "download headers: $(cat headers)"
printf '<p>%s <b>%s</b></p>' "${lines[0]}" "${lines[1]}" >page.html
curl -s -o resp "$url/translate_file" -F file=@page.html -F source=en -F target=de -F format=text
curl -s -o got.html "$(sed -n 's|^{"translatedFileUrl":"\(.*\)"}$|\1|p' resp)"
# The block is translated whole and <b> put back once around the words aligned to what it wrapped.
page_want="$(printf '%s\n' "${lines[0]} ${lines[1]}" | "$NMT" translate -m $M --threads 1 -q |
  sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')"
[ "$(grep -o '<b>' got.html | wc -l)" = 1 ] && [ "$(grep -o '</b>' got.html | wc -l)" = 1 ] &&
  [ "$(sed 's|<b>||; s|</b>||' got.html)" = "<p>$page_want</p>" ] || say_fail "the translated HTML file: $(cat got.html)"
printf 'x' >doc.pdf
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@doc.pdf -F source=en -F target=de)"; body="$(cat resp)"
expect "a .pdf file" 400 '{"error":"Invalid request: file format not supported"}'
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F source=en -F target=de)"; body="$(cat resp)"
expect "no file" 400 '{"error":"Invalid request: missing file parameter"}'
code="$(curl -s -o resp -w '%{http_code}' "$url/download_file/0123.doc.txt")"; body="$(cat resp)"
expect "an unknown file" 404 '{"error":"Invalid filename"}'
code="$(curl -s -o resp -w '%{http_code}' "$url/languages")"
[ "$(cat resp)" = '[{"code":"en","name":"English","targets":["de"]},{"code":"de","name":"German","targets":[]}]' ] ||
  say_fail "languages: $(cat resp)"
# LibreTranslate's frontend settings: this server's limit, no keys, the pair.
settings='{"charLimit":300,"frontendTimeout":500,"apiKeys":false,"keyRequired":false,"suggestions":false,'
settings+='"filesTranslation":true,"supportedFilesFormat":[".txt",".odt",".odp",".docx",".pptx",".epub",".html",".srt"],'
settings+='"language":{"source":{"code":"en","name":"English"},"target":{"code":"de","name":"German"}}}'
[ "$(curl -s "$url/frontend/settings")" = "$settings" ] || say_fail "frontend settings: $(curl -s "$url/frontend/settings")"
# Suggestions are off, as the settings say: /suggest answers as LibreTranslate's does then.
post /suggest "{\"q\": \"${lines[0]}\", \"s\": \"x\", \"source\": \"en\", \"target\": \"de\"}"
expect "suggest" 403 '{"error":"Suggestions are disabled on this server."}'

# OpenNMT-py: tgt, pred_score (the log-probability) and align as `nmt translate` prints them.
post /translator/translate "[{\"src\": \"${lines[1]}\", \"id\": 100}]"
expect "opennmt" 200
align="$(sed -n 2p align.txt | sed 's/.* ||| //')"
logprob="$(awk -F' \\|\\|\\| ' '$1 == 1 { print $3; exit }' nbest.txt | sed 's/F0= //')"
case "$body" in
  "[[{\"src\":\"${lines[1]}\",\"tgt\":\"$(want 2)\",\"n_best\":1,\"pred_score\":"*",\"align\":\"$align\"}]]") ;;
  *) say_fail "opennmt: $body (align $align)";;
esac
score="$(printf '%s' "$body" | sed 's/.*"pred_score":\([^,]*\),.*/\1/')"
[ "$(printf '%.6f' "$score")" = "$logprob" ] || say_fail "opennmt pred_score $score, nmt translate $logprob"

# Native: the n-best with scores, the alignment pairs, the map.
post /v1/translate "{\"q\": \"${lines[3]}\", \"n_best\": 3, \"alignment\": true}"
expect "native" 200
got="$(printf '%s' "$body" | grep -o '"text":"[^"]*","score":[^,]*' | sed 's/"text":"\([^"]*\)","score":\(.*\)/\1 \2/' |
       while read -r line; do s="${line##* }"; printf '%s %.6f\n' "${line% *}" "$s"; done)"
exp="$(awk -F' \\|\\|\\| ' '$1 == 3 { printf "%s %s\n", $2, $4 }' nbest.txt)"
[ "$got" = "$exp" ] || { say_fail "native n-best differs from nmt translate --n-best 3"; echo "$got"; echo "$exp"; }
pairs="$(sed -n 4p align.txt | sed 's/.* ||| //' | sed 's/\([0-9]*\)-\([0-9]*\)/[\1,\2]/g; s/ /,/g')"
case "$body" in *"\"alignment\":[$pairs]"*) ;; *) say_fail "native alignment: $body, want [$pairs]";; esac
post /v1/translate "{\"q\": \"${lines[0]}\", \"alignment_map\": true}"
case "$body" in *'"alignment_map":"<?xml'*'<svg'*) ;; *) say_fail "native map: ${body:0:200}";; esac

# The other endpoints.
[ "$(curl -s "$url/health")" = '{"status":"ok"}' ] || say_fail "health"
curl -s "$url/" >page.html
grep -q '<button id="translate"' page.html && ! grep -qE '(src|href)="https?:' page.html || say_fail "the page"
curl -s "$url/metrics" >metrics.txt
grep -q '^nmt_requests_total{endpoint="/translate",code="200"} 9$' metrics.txt || say_fail "metrics: $(grep requests_total metrics.txt)"
grep -q '^nmt_request_duration_seconds_bucket{le="+Inf"} ' metrics.txt && grep -q '^nmt_queue_depth 0$' metrics.txt ||
  say_fail "metrics histogram / queue depth"

# Errors, each {"error": ...} naming what is wrong.
post /translate '{"q": "a", "source": "en", "target": "de",}'; expect "bad JSON" 400 '"error":"body: bad JSON at byte 42: expected a field name"'
post /translate '{"source": "en", "target": "de"}'; expect "missing q" 400 '"error":"Invalid request: missing q parameter"'
post /translate '{"q": 3, "source": "en", "target": "de"}'; expect "q type" 400 'q: expected a string or a list of strings'
post /translate '{"q": "a", "target": "de"}'; expect "missing source" 400 'missing source parameter'
post /translate '{"q": "a", "source": "fr", "target": "de"}'; expect "wrong source" 400 '{"error":"fr is not supported (this server translates en-de)"}'
post /translate '{"q": "a", "source": "en", "target": "cs"}'; expect "wrong target" 400 '{"error":"cs is not supported (this server translates en-de)"}'
# HTML: a block's text translated whole, as the CLI translates it, its inline tags put back once each
# (by relative place: this server computes no alignment), the other markup kept as it was.
block_want="$(printf '%s\n' "${lines[0]} ${lines[1]} & ${lines[4]}" | "$NMT" translate -m $M --threads 1 -q |
  sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')"
post /translate "{\"q\": \"<p>${lines[0]} <b>${lines[1]}</b> &amp; <i title='the cat'>${lines[4]}</i></p><!-- the cat -->\", \"source\": \"en\", \"target\": \"de\", \"format\": \"html\"}"
expect "html" 200 '{"translatedText":"<p>'
html="$(printf '%s' "$body" | sed 's/^{"translatedText":"//; s/"}$//')"
for tag in "<b>" "</b>" "<i title='the cat'>" "</i>"; do
  [ "$(printf '%s' "$html" | grep -o "$tag" | wc -l)" = 1 ] || say_fail "html: '$tag' is not once in '$html'"
done
[ "$(printf '%s' "$html" | sed "s|<b>||; s|</b>||; s|<i title='the cat'>||; s|</i>||")" = "<p>$block_want</p><!-- the cat -->" ] ||
  say_fail "html: '$html' is not '<p>$block_want</p><!-- the cat -->' with its tags"
post /translate '{"q": "a", "source": "en", "target": "de", "format": "xml"}'; expect "format" 400 '{"error":"xml format is not supported"}'
post /v1/translate '{"q": "a", "n_best": 4}'; expect "n_best" 400 'n_best: expected 1 to 3'
long="$(printf 'the cat %.0s' $(seq 40))"
post /translate "{\"q\": \"$long\", \"source\": \"en\", \"target\": \"de\"}"
expect "char limit" 400 '{"error":"Invalid request: request (320) exceeds text limit (300)"}'
post /translate "{\"q\": [\"the cat\", \"$long\"], \"source\": \"en\", \"target\": \"de\"}"
expect "char limit of a text in a list" 400 'request (320) exceeds text limit (300)'
post /v1/translate "{\"q\": \"$long\"}"; expect "char limit (native)" 413 'more than the limit of 300'
post /translate "{\"q\": \"$(printf 'x%.0s' $(seq 5000))\"}"; expect "body limit" 413 'larger than 4096 bytes'
code="$(curl -s -o resp -w '%{http_code}' "$url/nowhere")"; body="$(cat resp)"; expect "404" 404 '"error":"not found"'
code="$(curl -s -o resp -w '%{http_code}' "$url/translate")"; body="$(cat resp)"; expect "405" 405 'use POST'
code="$(curl -s -D headers -o resp -w '%{http_code}' -X OPTIONS "$url/translate")"; body="$(cat resp)"; expect "preflight" 204
grep -qi '^Access-Control-Allow-Methods: GET, POST, OPTIONS' headers || say_fail "CORS preflight headers: $(cat headers)"

# 16 concurrent clients, 4 requests each: every line as `nmt translate` translates it alone.
awk 'BEGIN { n = split("the a cat dog sees likes big small red blue house tree runs sleeps", w, " ");
  srand(3); for (i = 0; i < 64; i++) { len = 1 + int(rand() * 7); s = "";
  for (j = 0; j < len; j++) s = s (j ? " " : "") w[1 + int(rand() * n)]; print s } }' >many.txt
"$NMT" translate -m $M --threads 1 -q <many.txt >many.want
for c in $(seq 0 15); do
  ( for r in 0 1 2 3; do
      i=$((c * 4 + r + 1)); line="$(sed -n "${i}p" many.txt)"
      curl -s -X POST "$url/translate" -H 'Content-Type: application/json' \
        -d "{\"q\": \"$line\", \"source\": \"en\", \"target\": \"de\"}" | sed 's/^{"translatedText":"\(.*\)"}$/\1/' >"many.$i"
    done ) &
done
wait_clients() { for p in $(jobs -p); do [ "$p" = "$server" ] || wait "$p"; done; }
wait_clients
for i in $(seq 64); do cat "many.$i"; echo; done >many.got
cmp -s many.got many.want || { say_fail "concurrent translations differ from nmt translate"; diff many.got many.want | head; }
batches="$(curl -s "$url/metrics" | sed -n 's/^nmt_batches_total //p')"
echo "e2e_serve: $(grep -c '"path":"/translate"' main.err) LibreTranslate requests logged; $batches batches so far"

# The access log: one JSON line per request, with the fields.
grep -q '^{"time":"[0-9T:-]*Z","method":"POST","path":"/translate","status":200,"lines":1,"characters":18,"queue_ms":[0-9.]*,"decode_ms":[0-9.]*,"ms":[0-9.]*}$' main.err ||
  say_fail "access log line: $(grep path main.err | head -2)"
kill -TERM $server; wait $server; [ $? -eq 0 ] || say_fail "SIGTERM: exit status not 0"

# API keys: 403 without or with a wrong key, 200 with a listed one (and --quiet: no log).
printf '# keys\nsecret-1\n\n  secret-2  \n' >keys.txt
start keys --api-keys keys.txt --quiet
case "$(curl -s "$url/frontend/settings")" in
  '{"charLimit":-1,'*'"apiKeys":true,"keyRequired":true,'*) ;;
  *) say_fail "frontend settings with keys: $(curl -s "$url/frontend/settings")";;
esac
post /translate '{"q": "the cat", "source": "en", "target": "de"}'; expect "no key" 403 'Please provide an API key'
post /translate '{"q": "the cat", "source": "en", "target": "de", "api_key": "nope"}'; expect "wrong key" 403 'Invalid API key'
post /translate '{"q": "the cat", "source": "en", "target": "de", "api_key": "secret-2"}'; expect "good key" 200 "$(want 5)"
post /v1/translate '{"q": "the cat", "api_key": "secret-1"}'; expect "native key" 200
# A sentence of more pieces than --max-input-length (1000) is refused naming it, never cropped.
huge="$(printf 'the cat %.0s' $(seq 700))"
code="$(curl -s -o resp -w '%{http_code}' "$url/v1/translate" -H 'Content-Type: application/json' --max-time 20 \
  -d "{\"q\": \"Small tree. A $huge\", \"api_key\": \"secret-1\"}")"; body="$(cat resp)"
expect "an over-long sentence" 400 'line 2: '
case "$body" in *'pieces, more than the limit of 1000'*) ;; *) say_fail "over-long sentence message: $body";; esac
# A key in a header, for every translating endpoint (OpenNMT-py's list has no field for it).
post /translator/translate '[{"src": "the cat", "id": 1}]'; expect "opennmt without a key" 403
post /translator/translate '[{"src": "the cat", "id": 1}]' -H 'X-API-Key: secret-1'; expect "X-API-Key" 200 "$(want 5)"
post /translator/translate '[{"src": "the cat", "id": 1}]' -H 'Authorization: Bearer secret-2'; expect "Bearer" 200
post /translator/translate '[{"src": "the cat", "id": 1}]' -H 'Authorization: Bearer secret'; expect "a wrong Bearer" 403 'Invalid API key'
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@doc.txt -F source=en -F target=de -F api_key=secret-2)"
[ "$code" = 200 ] || say_fail "translate_file with a key: $code $(cat resp)"
code="$(curl -s -o resp -w '%{http_code}' "$url/translate_file" -F file=@doc.txt -F source=en -F target=de)"
[ "$code" = 403 ] || say_fail "translate_file without a key: $code $(cat resp)"
# Alternatives on demand: this server was started without --n-best (the beam's 5 hypotheses).
post /translate '{"q": "the cat sees a dog", "source": "en", "target": "de", "alternatives": 2, "api_key": "secret-1"}'
case "$body" in '{"translatedText":"'"$(want 1)"'","alternatives":["'*'","'*'"]}') ;; *) say_fail "alternatives without --n-best: $body";; esac
kill -TERM $server; wait $server
grep -q '"path"' keys.err && say_fail "--quiet still logged"

# LibreTranslate's page asks for 3 alternatives with every text: a greedy server (--beam-size 1, so
# --n-best 1) answers its form with none.
start greedy --beam-size 1 --quiet
greedy="$(printf '%s\n' "${lines[0]}" | "$NMT" translate -m $M --threads 1 -q --beam-size 1)"
code="$(curl -s -o resp -w '%{http_code}' "$url/translate" -F "q=${lines[0]}" -F source=en -F target=de -F format=text \
  -F alternatives=3 -F api_key=)"
[ "$code $(cat resp)" = "200 {\"translatedText\":\"$greedy\",\"alternatives\":[]}" ] || say_fail "the page's form, greedy: $code $(cat resp)"
kill -TERM $server; wait $server

# A full queue: 503 with Retry-After; a request past --timeout-s: 504; SIGTERM lets in-flight finish.
start slow --max-queue 2 --batch-wait-ms 1500 --max-batch 64 --timeout-s 3
curl -s -o first.out -w '%{http_code}' -X POST "$url/v1/translate" -d '{"q": ["the cat", "a dog"]}' >first.code &
first=$!
sleep 0.4
code="$(curl -s -D headers -o resp -w '%{http_code}' -X POST "$url/v1/translate" -d '{"q": "big house"}')"; body="$(cat resp)"
expect "queue full" 503 'the queue is full'
grep -qi '^Retry-After: 1' headers || say_fail "503 without Retry-After: $(cat headers)"
kill -TERM $server # while the first request waits for its batch
wait $first
[ "$(cat first.code)" = 200 ] || say_fail "the request in flight at SIGTERM: $(cat first.code) $(cat first.out)"
wait $server; [ $? -eq 0 ] || say_fail "drain: exit status not 0"
curl -s -m 2 "$url/health" >/dev/null && say_fail "still answering after SIGTERM"
start timeout --batch-wait-ms 3000 --timeout-s 0.3
post /v1/translate '{"q": "the cat"}'; expect "timeout" 504 'took more than 0.3 s'
kill -TERM $server; wait $server

# Command-line mistakes exit 2.
"$NMT" serve --port 1 >/dev/null 2>err; [ $? -eq 2 ] || say_fail "serve without --model: not exit 2"
"$NMT" serve -m $M --port 70000 >/dev/null 2>err; [ $? -eq 2 ] || say_fail "--port 70000: not exit 2"
"$NMT" serve -m $M --host not-an-address --port 0 >/dev/null 2>err; [ $? -eq 1 ] && grep -q "not-an-address" err ||
  say_fail "a bad --host: $(cat err)"
"$NMT" serve --help | grep -q -- '--batch-wait-ms' || say_fail "--help"
[ $fail -eq 0 ] && echo "PASS e2e_serve"
exit $fail
