#!/usr/bin/env bash
# `nmt serve`'s page in a real browser: headless Chromium (Debian's `chromium`, installed here when
# missing and apt can) types a sentence, presses Translate, and the translation read from the page must
# be what `nmt translate` prints; the heat map must be drawn; a screenshot is kept in the build
# directory (serve-page.png). Then, with two models, the page's list of pairs: French to German
# (through English) chosen there is translated as `nmt translate` through both models. Loopback only. Without Chromium or Node.js (and no way to install them):
# SKIP.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
server=""
at_exit '[ -n "$server" ] && kill $server 2>/dev/null'

need=()
command -v chromium >/dev/null || need+=(chromium)
command -v node >/dev/null || need+=(nodejs)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  if command -v apt-get >/dev/null && { [ -z "$sudo" ] || sudo -n true 2>/dev/null; }; then
    echo "e2e_serve_browser: installing ${need[*]}" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >apt.log 2>&1 ||
      { $sudo apt-get update -qq >>apt.log 2>&1 &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >>apt.log 2>&1; }
  fi
  for tool in chromium node; do
    command -v $tool >/dev/null || { echo "SKIP e2e_serve_browser: $tool is not installed and could not be installed"; exit 0; }
  done
fi

serve_test=e2e_serve_browser
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"
"$NMT" serve -m model --port 0 --threads 1 --quiet 2>serve.err &
server=$!
url=""
for _ in $(seq 200); do
  url="$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' serve.err)"
  [ -n "$url" ] && break
  sleep 0.05
done
[ -n "$url" ] || { echo "FAIL the server did not start: $(cat serve.err)"; exit 1; }

sentence="the big dog sees a red house"
want="$(printf '%s\n' "$sentence" | "$NMT" translate -m model --threads 1 -q)"
shot="$NMT_BIN_DIR/../serve-page.png"
got="$(node "$NMT_SOURCE_DIR/tests/support/browser_page.js" "$(command -v chromium)" "$url/" "$sentence" "$shot" "$tmp/profile" 2>browser.err)" ||
  say_fail "the browser run: $(cat browser.err)"
[ "$got" = "$want" ] || say_fail "the page shows '$got', nmt translate prints '$want'"
[ -s "$shot" ] && [ "$(head -c 8 "$shot" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || say_fail "no PNG screenshot at $shot"
kill -TERM $server; wait $server || say_fail "the server's exit status"
server=""

# With two models the page lists every pair; French to German goes through English, as `nmt translate`
# through both models gives it.
fr_model fr2en
start two -m fr2en
reversed="eht gib god sees a der esuoh"
want="$(printf '%s\n' "$reversed" | "$NMT" translate -m fr2en --threads 1 -q | "$NMT" translate -m model --threads 1 -q)"
got="$(node "$NMT_SOURCE_DIR/tests/support/browser_page.js" "$(command -v chromium)" "$url/" "$reversed" "$tmp/two.png" \
       "$tmp/profile2" '["fr","de"]' 2>browser.err)" || say_fail "the browser run with two models: $(cat browser.err)"
[ "$got" = "$want" ] || say_fail "the page shows '$got' for fr-de, nmt translate through both models prints '$want'"
[ $fail -eq 0 ] && echo "PASS e2e_serve_browser (screenshot: $shot)"
exit $fail
