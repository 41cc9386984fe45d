// lt_frontend.js: a user of LibreTranslate's own web page (served by lt_frontend.py in front of `nmt
// serve`) in headless Chromium, driven through the DevTools protocol over --remote-debugging-pipe (no
// port, loopback only, no npm package). In turn it:
//   text:  picks English -> German in the page's lists, types TEXT, waits for the translation;
//   auto:  clears the box, picks "Auto Detect", types AUTO_TEXT, waits for the translation and the
//          detected language the page shows beside the list;
//   file:  switches to "Translate Files", uploads FILE (source still Auto Detect), presses Translate
//          and lets the page download the result.
// Each step saves OUT/STEP.png (a screenshot) and what the page shows: OUT/text.out and OUT/auto.out
// (the translation box's value), OUT/text.response.json and OUT/auto.response.json (the "Response"
// box: the JSON the page received), OUT/auto.detected (the detected-language label), and the
// downloaded file under OUT/download/. A page error (LibreTranslate's red card) fails the run, with
// OUT/error.png the page as it was.
//   node lt_frontend.js CHROMIUM URL OUT PROFILE_DIR TEXT AUTO_TEXT FILE
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const [chromium, url, out, profile, text, autoText, file] = process.argv.slice(2);
if (!file) {
  console.error('usage: node lt_frontend.js CHROMIUM URL OUT PROFILE_DIR TEXT AUTO_TEXT FILE');
  process.exit(2);
}
const downloads = path.join(out, 'download');
fs.mkdirSync(downloads, { recursive: true });

// The browser and its protocol: messages are JSON separated by NUL bytes on fds 3 (to it) and 4.
class Browser {
  constructor() {
    this.process = spawn(chromium, [
      '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
      `--user-data-dir=${profile}`, '--no-first-run', '--no-default-browser-check',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-extensions',
      '--window-size=1200,1000', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    this.log = '';
    this.process.stderr.on('data', (d) => { this.log = (this.log + d).slice(-4000); });
    this.calls = new Map();
    this.waiters = [];
    this.nextId = 1;
    let pending = '';
    this.process.stdio[4].on('data', (chunk) => {
      pending += chunk.toString('utf8');
      for (let end; (end = pending.indexOf('\0')) >= 0; pending = pending.slice(end + 1))
        this.receive(JSON.parse(pending.slice(0, end)));
    });
  }

  receive(message) {
    const call = this.calls.get(message.id);
    if (call) {
      this.calls.delete(message.id);
      if (message.error) call.reject(new Error(`${call.method}: ${JSON.stringify(message.error)}`));
      else call.resolve(message.result);
      return;
    }
    const waiting = this.waiters.filter((w) => w.method === message.method && w.accept(message.params));
    this.waiters = this.waiters.filter((w) => !waiting.includes(w));
    for (const w of waiting) w.resolve(message.params);
  }

  call(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    this.process.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
    return new Promise((resolve, reject) => this.calls.set(id, { method, resolve, reject }));
  }

  // The next event `method` whose parameters `accept` takes.
  event(method, accept = () => true) {
    return new Promise((resolve) => this.waiters.push({ method, accept, resolve }));
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let page; // a call of the DevTools protocol on the page's session, once attached

const screenshot = async (step) => {
  const shot = await page('Page.captureScreenshot', { format: 'png' });
  fs.writeFileSync(path.join(out, `${step}.png`), Buffer.from(shot.data, 'base64'));
};

async function main(browser) {
  const { targetInfos } = await browser.call('Target.getTargets');
  const { sessionId } = await browser.call('Target.attachToTarget',
    { targetId: targetInfos.find((t) => t.type === 'page').targetId, flatten: true });
  page = (method, params) => browser.call(method, params, sessionId);
  const evaluate = async (expression) => {
    const r = await page('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value;
  };
  // Waits until `expression` is true; LibreTranslate's error card ends the wait.
  const until = async (expression, what) => {
    for (let i = 0; i < 1200; i++) {
      const [done, error] = await evaluate(`[Boolean(${expression}), window._vueApp ? _vueApp.error : '']`);
      if (error) throw new Error(`the page shows the error "${error}" while waiting for ${what}`);
      if (done) return;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  };
  const click = async (selector) => {
    const box = await evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
      e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();
      return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()`);
    for (const type of ['mousePressed', 'mouseReleased'])
      await page('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
  };
  // What a user's choice in a <select> does: its value set, then its change event.
  const choose = async (label, code) => {
    const chosen = await evaluate(`(() => { const s = document.querySelector('select[aria-labelledby=${label}]');
      if (![...s.options].some((o) => o.value === ${JSON.stringify(code)})) return [...s.options].map((o) => o.value).join(' ');
      s.value = ${JSON.stringify(code)}; s.dispatchEvent(new Event('change', {bubbles: true})); return ''; })()`);
    if (chosen) throw new Error(`the list ${label} does not offer ${code}, only: ${chosen}`);
  };
  const type = async (words) => {
    await evaluate("document.getElementById('textarea1').focus()");
    const lines = words.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (i) { // Enter, as a keyboard gives it
        for (const kind of ['keyDown', 'keyUp'])
          await page('Input.dispatchKeyEvent', { type: kind, key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13,
                                                 text: kind === 'keyDown' ? '\r' : undefined });
      }
      if (lines[i]) await page('Input.insertText', { text: lines[i] });
    }
  };
  const translated = async (step) => {
    await until("_vueApp.inputText !== '' && !_vueApp.loadingTranslation && _vueApp.translatedText !== ''",
                `the translation (${step})`);
    fs.writeFileSync(path.join(out, `${step}.out`), await evaluate("document.getElementById('textarea2').value") + '\n');
    fs.writeFileSync(path.join(out, `${step}.response.json`),
                     await evaluate("document.querySelectorAll('.code-box code')[1].textContent") + '\n');
  };

  await page('Page.enable');
  await page('Runtime.enable');
  await browser.call('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: path.resolve(downloads),
                                                       eventsEnabled: true });
  const loaded = browser.event('Page.loadEventFired');
  await page('Page.navigate', { url });
  await loaded;
  await until('window._vueApp && !_vueApp.loading && _vueApp.langs.length > 0', 'the languages');

  await choose('sourceLangLabel', 'en');
  await choose('targetLangLabel', 'de');
  await type(text);
  await translated('text');
  await screenshot('text');

  await click('.btn-delete-text');
  await until("_vueApp.inputText === ''", 'the text box to empty');
  await choose('sourceLangLabel', 'auto');
  await type(autoText);
  await translated('auto');
  await until("_vueApp.detectedLangText !== ''", 'the detected language');
  fs.writeFileSync(path.join(out, 'auto.detected'), await evaluate('_vueApp.detectedLangText') + '\n');
  await screenshot('auto');

  await click('#translation-type-btns button:nth-of-type(2)');
  await until("document.querySelector('.file-dropzone input[type=file]')", 'the file input');
  const { root } = await page('DOM.getDocument', {});
  const { nodeId } = await page('DOM.querySelector', { nodeId: root.nodeId, selector: '.file-dropzone input[type=file]' });
  await page('DOM.setFileInputFiles', { files: [path.resolve(file)], nodeId });
  await until("_vueApp.inputFile && document.querySelector('.file-dropzone button.btn')", 'the Translate button');
  const downloaded = browser.event('Browser.downloadProgress', (p) => p.state !== 'inProgress');
  await click('.file-dropzone button.btn');
  const progress = await downloaded;
  if (progress.state !== 'completed') throw new Error(`the download of the translated file: ${progress.state}`);
  await until('_vueApp.translatedFileUrl', 'the Download button');
  await screenshot('file');
}

const browser = new Browser();
const end = (status, message) => {
  if (message) console.error(`lt_frontend.js: ${message}\n${browser.log}`);
  browser.process.kill();
  process.exit(status);
};
const timer = setTimeout(() => end(1, 'timed out'), 300000);
main(browser).then(() => { clearTimeout(timer); end(0); }, async (e) => {
  clearTimeout(timer);
  if (page) await screenshot('error').catch(() => {}); // the page as it was when the step failed
  end(1, e.message);
});
