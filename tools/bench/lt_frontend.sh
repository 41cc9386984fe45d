#!/usr/bin/env bash
# LibreTranslate's own web front end, unchanged, in headless Chromium against `nmt serve`:
#
#   tools/bench/lt_frontend.sh LIBRETRANSLATE OUT MODEL
#
# LIBRETRANSLATE is a LibreTranslate repository: a checkout, or a bare git directory (its HEAD is
# used). Its page (libretranslate/templates/index.html and app.js.template, rendered with Debian's
# python3-jinja2 as its Flask app renders them with default options) and static/ are copied into a
# temporary folder and served by tools/bench/lt_frontend.py, which passes every other request (the
# API: /frontend/settings, /languages, /translate, /translate_file, /download_file/...) through to
# `nmt serve -m MODEL --source-lang en --target-lang de` unchanged. MODEL is an English-to-German
# model (the page's languages are chosen as en and de). tools/bench/lt_frontend.js then drives the
# page as a user in headless Chromium: picks English -> German, types two lines and reads the
# translation back from the page; picks Auto Detect, types a sentence and reads the translation and
# the detected language; switches to files, uploads a .txt file and downloads the translation. Each
# must equal what `nmt translate -m MODEL` prints for the same text, the JSON the page shows in its
# "Response" box must hold exactly that translatedText (line breaks "\n", as LibreTranslate answers a
# form), the detected language must be English, and every request the page made of `nmt serve` (its
# access log) must have been answered 200; exit status 1 otherwise.
#
# OUT receives the screenshots (text.png, auto.png, file.png), what the page showed (*.out,
# *.response.json, auto.detected), the downloaded file (download/), the expected translations
# (*.want) and the logs of the servers and the browser. Missing tools (chromium, nodejs,
# python3-jinja2) are installed with apt-get when it can. Environment: NMT (build/bin/nmt), THREADS
# (decoding threads of both nmt commands; 1), FLAGS (decoding options given to both, e.g.
# "--beam-size 1"; none).
set -euo pipefail
[ $# -eq 3 ] || { sed -n 4p "$0" >&2; exit 2; }
lt=$1 out=$2 model=$3
here=$(cd "$(dirname "$0")" && pwd)
NMT=${NMT:-$here/../../build/bin/nmt}
THREADS=${THREADS:-1}
read -r -a flags <<<"${FLAGS:-}"
[ -x "$NMT" ] || { echo "lt_frontend.sh: $NMT: no nmt binary (build it, or set NMT)" >&2; exit 2; }
[ -d "$model" ] || { echo "lt_frontend.sh: $model: no model directory" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v node >/dev/null || need+=(nodejs)
/usr/bin/python3 -c 'import jinja2' 2>/dev/null || need+=(python3-jinja2)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  echo "lt_frontend.sh: installing ${need[*]}" >&2
  { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" ||
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"; }
  } >"$out/apt.log" 2>&1 || { echo "lt_frontend.sh: could not install ${need[*]} ($out/apt.log)" >&2; exit 1; }
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work" 2>/dev/null || true # the browser's last helper processes may still be leaving
}
trap cleanup EXIT

# The page and its static files, from the repository as it is.
mkdir -p "$work/lt"
if [ -f "$lt/libretranslate/templates/index.html" ]; then
  commit=$(git -C "$lt" rev-parse HEAD 2>/dev/null || echo "(not a git checkout)")
  mkdir -p "$work/lt/libretranslate"
  cp -r "$lt/libretranslate/templates" "$lt/libretranslate/static" "$work/lt/libretranslate/"
elif commit=$(git --git-dir="$lt" rev-parse --verify -q HEAD 2>/dev/null); then
  git --git-dir="$lt" archive HEAD libretranslate/templates libretranslate/static | tar -x -C "$work/lt"
else
  echo "lt_frontend.sh: $lt: neither a LibreTranslate checkout nor a bare LibreTranslate repository" >&2
  exit 2
fi
echo "lt_frontend.sh: LibreTranslate $commit" >&2

# Starts a server writing `listening on URL` to LOG; sets $listening to that URL.
start() {
  local log=$1; shift
  : >"$log" # there before the server writes it: read at once below
  "$@" 2>"$log" &
  pids+=($!)
  for _ in $(seq 600); do
    listening=$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' "$log")
    [ -n "$listening" ] && return 0
    kill -0 $! 2>/dev/null || break
    sleep 0.1
  done
  echo "lt_frontend.sh: $1 did not start: $(cat "$log")" >&2
  exit 1
}
start "$out/serve.log" "$NMT" serve -m "$model" --source-lang en --target-lang de --port 0 --threads "$THREADS" ${flags[@]+"${flags[@]}"}
api=$listening
start "$out/page.log" /usr/bin/python3 "$here/lt_frontend.py" "$work/lt" "$api"
page=$listening
echo "lt_frontend.sh: nmt serve at $api, LibreTranslate's page at $page/" >&2

text=$'A man is riding a bike down the street.\nTwo dogs are playing in the snow.'
auto_text="A little girl in a pink dress is climbing the stairs."
printf '%s\n' "A woman is reading a book in the park." "Three children are jumping into a lake." \
  "A man in a blue shirt is cooking dinner." >"$out/sentences.txt"
rm -rf "$out/download"
start_s=$(date +%s.%N)
node "$here/lt_frontend.js" "$(command -v chromium)" "$page/" "$out" "$work/profile" "$text" "$auto_text" "$out/sentences.txt" \
  2>"$out/browser.log" || { echo "lt_frontend.sh: the browser run failed: $(head -1 "$out/browser.log") (the page: $out/error.png, the log: $out/browser.log)" >&2; exit 1; }
echo "lt_frontend.sh: the page's three steps took $(awk -v a="$start_s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" >&2

translate() { "$NMT" translate -m "$model" --threads "$THREADS" -q ${flags[@]+"${flags[@]}"}; }
printf '%s\n' "$text" | translate >"$out/text.want"
printf '%s\n' "$auto_text" | translate >"$out/auto.want"
translate <"$out/sentences.txt" >"$out/file.want"

fail=0
same() { # LABEL GOT WANT
  if cmp -s "$2" "$3"; then echo "PASS $1: $(paste -sd'|' "$2")"
  else echo "FAIL $1: the page gives '$(paste -sd'|' "$2")', nmt translate '$(paste -sd'|' "$3")'"; fail=1; fi
}
same "typed text (en -> de)" "$out/text.out" "$out/text.want"
same "auto-detected text" "$out/auto.out" "$out/auto.want"
same "translated file" "$out/download/sentences.txt" "$out/file.want"
# The JSON the page received, as its Response box shows it: translatedText is the translation itself.
for step in text auto; do
  if /usr/bin/python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["translatedText"] + "\n" != open(sys.argv[2]).read())' \
       "$out/$step.response.json" "$out/$step.want"; then
    echo "PASS $step: the page's Response box holds that translatedText"
  else
    echo "FAIL $step: the page's Response box holds $(tr -d '\n' <"$out/$step.response.json")"; fail=1
  fi
done
case "$(cat "$out/auto.detected")" in
  ": English ("*"%)") echo "PASS detected language: $(cat "$out/auto.detected")";;
  *) echo "FAIL detected language: '$(cat "$out/auto.detected")', want English"; fail=1;;
esac
# Every request the page made of nmt serve (its access log) was answered 200.
calls=$(sed -n 's/.*"method":"\([A-Z]*\)","path":"\([^"]*\)","status":\([0-9]*\).*/\1 \2 \3/p' "$out/serve.log" |
        sed 's|/download_file/[^ ]*|/download_file/NAME|' | sort | uniq -c | awk '{ printf "%s%s %s %s x%s", (NR > 1 ? ", " : ""), $2, $3, $4, $1 }')
if grep '"path"' "$out/serve.log" | grep -qv '"status":200,'; then echo "FAIL the page's requests: $calls"; fail=1
else echo "PASS the page's requests: $calls"; fi
echo "screenshots: $out/text.png $out/auto.png $out/file.png"
exit $fail
