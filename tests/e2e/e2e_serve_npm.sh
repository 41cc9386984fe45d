#!/usr/bin/env bash
# `nmt serve` with two tiny models (en-de, fr-en) answering a client nobody here wrote: the npm
# registry's `libretranslate` package (pinned), installed into the test's private directory. Its
# translate(), with a source and with "auto", must give what `nmt translate` gives; the package has no
# detect function, so POST /detect is asked with Node's own fetch, as a JavaScript client would. Node
# and npm come from Debian's packages when missing (installed only where apt-get may run); the test is
# skipped (77) where they cannot be had or the registry cannot be reached.
. "$NMT_SOURCE_DIR/tests/support/harness.sh"
serve_test=e2e_serve_npm
. "$NMT_SOURCE_DIR/tests/support/serve_harness.sh"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q nodejs npm >apt.out 2>&1 || true
  fi
  command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP $serve_test: no node and npm"; exit 77; }
fi
node -e 'if (typeof fetch !== "function") process.exit(1)' ||
  { echo "SKIP $serve_test: node $(node --version) has no fetch (the client needs Node 18 or later)"; exit 77; }
mkdir npm
if ! timeout 300 npm install --prefix "$tmp/npm" --no-audit --no-fund --no-save libretranslate@1.0.1 >npm.out 2>&1; then
  echo "SKIP $serve_test: npm could not install libretranslate (registry unreachable?): $(tail -3 npm.out)"
  exit 77
fi

fr_model fr2en
start npm -m fr2en

english="A man in a blue shirt is standing on a ladder and cleaning the windows of the house."
french="Un homme en chemise bleue est debout sur une échelle et nettoie les fenêtres de la maison."
tr() { printf '%s\n' "$2" | "$NMT" translate -m "$1" --threads 1 -q; }

cat >client.js <<'JS'
const { translate } = require(process.argv[2]);
const [apiurl, english, reversed, french] = process.argv.slice(3);
(async () => {
  const out = [];
  out.push(await translate({ query: english, source: "en", target: "de", apiurl }));
  out.push(await translate({ query: reversed, source: "fr", target: "en", apiurl }));
  out.push(await translate({ query: english, source: "auto", target: "de", apiurl }));
  out.push(await translate({ query: reversed, source: "fr", target: "de", apiurl }));
  for (const q of [english, french]) {
    const res = await fetch(`${apiurl}/detect`, {
      method: "POST", body: JSON.stringify({ q }), headers: { "Content-Type": "application/json" } });
    const guesses = await res.json();
    out.push(`${res.status} ${guesses[0].language} ${guesses[0].confidence > 0}`);
  }
  console.log(out.join("\n"));
})().catch((e) => { console.error(e); process.exit(1); });
JS
reversed="eht tac sees a god"
check "the npm client" 0 node client.js "$tmp/npm/node_modules/libretranslate" "$url" "$english" "$reversed" "$french"
{
  tr model "$english"
  tr fr2en "$reversed"
  tr model "$english"
  tr fr2en "$reversed" | "$NMT" translate -m model --threads 1 -q
  echo "200 en true"
  echo "200 fr true"
} >want.txt
diff want.txt "$out" >diff.txt || { say_fail "the npm client's answers differ from nmt translate"; cat diff.txt "$err"; }
exit $fail
