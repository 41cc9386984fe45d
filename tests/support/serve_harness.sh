# serve_harness.sh: sourced by the end-to-end tests of `nmt serve`, after harness.sh, with the test's
# name as $serve_test. It skips the test without curl, stops every server it started at exit, trains
# the tiny model into model/ (tiny_model.sh; $M names it) and defines
#   start NAME ARGS...             runs `nmt serve -m model --port 0 --threads 1 ARGS` on 127.0.0.1
#                                  (stderr in NAME.err) and sets $url, $port and $server
#   post PATH BODY [curl args...]  POSTs a JSON body (20 s at most): the status in $code, the body in $body
#   expect NAME CODE [SUBSTRING]   fails unless $code is CODE and $body holds SUBSTRING
#   fr_model DIR                   trains a second tiny model into DIR, as the first: "French" (the tiny
#                                  corpus's English with each word spelled backwards) to English, its
#                                  languages recorded from its corpus files DIR.train.fr and DIR.train.en
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done'
command -v curl >/dev/null || { echo "SKIP $serve_test: curl is not installed (tools/install-deps.sh installs it)"; exit 0; }
. "$NMT_SOURCE_DIR/tests/support/tiny_model.sh"
tiny_model "$tmp/model"
M=model

start() {
  local name=$1; shift
  "$NMT" serve -m $M --port 0 --threads 1 "$@" 2>"$name.err" &
  server=$!
  pids+=($server)
  for _ in $(seq 200); do
    url="$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' "$name.err")"
    [ -n "$url" ] && { port=${url##*:}; return 0; }
    kill -0 $server 2>/dev/null || break
    sleep 0.05
  done
  say_fail "$name: the server did not start: $(cat "$name.err")"; exit 1
}
post() {
  local path=$1 data=$2; shift 2
  code="$(curl -s -m 20 -o resp -w '%{http_code}' -X POST "$url$path" -H 'Content-Type: application/json' --data-binary "$data" "$@")"
  body="$(cat resp)"
}
expect() {
  [ "$code" = "$2" ] || say_fail "$1: status $code, want $2: $body"
  [ -z "${3:-}" ] || case "$body" in *"$3"*) ;; *) say_fail "$1: '$body' lacks '$3'";; esac
}
fr_model() {
  local dir=$1
  tiny_model --corpus "$dir.words"
  rev <"$dir.words.train.en" |
    awk '{ n = split($0, w, " "); s = ""; for (i = n; i >= 1; i--) s = s (i < n ? " " : "") w[i]; print s }' >"$dir.train.fr"
  cp "$dir.words.train.en" "$dir.train.en"
  # The tiny model's config, on this corpus, into DIR.
  sed -e "s|{src: .*}|{src: $dir.train.fr, tgt: $dir.train.en}|; s|^output: .*|output: $dir|" "$tmp/model.yaml" >"$dir.yaml"
  "$NMT" train "$dir.yaml" --threads 1 --quiet >"$dir.train.out" 2>&1 || { say_fail "nmt train $dir"; cat "$dir.train.out"; exit 1; }
}
