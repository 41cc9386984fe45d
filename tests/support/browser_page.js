// browser_page.js: drives headless Chromium through the DevTools protocol (over --remote-debugging-pipe,
// no network port) on nmt serve's page: types a sentence into #source, clicks #translate like a user,
// waits for #result to be done (streamed in one piece or more), checks that #map holds the heat map SVG,
// saves a screenshot, prints the translation.
// With PAIR (a value of the page's #pair list, '["fr","de"]'), chooses that pair first, as a user would,
// and does not ask for the map (a pair translated through English has none).
//   node browser_page.js CHROMIUM URL SENTENCE SCREENSHOT.png PROFILE_DIR [PAIR]
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');

const [chromium, url, sentence, screenshot, profile, pair] = process.argv.slice(2);
const browser = spawn(chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe', `--user-data-dir=${profile}`,
  '--no-first-run', '--no-default-browser-check', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--disable-default-apps', '--disable-extensions', '--window-size=1000,900',
  // Loopback only: every other host name resolves to nothing.
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let browserLog = '';
browser.stderr.on('data', (d) => { browserLog += d; });
const toBrowser = browser.stdio[3], fromBrowser = browser.stdio[4];

let nextId = 1, pending = new Map(), listeners = [], buffered = '';
fromBrowser.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let end;
  while ((end = buffered.indexOf('\0')) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (message.id && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    } else if (message.method) {
      listeners = listeners.filter((l) => !(l.method === message.method && (l.resolve(message.params), true)));
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  toBrowser.write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const event = (method) => new Promise((resolve) => listeners.push({ method, resolve }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const { targetInfos } = await send('Target.getTargets');
  const page = targetInfos.find((t) => t.type === 'page');
  const { sessionId } = await send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
  const s = (method, params) => send(method, params, sessionId);
  const evaluate = async (expression) => (await s('Runtime.evaluate', { expression, returnByValue: true })).result.value;
  await s('Page.enable');
  await s('Runtime.enable');
  const loaded = event('Page.loadEventFired');
  await s('Page.navigate', { url });
  await loaded;
  if (pair) {
    const choose = `(() => { const p = document.getElementById('pair'); p.value = ${JSON.stringify(pair)}; ` +
                   "return p.value; })()";
    let chosen = '';
    for (let i = 0; i < 100 && chosen !== pair; i++) {
      chosen = await evaluate(choose);
      if (chosen !== pair) await sleep(50);
    }
    if (chosen !== pair) throw new Error('the page does not offer ' + pair + ': ' +
                                         await evaluate("document.getElementById('pair').innerHTML"));
  }
  await evaluate("document.getElementById('source').focus()");
  await s('Input.insertText', { text: sentence });
  const box = await evaluate("(() => { const r = document.getElementById('translate').getBoundingClientRect();" +
                             " return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()");
  for (const type of ['mousePressed', 'mouseReleased'])
    await s('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
  let state = '';
  for (let i = 0; i < 200 && state !== 'done'; i++) {
    await sleep(100);
    state = await evaluate("document.getElementById('result').dataset.state || ''");
  }
  const result = await evaluate("document.getElementById('result').textContent");
  if (state !== 'done' || !result)
    throw new Error('no translation appeared; status: ' + await evaluate("document.getElementById('status').textContent"));
  // The words came as the server's events (one piece or more), then the whole answer.
  if (!(await evaluate("Number(document.getElementById('result').dataset.pieces)") >= 1))
    throw new Error('the translation did not come as a stream');
  let map = 0;
  for (let i = 0; i < 100 && !pair && !(map > 0); i++) {
    await sleep(100);
    map = await evaluate("document.querySelectorAll('#map svg rect').length");
  }
  if (!pair && !(map > 0)) throw new Error('the heat map is missing');
  const shot = await s('Page.captureScreenshot', { format: 'png' });
  fs.writeFileSync(screenshot, Buffer.from(shot.data, 'base64'));
  process.stdout.write(result + '\n');
}

const timer = setTimeout(() => { console.error('browser_page: timed out\n' + browserLog); browser.kill(); process.exit(1); }, 60000);
main().then(() => { clearTimeout(timer); browser.kill(); process.exit(0); },
            (e) => { console.error('browser_page: ' + e.message + '\n' + browserLog.slice(-2000)); browser.kill(); process.exit(1); });
