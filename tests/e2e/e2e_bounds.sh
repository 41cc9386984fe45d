#!/usr/bin/env bash
# Inputs are bounded on every path by the library's one max_input_length (1000 pieces): a line of a
# megabyte is skipped or cropped with a warning naming file:line by `nmt translate` and `nmt score`,
# refused naming the line (or cropped) by the C API's engine (test_engine), Python and the server,
# and never tried whole (that asked for terabytes).
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done'
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model "$tmp/model"

# A megabyte of "cat " (just under the 1 MiB line limit of every reader), between two short lines.
awk 'BEGIN { s = "cat "; while (length(s) < 1000000) s = s s; print "the cat"; print substr(s, 1, 999999); print "a dog" }' >in.txt
[ "$(sed -n 2p in.txt | wc -c)" -eq 1000000 ] || say_fail "the long line is not a megabyte"

"$NMT" translate -m model --threads 1 -q -i in.txt >out.txt 2>err || say_fail "translate: $(cat err)"
grep -q "in.txt:2: .* pieces, more than --max-input-length 1000; writing an empty line" err ||
  say_fail "translate's warning: $(cat err)"
[ "$(sed -n 2p out.txt)" = "" ] && [ "$(wc -l <out.txt)" -eq 3 ] || say_fail "translate wrote $(wc -l <out.txt) lines"

"$NMT" score -m model --threads 1 -s in.txt -t in.txt >scores.txt 2>err || say_fail "score: $(cat err)"
grep -q "in.txt:2: .* pieces, more than --max-input-length 1000; writing nan" err || say_fail "score's warning: $(cat err)"
[ "$(sed -n 2p scores.txt)" = nan ] && [ "$(wc -l <scores.txt)" -eq 3 ] || say_fail "score wrote: $(cat scores.txt)"
printf 'the cat\na dog\n' >short.txt
"$NMT" score -m model --threads 1 -s short.txt -t short.txt >short-scores.txt 2>err || say_fail "score: $(cat err)"
[ "$(sed -n '1p;3p' scores.txt)" = "$(cat short-scores.txt)" ] || say_fail "the pairs around the skipped one changed"
"$NMT" score -m model --threads 1 -s in.txt -t in.txt --max-input-length 50 --max-input-length-crop >crop.txt 2>err ||
  say_fail "score --max-input-length-crop: $(cat err)"
grep -q "in.txt:2: .* pieces; scoring the first 50" err || say_fail "score's crop warning: $(cat err)"
sed -n 2p crop.txt | grep -Eq '^-[0-9]+\.[0-9]{6}$' || say_fail "the cropped pair's score: $(sed -n 2p crop.txt)"

. "$NMT_SOURCE_DIR/tests/support/install_prefix.sh"
install_prefix "$tmp/prefix"
if [ -z "$NMT_SAN" ]; then # python3 cannot load an ASan libnmt without LD_PRELOAD
  NMT_LIBRARY="$NMT_PC/../libnmt.so.0" PYTHONPATH="$NMT_SOURCE_DIR/python" python3 - >py.log 2>&1 <<'PY' ||
import nmt
with open("in.txt", encoding="utf-8") as f:
    src = f.read().split("\n")[:3]
t = nmt.Translator("model", threads=1)
try:
    t.translate_batch(src)
    raise AssertionError("a megabyte line was translated")
except nmt.NmtError as e:
    assert str(e).startswith("line 2: ") and "more than the limit of 1000" in str(e), e
try:
    t.score(src, src)
    raise AssertionError("a megabyte line was scored")
except nmt.NmtError as e:
    assert "more than the limit of 1000" in str(e), e
t.close()
with nmt.Translator("model", threads=1, crop=True, max_input_length=40) as t:
    assert len(t.translate_batch(src)) == 3
    assert all(s < 0 for s in t.score(src, src))
PY
    { say_fail "Python"; cat py.log; }
fi

if command -v curl >/dev/null; then
  "$NMT" serve -m model --port 0 --threads 1 --no-sentence-split --max-body 2000000 2>serve.err &
  pids+=($!)
  url=
  for _ in $(seq 200); do
    url="$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' serve.err)"
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || say_fail "the server did not start: $(cat serve.err)"
  awk 'NR == 2 { printf "{\"q\": \"%s\", \"source\": \"en\", \"target\": \"de\"}", $0 }' in.txt >body.json
  code="$(curl -s -o resp -w '%{http_code}' -X POST "$url/translate" -H 'Content-Type: application/json' --data-binary @body.json)"
  [ "$code" = 400 ] && grep -q "more than the limit of 1000" resp || say_fail "serve: $code $(head -c 300 resp)"
  code="$(curl -s -o resp -w '%{http_code}' -X POST "$url/translate" -H 'Content-Type: application/json' \
    --data-binary '{"q": "the cat", "source": "en", "target": "de"}')"
  [ "$code" = 200 ] || say_fail "serve after the long line: $code $(cat resp)"
fi
[ $fail -eq 0 ] && echo "PASS e2e_bounds"
exit $fail
