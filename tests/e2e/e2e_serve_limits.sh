#!/usr/bin/env bash
# `nmt serve` under hostile clients, on loopback only (127.0.0.1; slow clients come from 127.0.0.2, a
# loopback address too): API key lines holding control bytes refused at start-up and keys compared
# whole; request smuggling (two Content-Lengths, Content-Length with Transfer-Encoding) refused with 400
# and the connection closed; a body announced over the limit refused with 413 before "100 Continue";
# the queue bounded in bytes of text (503 with Retry-After, 413 for a request larger than the queue);
# the queued lines of clients that went away cancelled; slow headers and slow bodies cut off, a
# connection slot kept for other clients; the drain after SIGTERM bounded. docs/serving-limits.md is
# the reference. Every wait is bounded (the slowest step takes about 5 s).
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
serve_test=e2e_serve_limits
command -v python3 >/dev/null || { echo "SKIP e2e_serve_limits: python3 is not installed"; exit 0; }
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"
client() { timeout 30 python3 "$NMT_SOURCE_DIR/tests/support/serve_client.py" "$@"; }

# metric NAME: its value now.
metric() { curl -s -m 5 "$url/metrics" | sed -n "s/^$1 //p"; }
# until_metric NAME VALUE: waits up to 5 s for the metric to read VALUE; 1 if it never does.
until_metric() {
  for _ in $(seq 50); do [ "$(metric "$1")" = "$2" ] && return 0; sleep 0.1; done
  return 1
}

# API keys: a key line with a NUL byte is refused at start-up, naming the file and line.
printf 'secret-1\nQ\0rest\n' >nul-keys.txt
check_timeout=10
check "keys with NUL" 1 "$NMT" serve -m $M --port 0 --threads 1 --api-keys nul-keys.txt
grep -q 'nul-keys.txt:2: the key holds the control byte 0x00 at byte 2' "$err" || say_fail "NUL key message: $(cat "$err")"
printf 'ok\nbad\tkey\n' >tab-keys.txt
check "keys with a tab" 1 "$NMT" serve -m $M --port 0 --threads 1 --api-keys tab-keys.txt
grep -q 'tab-keys.txt:2: the key holds the control byte 0x09' "$err" || say_fail "tab key message: $(cat "$err")"
# Keys are compared whole: neither a prefix nor a longer string passes.
printf 'QRS\n' >keys.txt
start keys --api-keys keys.txt -q
for k in Q QR QRST; do
  post /translate "{\"q\": \"the cat\", \"source\": \"en\", \"target\": \"de\", \"api_key\": \"$k\"}"
  [ "$code" = 403 ] || say_fail "api_key $k: $code $body"
done
post /translate '{"q": "the cat", "source": "en", "target": "de", "api_key": "QRS"}'
[ "$code" = 200 ] || say_fail "api_key QRS: $code $body"
kill -TERM $server; wait $server

start http --max-body 4096
# Two Content-Lengths, or one with Transfer-Encoding: 400, and the connection closed (no "<open>").
req='{"q": "the cat", "source": "en", "target": "de"}'
printf 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nContent-Length: 5\r\n\r\n%s' \
  ${#req} "$req" | client raw $port >dup.out
head -1 dup.out | grep -q '^HTTP/1.1 400' && grep -q 'Content-Length: given more than once' dup.out &&
  grep -qi '^Connection: close' dup.out && ! grep -q '<open>' dup.out || say_fail "two Content-Lengths: $(cat dup.out)"
printf 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n' \
  ${#req} ${#req} "$req" | client raw $port >te.out
head -1 te.out | grep -q '^HTTP/1.1 400' && grep -q 'only one may be given' te.out && ! grep -q '<open>' te.out ||
  say_fail "Content-Length with Transfer-Encoding: $(cat te.out)"
# Expect: 100-continue with a body over the limit: 413 at once, never "100 Continue".
printf 'POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n' | client raw $port >expect.out
head -1 expect.out | grep -q '^HTTP/1.1 413' && grep -q 'larger than 4096 bytes' expect.out && ! grep -q '100 Continue' expect.out ||
  say_fail "Expect: 100-continue over the limit: $(cat expect.out)"
# Within the limit the same request goes through.
printf 'POST /translate HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s' ${#req} "$req" | client raw $port >one.out
head -1 one.out | grep -q '^HTTP/1.1 200' || say_fail "one Content-Length: $(cat one.out)"
kill -TERM $server; wait $server

# The queue in bytes of text: while a batch waits 10 s for more lines, 40 bytes wait; a request that
# would pass 64 bytes gets 503 with Retry-After, one over 64 bytes alone gets 413.
start bytes --max-queue-bytes 64 --max-batch 512 --batch-wait-ms 10000 --timeout-s 20 -q
long='the cat sees a dog and the big red house'
curl -s -m 20 -o /dev/null -X POST "$url/translate" -H 'Content-Type: application/json' \
  -d "{\"q\": \"$long\", \"source\": \"en\", \"target\": \"de\"}" &
first=$!
until_metric nmt_queue_depth 1 || say_fail "the first request never queued"
[ "$(metric nmt_queue_bytes)" = 40 ] || say_fail "queue bytes: $(metric nmt_queue_bytes)"
post /translate "{\"q\": \"$long\", \"source\": \"en\", \"target\": \"de\"}" -D headers
[ "$code" = 503 ] && case "$body" in *'the queue is full (40 bytes of text wait, at most 64)'*) true;; *) false;; esac ||
  say_fail "bytes full: $code $body"
grep -qi '^Retry-After: 1' headers || say_fail "503 without Retry-After: $(cat headers)"
post /translate "{\"q\": \"$long $long\", \"source\": \"en\", \"target\": \"de\"}"
[ "$code" = 413 ] && case "$body" in *'81 bytes of text, more than the queue holds (64)'*) true;; *) false;; esac ||
  say_fail "larger than the queue: $code $body"
kill $first 2>/dev/null; wait $first 2>/dev/null
# The client of the first request went away: its line left the queue, undecoded.
until_metric nmt_queue_depth 0 || say_fail "an abandoned request's line still queued: $(metric nmt_queue_depth)"
[ "$(metric nmt_batch_lines_total)" = 0 ] && [ "$(metric nmt_queue_bytes)" = 0 ] || say_fail "an abandoned line was decoded"
until_metric 'nmt_requests_total{endpoint="\/translate",code="499"}' 1 || say_fail "the abandoned request not counted as 499"
kill -TERM $server; wait $server

# Clients that send requests of 800 sentences and close at once: their lines never decode (the batch
# would start when 4096 lines wait, or after 10 s).
start abandon --max-batch 4096 --batch-wait-ms 10000 -q
client abandon $port 4 16000 >abandon.out
until_metric nmt_requests_in_flight 1 && until_metric nmt_queue_depth 0 ||
  say_fail "abandoned requests: $(metric nmt_requests_in_flight) in flight, $(metric nmt_queue_depth) lines queued"
[ "$(metric nmt_batch_lines_total)" = 0 ] || say_fail "abandoned lines were decoded: $(metric nmt_batch_lines_total)"
kill -TERM $server; wait $server

# Slow clients: 12 connections from 127.0.0.2 sending headers a byte every half second. 4 are let in
# (the limit per client), the rest closed at once; /health from 127.0.0.1 still answers; after 2 s
# the 4 are cut off (the header time), though each byte came within the idle time.
start slow --max-connections 8 --max-connections-per-client 4 --header-timeout-s 2 --body-timeout-s 2 -q
client slow $port 12 4 >slow.out &
slow=$!
sleep 1
[ "$(curl -s -m 2 "$url/health")" = '{"status":"ok"}' ] || say_fail "/health with slow clients connected"
wait $slow
[ "$(cat slow.out)" = "closed 12 of 12" ] && [ "$(metric nmt_connections_cut_total)" = 4 ] ||
  say_fail "slow headers: $(cat slow.out), $(metric nmt_connections_cut_total) cut"
# A body sent a byte a second is cut off after the body time.
client slow-body $port 8 >slow-body.out
case "$(cat slow-body.out)" in "closed after "[234]" s") ;; *) say_fail "slow body: $(cat slow-body.out)";; esac
kill -TERM $server; wait $server

# The drain after SIGTERM lasts --drain-s: a body still arriving then is cut off, and the server exits 0.
start drain --drain-s 1 --body-timeout-s 100 -q
client slow-body $port 20 >drain-body.out &
body_client=$!
sleep 1
kill -TERM $server
( sleep 15; kill -KILL $server 2>/dev/null ) &
guard=$!
wait $server; rc=$?
kill $guard 2>/dev/null
[ $rc -eq 0 ] || say_fail "drain: exit status $rc (killed after 15 s: the drain was not bounded)"
wait $body_client
case "$(cat drain-body.out)" in "closed after "*) ;; *) say_fail "drain: the slow body was not cut off: $(cat drain-body.out)";; esac

# Flags that make no sense together exit 2.
"$NMT" serve -m $M --max-connections 8 --max-connections-per-client 8 >/dev/null 2>err; [ $? -eq 2 ] ||
  say_fail "--max-connections-per-client equal to --max-connections: not exit 2"
[ $fail -eq 0 ] && echo "PASS e2e_serve_limits"
exit $fail
