#!/usr/bin/env bash
# `nmt serve`'s Server-Sent Events: POST /translate with `Accept: text/event-stream` answers
# text/event-stream, read here with curl -N: one `data:` event per piece of text, then `event: done`
# with the JSON answer. The pieces joined equal the final translatedText, the answer without streaming
# and `nmt translate`; several sentences and a list of texts come in order, each text's pieces joined
# being its translation (its line breaks and spaces included); a glossary streams too; HTML is refused.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
serve_test=e2e_serve_stream
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"
command -v python3 >/dev/null || { echo "SKIP $serve_test: python3 is not installed"; exit 0; }

tr() { printf '%s\n' "$1" | "$NMT" translate -m $M --threads 1 -q "${@:2}"; }
start stream
# events BODY: the stream of BODY into events.txt, checked by python: each text's pieces joined equal
# the final answer's translatedText (a string or a list), the texts in order; the final JSON, as the
# server wrote it, into final.json.
events() {
  curl -s -N -m 20 -o events.txt -D headers.txt "$url/translate" -H 'Content-Type: application/json' \
    -H 'Accept: text/event-stream' --data-binary "$1"
  grep -qi '^content-type: text/event-stream' headers.txt || say_fail "stream: $(cat headers.txt)"
  python3 - events.txt final.json <<'PY' || say_fail "events of $1: $(cat events.txt)"
import json, sys
blocks = [b for b in open(sys.argv[1], encoding="utf-8").read().split("\n\n") if b]
pieces, order, final = {}, [], None
for block in blocks:
    lines = block.split("\n")
    assert final is None, "an event after the last: " + block
    if lines[0] == "event: done":
        raw = lines[1][len("data: "):]
        final = json.loads(raw)
    else:
        assert len(lines) == 1 and lines[0].startswith("data: "), block
        event = json.loads(lines[0][len("data: "):])
        assert event["text"], "an empty piece"
        pieces.setdefault(event["index"], []).append(event["text"])
        order.append(event["index"])
assert final is not None, "no done event"
got = final["translatedText"]
texts = got if isinstance(got, list) else [got]
for i, text in enumerate(texts):
    assert "".join(pieces.get(i, [])) == text, (i, pieces.get(i), text)
assert order == sorted(order) and set(order) <= set(range(len(texts))), order
open(sys.argv[2], "w", encoding="utf-8").write(raw)
PY
}

one="the cat sees a dog"
events "{\"q\": \"$one\", \"source\": \"en\", \"target\": \"de\"}"
[ "$(cat final.json)" = "{\"translatedText\":\"$(tr "$one")\"}" ] || say_fail "one sentence: $(cat final.json)"
post /translate "{\"q\": \"$one\", \"source\": \"en\", \"target\": \"de\"}"
[ "$body" = "$(cat final.json)" ] || say_fail "streamed $(cat final.json), not $body"

# Two sentences and a line break in one text, then a list: in order, joined as without streaming.
two="the cat sees a dog. A big red house.\\nthe dog"
events "{\"q\": \"$two\", \"source\": \"en\", \"target\": \"de\", \"alternatives\": 1}"
post /translate "{\"q\": \"$two\", \"source\": \"en\", \"target\": \"de\", \"alternatives\": 1}"
[ "$body" = "$(cat final.json)" ] || say_fail "two sentences: streamed $(cat final.json), not $body"
events "{\"q\": [\"$one\", \"\", \"big red house\"], \"source\": \"en\", \"target\": \"de\"}"
post /translate "{\"q\": [\"$one\", \"\", \"big red house\"], \"source\": \"en\", \"target\": \"de\"}"
[ "$body" = "$(cat final.json)" ] || say_fail "a list: streamed $(cat final.json), not $body"

# A glossary streams as it translates.
printf 'cat\tbaum\n' >gloss.tsv
events "{\"q\": \"$one\", \"source\": \"en\", \"target\": \"de\", \"glossary\": [[\"cat\", \"baum\"]]}"
[ "$(cat final.json)" = "{\"translatedText\":\"$(tr "$one" --glossary gloss.tsv)\"}" ] || say_fail "glossary: $(cat final.json)"

post /translate '{"q": "<p>a</p>", "source": "en", "target": "de", "format": "html"}' -H 'Accept: text/event-stream'
expect "html" 400 'format html is not streamed'

# Greedy search streams each piece as it is chosen: a sentence comes in several events.
kill $server
start greedy --beam-size 1
events "{\"q\": \"$one\", \"source\": \"en\", \"target\": \"de\"}"
[ "$(cat final.json)" = "{\"translatedText\":\"$(tr "$one" --beam-size 1)\"}" ] || say_fail "greedy: $(cat final.json)"
[ "$(grep -c '^data: {"index"' events.txt)" -ge 2 ] || say_fail "greedy: one sentence came in one piece: $(cat events.txt)"
exit $fail
