// SPDX-License-Identifier: Apache-2.0
// Drives Tally's web console in Debian's chromium (playwright-core, one browser for the run)
// for tests/integration/test_console.py, which makes the assertions: visits each page given
// on the command line, waits until it rendered, saves a screenshot, and prints one JSON
// object: per page its text, the console errors and page errors seen while it loaded, and
// (for "action:" pages) the result line an action button left.
//
//   node pages.js BASE_URL SCREENSHOT_DIR CHROMIUM page...
//   page: a #fragment ("overview", "records?topic=t&partition=0"), or
//         "action:<fragment>:<css selector of the button or form to use>[|name=value&...]"
//         (the form's fields to fill first)
'use strict';
const { chromium } = require('playwright-core');

async function main() {
  const [base, shots, exe, ...pages] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: exe, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  let errors = [];
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', e => errors.push('pageerror: ' + e.message));
  page.on('dialog', d => d.accept()); // the confirmations of write actions
  const out = {};
  let n = 0;
  for (const spec of pages) {
    errors = [];
    const action = spec.startsWith('action:');
    const [frag, sel] = action ? spec.slice(7).split(/:(.*)/s) : [spec, null];
    const name = frag.split('?')[0];
    await page.goto(base + '/#' + frag);
    // A hash change in the same document does not reload: render() runs on hashchange.
    await page.waitForFunction(n => document.getElementById('view').dataset.loaded === n, name,
      { timeout: 15000 });
    // The first sample of /metrics and /api/groups (the charts' rings) has come back too.
    await page.waitForFunction(() => document.getElementById('status').textContent !== '',
      null, { timeout: 15000 });
    let result = null;
    if (action) {
      const [css, fill] = sel.split('|');
      const el = await page.$(css);
      if (el === null) throw new Error('no ' + css + ' on ' + frag);
      for (const [k, v] of new URLSearchParams(fill || ''))
        await el.evaluate((f, kv) => { f.querySelector('[name="' + kv[0] + '"]').value = kv[1]; }, [k, v]);
      const tag = await el.evaluate(e => e.tagName);
      if (tag === 'FORM') await el.evaluate(f => f.requestSubmit());
      else await el.click();
      await page.waitForSelector('#action-result', { timeout: 15000 });
      result = await page.textContent('#action-result');
    }
    n++;
    const file = shots + '/' + String(n).padStart(2, '0') + '-' + name + (action ? '-action' : '') + '.png';
    await page.screenshot({ path: file, fullPage: true });
    out[spec] = {
      text: await page.textContent('#view'),
      html: await page.innerHTML('#view'),
      errors: errors.slice(),
      result,
      screenshot: file,
    };
    // Leave the page: the next goto then always loads it fresh (and a hash-only change cannot
    // keep the old view's timers running).
    await page.goto('about:blank');
  }
  await browser.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch(e => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
