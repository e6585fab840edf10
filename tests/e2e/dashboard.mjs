// Browser end-to-end test of the hivemem dashboard, run by e2e_test.go
// against a demo home (internal/web/webtest). It drives Debian's chromium
// through playwright-core: overview, search (also as of a day), opening a
// hit in the viewer, condense with preview, live events, backup diff and
// restore, corrections (supersede, forget, purge) in the viewer, settings,
// token login, a phone-sized screen — and checks that HTML in a memory
// file never runs. Screenshots go to $HIVEMEM_ARTIFACTS.
//
// Environment: HIVEMEM_URL (server without token), HIVEMEM_TOKEN_URL and
// HIVEMEM_TOKEN (server with one), HIVEMEM_CHROMIUM, HIVEMEM_ARTIFACTS,
// optional HIVEMEM_DASHBOARD_PNG (where to save the README screenshot) and
// HIVEMEM_TEST_SCREENS (a directory for the documentation's screenshots:
// overview, agent, search, events).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k, def) => {
  const v = process.env[k] ?? def;
  if (v === undefined) throw new Error(`${k} is not set`);
  return v;
};
const base = env('HIVEMEM_URL');
const tokenBase = env('HIVEMEM_TOKEN_URL');
const token = env('HIVEMEM_TOKEN');
const artifacts = env('HIVEMEM_ARTIFACTS');
const readme = process.env.HIVEMEM_DASHBOARD_PNG || '';
const screens = process.env.HIVEMEM_TEST_SCREENS || '';
if (screens) fs.mkdirSync(screens, { recursive: true });
// docShot saves a documentation screenshot (the visible window) when asked.
async function docShot(page, name) {
  if (screens) await page.screenshot({ path: path.join(screens, name + '.png'), fullPage: false });
}
const marker = '__hivememPwned';
fs.mkdirSync(artifacts, { recursive: true });

const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hivemem-e2e-profile-'));
const launch = (dir, extra = {}) => chromium.launchPersistentContext(dir, {
  executablePath: env('HIVEMEM_CHROMIUM', '/usr/bin/chromium'),
  headless: true,
  args: flags,
  viewport: { width: 1440, height: 960 },
  colorScheme: 'light',
  timeout: 60000,
  ...extra,
});
const context = await launch(userDataDir);
context.setDefaultTimeout(15000);

const problems = [];
function watch(page, name) {
  page.on('pageerror', (e) => problems.push(`${name}: uncaught ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${name}: console error: ${m.text()}`);
  });
  page.on('dialog', (d) => { problems.push(`${name}: unexpected dialog "${d.message()}"`); d.dismiss(); });
  return page;
}
let shot = 0;
async function snap(page, name, full = true) {
  shot++;
  const file = path.join(artifacts, `${String(shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: full });
}
async function notPwned(page, where) {
  const v = await page.evaluate((k) => window[k], marker);
  assert.equal(v, undefined, `${where}: memory text ran as script (${marker}=${v})`);
}
let step = '';
const steps = [];
async function run(name, fn) {
  step = name;
  const t0 = Date.now();
  await fn();
  steps.push(name);
  console.log(`ok   ${name} (${Date.now() - t0} ms)`);
}

const page = watch(context.pages()[0] || await context.newPage(), 'main');

try {
  await run('overview lists the agents with budget bars and health', async () => {
    await page.goto(base + '/');
    const cards = page.locator('#agents .agent');
    assert.equal(await cards.count(), 5);
    assert.match(await page.locator('.agent[data-agent="coder"] .badge').textContent(), /due/);
    assert.match(await page.locator('.agent[data-agent="tester"] .badge').textContent(), /backoff/);
    assert.match(await page.locator('.agent[data-agent="reviewer"] .badge').textContent(), /ok/);
    assert.equal(await page.locator('.agent[data-agent="planner"] .bar .fill').count(), 1);
    assert.ok(await page.locator('#timeline .event').count() >= 3, 'recent events listed');
    await page.locator('#live:not([hidden])').waitFor();
    await snap(page, 'overview');
    if (readme) await page.screenshot({ path: readme, fullPage: false });
  });

  // What a person reads: words, not the status JSON's keys and stamps.
  const rawStamp = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)/;
  const camel = /\b[a-z]+[A-Z][a-zA-Z]*\b/;
  const boolWord = /\b(true|false)\b/;
  await run('the manager panel reads as words', async () => {
    await page.goto(base + '/');
    const panel = page.locator('#manager');
    const text = await panel.innerText();
    assert.doesNotMatch(text, boolWord, `no true/false in the manager panel:\n${text}`);
    assert.doesNotMatch(text, rawStamp, `no raw timestamps in the manager panel:\n${text}`);
    const dd = async (label) => (await panel.locator('div', { has: page.locator('dt', { hasText: label }) }).locator('dd').innerText()).trim();
    assert.equal(await dd('Mining'), 'on');
    assert.match(await dd('Mine lag'), /^0\.84 s, finished 2 minutes ago$/);
    assert.match(await dd('Running since'), /^3 hours ago$/);
    assert.match(await dd('Next scan'), /^in [34] minutes$/);
    assert.equal(await dd('Problems'), 'none');
    // Each line keeps to one line of the panel: nothing wraps over three.
    for (const row of await panel.locator('dd').all()) {
      const box = await row.boundingBox();
      const lh = await row.evaluate((e) => parseFloat(getComputedStyle(e).lineHeight) || 20);
      assert.ok(box.height <= lh * 2.2, `"${await row.innerText()}" wraps over ${Math.round(box.height / lh)} lines`);
    }
    await docShot(page, 'overview');
  });

  await run('events read as sentences with their agent and time', async () => {
    await page.goto(base + '/events');
    const rows = page.locator('#timeline .event .ev-text');
    assert.ok(await rows.count() >= 4, 'events listed');
    for (const row of await rows.all()) {
      const text = (await row.innerText()).trim();
      assert.doesNotMatch(text, camel, `no camelCase keys: "${text}"`);
      assert.doesNotMatch(text, boolWord, `no true/false: "${text}"`);
      assert.doesNotMatch(text, rawStamp, `no raw timestamps: "${text}"`);
      assert.match(text, / — (just now|in a moment|(in )?\d+ \w+( ago)?|\d{4}-\d\d-\d\d)$/, `ends with a relative time: "${text}"`);
    }
    const mine = (await page.locator('#timeline .event.type-mine .ev-text').first().innerText()).trim();
    assert.match(mine, /^coder: mined its memory: 3 drawers added, 41 drawers unchanged — 4 minutes ago$/);
    const abort = (await page.locator('#timeline .event.type-condense-abort .ev-text').first().innerText()).trim();
    assert.match(abort, /^tester: condensation stopped \(summarize failed\): claude-cli: exit status 1: rate limited; failure 2 in a row — \d+ (minutes|hours) ago$/);
    await docShot(page, 'events');
  });

  await run('region headings read right without an emoji font', async () => {
    // Visible text of the headings: words only, the emoji drawn as icons.
    const emoji = /\p{Extended_Pictographic}/u;
    const headingText = async (p) => {
      await p.goto(base + '/agents/planner');
      const out = {};
      for (const sel of ['.region-pinned .region-name', '.region-condensed .region-name', '.region-pinned .section-heading', '.region-condensed .section-heading']) {
        const t = (await p.locator(sel).first().innerText()).replace(/^#/, '').trim();
        assert.doesNotMatch(t, emoji, `${sel} shows no emoji: "${t}"`);
        const icon = await p.locator(sel).first().locator('svg.icon').boundingBox();
        assert.ok(icon && icon.width >= 8 && icon.height >= 8, `${sel} has its icon drawn (${JSON.stringify(icon)})`);
        out[sel] = t;
      }
      for (const a of await p.locator('.toc a').allInnerTexts()) assert.doesNotMatch(a, emoji, `contents entry "${a}" shows no emoji`);
      return out;
    };
    // The width the emoji takes in text: its glyph with an emoji font,
    // a fallback box without one.
    const pinWidth = (p) => p.evaluate(() => {
      const c = document.createElement('canvas').getContext('2d');
      c.font = '40px sans-serif';
      return c.measureText('\u{1F4CC}').width;
    });
    const withFont = await headingText(page);
    assert.match(withFont['.region-pinned .region-name'], /^pinned facts$/i); // shown in capitals
    assert.match(withFont['.region-condensed .region-name'], /^condensed history$/i);
    assert.equal(withFont['.region-pinned .section-heading'], 'Durable facts (pinned — never condensed)');
    assert.equal(withFont['.region-condensed .section-heading'], 'Condensed history');
    await docShot(page, 'agent');

    // The same page in a browser whose fontconfig hides every emoji font.
    const conf = path.join(userDataDir + '-fonts.conf');
    fs.writeFileSync(conf, `<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><include ignore_missing="yes">/etc/fonts/fonts.conf</include>
<selectfont><rejectfont><glob>*Emoji*</glob><glob>*emoji*</glob><pattern><patelt name="color"><bool>true</bool></patelt></pattern></rejectfont></selectfont></fontconfig>
`);
    const bareDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hivemem-e2e-noemoji-'));
    const bare = await launch(bareDir, { env: { ...process.env, FONTCONFIG_FILE: conf } });
    try {
      const p = watch(bare.pages()[0] || await bare.newPage(), 'no-emoji-font');
      const without = await headingText(p);
      assert.deepEqual(without, withFont, 'the headings read the same without an emoji font');
      const [w1, w2] = [await pinWidth(page), await pinWidth(p)];
      console.log(`     📌 is ${w1.toFixed(1)} px wide with the emoji font, ${w2.toFixed(1)} px without`);
      assert.notEqual(w1, w2, 'the second browser really lacks the emoji font');
      await snap(p, 'viewer-no-emoji-font', false);
    } finally {
      await bare.close();
      fs.rmSync(bareDir, { recursive: true, force: true });
      fs.rmSync(conf, { force: true });
    }
  });

  await run('search finds a section with highlighted matches', async () => {
    await page.goto(base + '/search');
    await page.fill('input[name="q"]', 'flaky login test');
    await Promise.all([page.waitForURL(/\/search\?q=/), page.press('input[name="q"]', 'Enter')]);
    const hits = page.locator('.hit-card');
    assert.ok(await hits.count() >= 2, 'several hits');
    assert.match(await hits.first().locator('.hit-title').textContent(), /flaky login test/);
    assert.ok(await hits.first().locator('mark').count() >= 2, 'query terms marked');
    await snap(page, 'search');
    await docShot(page, 'search');
  });

  await run('a hit opens in the viewer at its line', async () => {
    const link = page.locator('.hit-card').first().locator('a.hit-title');
    const href = await link.getAttribute('href');
    const line = href.match(/#L(\d+)$/)[1];
    await Promise.all([page.waitForURL(/\/agents\/tester\?/), link.click()]);
    assert.equal(new URL(page.url()).hash, '#L' + line);
    const target = page.locator('#L' + line);
    await target.waitFor();
    assert.ok(await target.isVisible(), 'the hit line is visible');
    assert.ok(await page.locator('.md-section.hit').count() >= 1, 'hit section marked');
    assert.ok(await page.locator('.md-body mark').count() >= 1, 'terms marked in the viewer');
    const box = await target.boundingBox();
    assert.ok(box && box.y >= 0 && box.y < 960, `hit line scrolled into view (y=${box && box.y})`);
    await snap(page, 'viewer-hit', false);
  });

  await run('search as of a day ranks the sections of the time the query names', async () => {
    // The tester's "nightly run" sections are six days apart; as of
    // 2026-11-10, "yesterday" is the one of 2026-11-09.
    await page.goto(base + '/search');
    await page.locator('details.filters summary').click();
    await page.fill('input[name="q"]', 'nightly run yesterday');
    await page.selectOption('select[name="agent"]', 'tester');
    await page.fill('input[name="as_of"]', '2026-11-10');
    await Promise.all([page.waitForURL(/as_of=2026-11-10/), page.press('input[name="q"]', 'Enter')]);
    const hits = page.locator('.hit-card');
    assert.ok(await hits.count() >= 2, 'several hits');
    assert.match(await hits.first().locator('.hit-meta').textContent(), /2026-11-09/);
    assert.equal(await page.inputValue('input[name="as_of"]'), '2026-11-10', 'the field keeps the day');
    assert.ok(await page.locator('details.filters[open]').count() === 1, 'filters open with a date set');
    await snap(page, 'search-as-of');
  });

  await run('the viewer marks the regions of a condensed file', async () => {
    await page.goto(base + '/agents/planner');
    for (const r of ['pinned', 'condensed', 'recent']) {
      assert.equal(await page.locator(`.doc .region-${r}`).count(), 1, `${r} region`);
    }
    assert.match(await page.locator('.doc .region-pinned').textContent(), /never on a Friday/);
    assert.ok(await page.locator('.doc .md-table table').count() === 1, 'table rendered');
    await snap(page, 'viewer-regions');
  });

  await run('HTML in a memory file is shown as text and never runs', async () => {
    for (const url of ['/agents/researcher', '/agents/researcher?view=raw', '/search?q=vendor+pricing+page', '/agents/researcher/backups']) {
      await page.goto(base + url);
      await page.waitForLoadState('load');
      await page.waitForTimeout(150);
      await notPwned(page, url);
    }
    await page.goto(base + '/agents/researcher');
    const doc = page.locator('#doc');
    for (const tag of ['script', 'img', 'iframe', 'svg']) {
      assert.equal(await doc.locator(tag).count(), 0, `no <${tag}> from memory text`);
    }
    assert.equal(await doc.locator('a[href^="javascript"]').count(), 0, 'no javascript: links');
    assert.equal(await doc.locator('a[href^="https://example.com/docs"]').count(), 1, 'plain https link kept');
    await page.getByText(`<script>window.${marker} = 'script';</script>`).first().waitFor();
    await page.getByText(`<img src=x onerror=`).first().waitFor();
    await notPwned(page, 'viewer');
    // The condense preview renders the payload inside a diff.
    await page.goto(base + '/agents/researcher/condense');
    await page.click('#preview');
    await page.locator('#preview-panel:not([hidden])').waitFor();
    await page.click('.tab[data-tab="output"]');
    assert.match(await page.locator('#output').textContent(), /<script>/);
    await notPwned(page, 'condense preview');
    await snap(page, 'xss-preview');
  });

  let backup = '';
  await run('condense shows a preview diff, then applies it; the event arrives live', async () => {
    const events = watch(await context.newPage(), 'events');
    await events.goto(base + '/events');
    await events.locator('#live:not([hidden])').waitFor();

    await page.goto(base + '/agents/coder/condense');
    await page.click('#preview');
    await page.locator('#preview-panel:not([hidden])').waitFor();
    assert.match(await page.locator('#condense-result .alert.info').textContent(), /→/);
    assert.ok(await page.locator('#diff .dl.del').count() > 10, 'deleted lines in the diff');
    assert.ok(await page.locator('#diff .dl.add').count() > 3, 'added lines in the diff');
    assert.equal(await page.locator('#apply').isEnabled(), true);
    await snap(page, 'condense-preview');
    await page.click('.tab[data-tab="output"]');
    assert.match(await page.locator('#output').textContent(), /## 🗜 Condensed history/);
    await page.click('#apply');
    const ok = page.locator('#condense-result .alert.ok');
    await ok.waitFor({ timeout: 30000 });
    assert.match(await ok.textContent(), /Condensed/);
    backup = (await ok.locator('code').textContent()).trim();
    assert.match(backup, /^\d{8}T\d{6}Z(-\d+)?$/);
    await snap(page, 'condense-applied');

    await events.locator('#timeline .event.type-condense .ev-agent', { hasText: 'coder' }).first().waitFor({ timeout: 10000 });
    await snap(events, 'events-live');
    await events.close();

    await page.goto(base + '/agents/coder');
    assert.equal(await page.locator('.doc .region-condensed').count(), 1, 'coder is condensed now');
  });

  await run('a backup shows its diff and restores after confirmation', async () => {
    await page.goto(base + '/agents/coder/backups');
    const row = page.locator(`tr[data-backup="${backup}"]`);
    await row.waitFor();
    const before = await page.locator('#backup-list tbody tr').count();
    await row.locator('.act-diff').click();
    await page.locator('#diff-panel:not([hidden])').waitFor();
    assert.ok(await page.locator('#diff .dl.add').count() > 10, 'restore would bring lines back');
    await snap(page, 'backup-diff');
    await row.locator('.act-restore').click();
    const dlg = page.locator('#confirm-restore');
    await dlg.waitFor({ state: 'visible' });
    assert.equal(await page.locator('#confirm-name').textContent(), backup);
    await snap(page, 'restore-confirm', false);
    await page.click('#confirm-go');
    const ok = page.locator('#backup-result .alert.ok');
    await ok.waitFor({ timeout: 20000 });
    assert.match(await ok.textContent(), /Restored coder/);
    assert.equal(await page.locator('#backup-list tbody tr').count(), before + 1, 'the replaced file became a backup');
    await snap(page, 'restored');
    await page.goto(base + '/agents/coder');
    assert.equal(await page.locator('.doc .region-condensed').count(), 0, 'coder is back to its old file');
  });

  await run('the memory viewer supersedes, forgets and purges a section after confirmation', async () => {
    await page.goto(base + '/agents/reviewer');
    const headings = await page.$$eval('.section-actions', (els) => els.map((e) => e.dataset.heading));
    assert.ok(headings.length >= 3, `reviewer has sections to correct (${headings.length})`);
    const [superseded, forgotten, purged] = headings;
    const actions = async (h) => {
      const i = await page.$$eval('.section-actions', (els, h) => els.findIndex((e) => e.dataset.heading === h), h);
      return i < 0 ? null : page.locator('.section-actions').nth(i);
    };
    const dlg = page.locator('#correct-dialog');
    const note = 'Reviews now need two approvals before merge (zebrae2enote).';

    (await actions(superseded)).locator('.act-supersede').click();
    await dlg.waitFor({ state: 'visible' });
    assert.equal(await page.locator('#correct-heading').textContent(), superseded);
    assert.equal(await page.locator('#correct-confirm-label').isVisible(), false, 'no agent id asked to supersede');
    await page.fill('#correct-text', note);
    await snap(page, 'supersede-confirm', false);
    await Promise.all([page.waitForEvent('load'), page.click('#correct-go')]);
    const old = page.locator('.md-section', { has: page.locator('.section-heading', { hasText: superseded }) });
    assert.match(await old.locator('.badge').first().textContent(), /superseded/);
    assert.ok((await page.locator('#doc').textContent()).includes('zebrae2enote'), 'the new note is in the file');

    (await actions(forgotten)).locator('.act-forget').click();
    await dlg.waitFor({ state: 'visible' });
    await Promise.all([page.waitForEvent('load'), page.click('#correct-go')]);
    assert.equal(await actions(forgotten), null, 'the forgotten section left the file');

    (await actions(purged)).locator('.act-purge').click();
    await dlg.waitFor({ state: 'visible' });
    assert.equal(await page.locator('#correct-confirm-label').isVisible(), true, 'a purge asks for the agent id');
    await page.fill('#correct-confirm', 'coder');
    await page.click('#correct-go');
    assert.match(await page.locator('#correct-result .alert.bad').textContent(), /type the agent id/);
    assert.notEqual(await actions(purged), null, 'a wrong agent id purges nothing');
    (await actions(purged)).locator('.act-purge').click();
    await dlg.waitFor({ state: 'visible' });
    await page.fill('#correct-confirm', 'reviewer');
    await Promise.all([page.waitForEvent('load'), page.click('#correct-go')]);
    assert.equal(await actions(purged), null, 'the purged section left the file');
    const raw = await page.evaluate(async () => (await fetch('/agents/reviewer?view=raw')).text());
    assert.ok(!raw.includes(purged), 'the purged heading is nowhere in the raw file');
    assert.ok(raw.includes('superseded by:'), 'the superseded marker is in the raw file');
    await snap(page, 'corrected');
  });

  await run('settings save to config.toml', async () => {
    await page.goto(base + '/settings');
    await page.fill('input[name="recent_keep"]', '5');
    await page.fill('input[name="interval"]', '45m');
    await page.click('#save');
    await page.locator('#settings-result .alert.ok').waitFor();
    await page.fill('input[name="byte_trigger_pct"]', '150');
    const n = problems.length;
    await page.click('#save');
    assert.match(await page.locator('#settings-result .alert.bad').textContent(), /byte_trigger_pct/);
    // The browser logs the expected 400 as a console error.
    assert.ok(problems.slice(n).every((x) => /status of 400/.test(x)), 'only the refused save failed');
    problems.splice(n);
    await snap(page, 'settings');
  });

  await run('a token-protected server asks for the token', async () => {
    const p = watch(await context.newPage(), 'token');
    const resp = await p.goto(tokenBase + '/agents/planner');
    assert.match(p.url(), /\/login\?next=/);
    assert.equal(resp.status(), 200);
    await p.fill('#token', 'wrong-token');
    await Promise.all([p.waitForLoadState('load'), p.click('button[type="submit"]')]);
    await p.locator('.alert.bad').waitFor();
    problems.splice(0, problems.length, ...problems.filter((x) => !/status of 401/.test(x))); // the wrong token's page
    await p.fill('#token', token);
    await Promise.all([p.waitForURL(/\/agents\/planner$/), p.click('button[type="submit"]')]);
    assert.equal(await p.locator('.doc .region-pinned').count(), 1);
    const st = await p.evaluate(async () => (await fetch('/api/v1/status')).status);
    assert.equal(st, 200, 'the cookie authorises API calls');
    await p.close();
  });

  await run('works on a phone-sized screen', async () => {
    const phone = watch(await context.newPage(), 'phone');
    await phone.setViewportSize({ width: 390, height: 844 });
    for (const [url, name] of [['/', 'phone-overview'], ['/agents/planner', 'phone-viewer'], ['/search?q=condensation', 'phone-search']]) {
      await phone.goto(base + url);
      const over = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(over <= 1, `${url}: no horizontal scrolling on a phone (overflow ${over}px)`);
      await snap(phone, name, false);
    }
    await phone.close();
  });

  await run('dark mode renders', async () => {
    const dark = watch(await context.newPage(), 'dark');
    await dark.emulateMedia({ colorScheme: 'dark' });
    await dark.goto(base + '/agents/planner');
    await snap(dark, 'dark-viewer', false);
    await dark.close();
  });

  assert.deepEqual(problems, [], 'no page errors, console errors or dialogs');
  console.log(`e2e: all ${steps.length} steps passed`);
} catch (e) {
  console.error(`FAIL ${step}: ${e.stack || e}`);
  if (problems.length) console.error('page problems:\n  ' + problems.join('\n  '));
  try { await snap(page, 'failure'); } catch (_) { /* the page is gone */ }
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  process.exit(1);
}
await context.close();
fs.rmSync(userDataDir, { recursive: true, force: true });
