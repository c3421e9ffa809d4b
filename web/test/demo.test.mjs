// Browser tests of the chat app (web/demo, issue #25 item 6), driven as a person would in headless
// Debian Chromium against web/scripts/serve.mjs, with the tiny stories260K model of shared/
// (no network: the catalog's Hugging Face models are only listed): loading by URL with progress
// and by local file, chatting, stop, regenerate, edit-and-resend, conversations kept across
// reloads, markdown with sanitised HTML, settings reaching the engine, the storage manager and a
// phone-sized viewport. Screenshots go to build/web-screenshots/ (or $OXIDIZE_WEB_SCREENSHOTS).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { sharedDir } from '../scripts/serve.mjs';
import { openPage as openPageIn, startBrowserAndServers } from './page_helpers.mjs';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(webDir, '..');
const artifacts = path.join(process.env.OXIDIZE_WEB_ARTIFACTS || path.join(repoRoot, 'build', 'web-artifacts'), 'demo');
const screenshots = process.env.OXIDIZE_WEB_SCREENSHOTS || path.join(repoRoot, 'build', 'web-screenshots');
const cli = process.env.OXIDIZE_CLI || path.join(repoRoot, 'build', 'native', 'bin', 'oxidize');
const modelFile = path.join(sharedDir(), 'models', 'stories260K.gguf');
const MODEL = '/models/stories260K.gguf';
const SLOW_MODEL = '/__test/slow/stories260K.gguf';  // the test server trickles it out (16 KiB / 20 ms)
const PROMPT = 'Once upon a time';
const T = { timeout: 120_000 };

let browser, servers, closeAll;
const consoleLines = [];

const squash = (s) => s.replace(/\s+/g, ' ').trim();

function nativeGreedy(n) {
  const out = execFileSync(cli, ['run', '-m', modelFile, '-p', PROMPT, '-n', String(n), '--temp', '0'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return out.endsWith('\n') ? out.slice(0, -1) : out;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: false });
}

async function openDemo(base, query = '') {
  const page = await openPageIn(browser, consoleLines, base, `/demo/${query}`);
  page.on('dialog', (d) => d.accept());  // confirm() of deletes
  await page.waitForFunction(() => window.oxidizeDemo?.ready === true, null, { timeout: 60_000 });
  return page;
}

const replies = (page) => page.evaluate(() => window.oxidizeDemo.replies);
async function waitReplies(page, n) {
  await page.waitForFunction((k) => window.oxidizeDemo.replies >= k, n, { timeout: 60_000 });
}

/** Sends `text` from the composer and waits for its reply to be saved. */
async function chat(page, text) {
  await closeDrawers(page);
  const n = await replies(page);
  await page.fill('#prompt', text);
  await page.click('#send');
  await waitReplies(page, n + 1);
}

async function closeDrawers(page) {
  for (const name of ['models', 'settings', 'storage']) {
    if (await page.isVisible(`#${name}-drawer`)) await page.click(`#${name}-drawer .close-drawer`);
  }
}

/** Opens a drawer (models, settings, storage) unless it is open; another one closes first. */
async function openDrawer(page, name) {
  if (await page.isVisible(`#${name}-drawer`)) return;
  await closeDrawers(page);
  await page.click(`#toggle-${name}`);
}

/** Sets fields of the settings drawer (id -> value; booleans check boxes, selects by value). */
async function setSettings(page, values) {
  await openDrawer(page, 'settings');
  for (const [id, v] of Object.entries(values)) {
    const el = page.locator(`#${id}`);
    if (typeof v === 'boolean') await el.setChecked(v);
    else if (await el.evaluate((e) => e.tagName === 'SELECT')) await el.selectOption(String(v));
    else await el.fill(String(v));
  }
  await page.click('#settings-drawer .close-drawer');
}

async function loadUrl(page, url) {
  await openDrawer(page, 'models');
  await page.fill('#model-url', url);
  await page.click('#load-url');
  await page.waitForFunction(() => window.oxidizeDemo.state.loadController === null && !document.getElementById('load-url').disabled);
}

const lastReply = (page) => page.locator('.msg.assistant').last();
const messageCount = (page) => page.evaluate(() => window.oxidizeDemo.state.conversation.messages.length);

before(async () => {
  assert.ok(fs.existsSync(path.join(webDir, 'dist', 'index.js')), 'web/dist is missing: run scripts/build-web');
  if (!fs.existsSync(path.join(webDir, 'demo', 'build', 'vendor.js'))) {
    execFileSync(process.execPath, [path.join(webDir, 'demo', 'build.mjs')], { stdio: 'inherit' });
  }
  fs.mkdirSync(artifacts, { recursive: true });
  fs.mkdirSync(screenshots, { recursive: true });
  ({ browser, servers, close: closeAll } = await startBrowserAndServers(artifacts, consoleLines));
});

after(async () => closeAll?.());

describe('chat app, cross-origin isolated', () => {
  let page, base;
  before(async () => {
    base = servers.isolated.url;
    await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await openDemo(base);
  });
  after(async () => page?.close());

  test('first visit: no model, the catalog lists real chat models with size and quant', T, async () => {
    assert.equal(await page.evaluate(() => window.oxidizeDemo.engine.model), null);
    assert.equal(await page.isVisible('#models-drawer'), true, 'the model picker opens by itself');
    const cards = await page.$$eval('#model-list .model-card', (els) => els.map((e) => ({
      url: e.dataset.url, text: e.textContent,
    })));
    assert.ok(cards.length >= 5, `${cards.length} catalog entries`);
    for (const family of ['Qwen3', 'Llama 3.2', 'Gemma 3', 'SmolLM', 'Phi']) {
      assert.ok(cards.some((c) => c.text.includes(family)), `${family} listed`);
    }
    for (const c of cards) {
      assert.match(c.url, /^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+\/resolve\/main\/[\w.-]+\.gguf$/);
      assert.match(c.text, /(Q\d_K_M|Q8_0)/, `quant shown: ${c.text}`);
      assert.match(c.text, /≈ \d+(\.\d+)? (MB|GB)/, `size shown: ${c.text}`);
    }
    // The test server (a loopback address) offers its tiny model under "On this server".
    const local = page.locator(`#local-list .model-card[data-url="${base}${MODEL}"]`);
    assert.match(await local.textContent(), /stories260K.*F32/);
    assert.equal(await local.locator('.badge').count(), 0);
    assert.equal(await page.isDisabled('#send'), true, 'nothing to send to yet');
    await shot(page, 'demo-models');
  });

  test('a custom URL downloads with percent, speed and time left, then shows as cached', T, async () => {
    const seen = [];
    await openDrawer(page, 'models');
    await page.fill('#model-url', SLOW_MODEL);
    await page.click('#load-url');
    // Sample the progress line while the test server trickles the file out.
    for (let i = 0; i < 200; i++) {
      const t = await page.textContent('#progress-text');
      if (seen.at(-1) !== t) seen.push(t);
      if (t.startsWith('loaded')) break;
      await page.waitForTimeout(25);
    }
    const during = seen.find((t) => /^downloading · \d+% · .* of .* · .*\/s · .* left$/.test(t));
    assert.ok(during, `a line with percent, speed and time left among ${JSON.stringify(seen)}`);
    await page.waitForFunction(() => window.oxidizeDemo.engine.model !== null);
    assert.match(await page.textContent('#progress-text'), /^loaded .*from network|^loaded .*network/);
    assert.match(await page.textContent('#model-name'), /stories260K|\w/);
    assert.match(await page.textContent('#model-info'), /llama, 5 layers/);
    // Listed under "Your models", with the cached badge once stored.
    await openDrawer(page, 'models');
    const card = page.locator(`#custom-list .model-card[data-url="${base}${SLOW_MODEL}"]`);
    await card.locator('.badge.cached').waitFor();
    assert.equal(await card.locator('.badge.loaded').count(), 1);
    await shot(page, 'demo-model-loaded');
    await page.click('#models-drawer .close-drawer');
    assert.equal(await page.isDisabled('#send'), false);
  });

  test('chat: the greedy reply streams, with tokens/s and the context meter', T, async () => {
    await setSettings(page, { temperature: 0, 'max-tokens': 48, seed: 42 });
    await chat(page, PROMPT);
    const reply = await lastReply(page).locator('.content').textContent();
    if (fs.existsSync(cli)) {
      const expected = nativeGreedy(48);
      assert.ok(squash(reply).startsWith(squash(expected).slice(0, 40)), `reply ${JSON.stringify(reply)} vs native ${JSON.stringify(expected)}`);
    } else {
      assert.ok(reply.trim().length > 20, `reply: ${reply}`);
    }
    assert.match(await lastReply(page).locator('.meta').textContent(), /^\d+ tokens · [\d.]+ tokens\/s/);
    assert.match(await page.textContent('#stats'), /reply \d+ tokens, [\d.]+ tokens\/s · \d+ threads/);
    const ctx = await page.textContent('#context-text');
    const m = /^context: (\d+) \/ (\d+) tokens/.exec(ctx);
    assert.ok(m && Number(m[1]) > 5 && Number(m[2]) >= Number(m[1]), ctx);
    assert.ok(await page.$eval('#context-meter', (e) => e.value) > 0);
    assert.equal(await page.locator('.msg.user .content').first().textContent(), PROMPT);
    await shot(page, 'demo-chat');
  });

  test('settings reach the engine: max tokens 3 gives at most 3 tokens', T, async () => {
    await setSettings(page, { 'max-tokens': 3 });
    await chat(page, 'The little dog');
    const meta = await lastReply(page).locator('.meta').textContent();
    const n = Number(/^(\d+) tokens?/.exec(meta)[1]);
    assert.ok(n >= 1 && n <= 3, meta);
    assert.match(meta, /hit the token limit/);
    const usage = await page.evaluate(() => window.oxidizeDemo.state.conversation.lastUsage);
    assert.ok(usage.completion_tokens <= 3, JSON.stringify(usage));
  });

  test('the system prompt and every sampling setting go into the request, by the API\'s names', T, async () => {
    // Record what the app hands to engine.chat.completions.create().
    await page.evaluate(() => {
      const completions = window.oxidizeDemo.engine.chat.completions;
      const create = completions.create;
      completions.create = (req) => {
        window.lastRequest = JSON.parse(JSON.stringify(req));
        return create(req);
      };
    });
    await setSettings(page, {
      'use-template': true, 'system-prompt': 'You are a storyteller.', temperature: 0.5, 'top-p': 0.9, 'top-k': 20,
      'min-p': 0.1, 'repeat-penalty': 1.1, 'frequency-penalty': 0.2, 'presence-penalty': 0.3, 'max-tokens': 5, seed: 123,
    });
    await chat(page, 'Tell me about a cat');
    const req = await page.evaluate(() => window.lastRequest);
    assert.deepEqual(req.messages.slice(0, 1), [{ role: 'system', content: 'You are a storyteller.' }]);
    assert.deepEqual(req.messages.at(-1), { role: 'user', content: 'Tell me about a cat' });
    const { messages, signal, ...params } = req;  // signal: the app's stop button
    assert.deepEqual(params, {
      temperature: 0.5, top_p: 0.9, top_k: 20, min_p: 0.1, repeat_penalty: 1.1, frequency_penalty: 0.2,
      presence_penalty: 0.3, max_tokens: 5, seed: 123, stream: true,
    });
    assert.ok(messages.length >= 2);
    // The engine took them all: the reply came, within max_tokens.
    assert.equal(await page.isVisible('#error'), false);
    assert.ok(Number(/^(\d+) tokens?/.exec(await lastReply(page).locator('.meta').textContent())[1]) <= 5);
    await setSettings(page, {
      'use-template': false, 'system-prompt': '', temperature: 0, 'top-p': 0.95, 'top-k': 40, 'min-p': 0.05,
      'repeat-penalty': 1, 'frequency-penalty': 0, 'presence-penalty': 0, 'max-tokens': 48, seed: 42,
    });
  });

  test('stop ends a long reply, which is kept and marked stopped', T, async () => {
    await setSettings(page, { 'max-tokens': 100000, 'extra-params': '{"ignore_eos": true}' });
    const n = await replies(page);
    await page.fill('#prompt', 'Tell me a long story');
    await page.click('#send');
    await page.waitForFunction(() => (document.querySelector('.msg.streaming .content')?.textContent.length ?? 0) > 80);
    assert.equal(await page.isVisible('#stop'), true);
    await page.click('#stop');
    await waitReplies(page, n + 1);
    const meta = await lastReply(page).locator('.meta').textContent();
    assert.match(meta, /stopped/);
    assert.ok(Number(/^(\d+)/.exec(meta)[1]) < 100000);
    assert.equal(await page.isVisible('#send'), true);
    await setSettings(page, { 'max-tokens': 48, 'extra-params': '' });
  });

  test('regenerate replaces the last reply (greedy: the same text again)', T, async () => {
    await chat(page, PROMPT);
    const before = await lastReply(page).locator('.content').textContent();
    const count = await messageCount(page);
    const n = await replies(page);
    await lastReply(page).locator('.act-regenerate').click();
    await waitReplies(page, n + 1);
    assert.equal(await messageCount(page), count, 'the reply was replaced, not added');
    assert.equal(await lastReply(page).locator('.content').textContent(), before);
    // With sampling, another seed gives another reply.
    await setSettings(page, { temperature: 1, seed: 7 });
    await lastReply(page).locator('.act-regenerate').click();
    await waitReplies(page, n + 2);
    assert.equal(await messageCount(page), count);
    assert.notEqual(await lastReply(page).locator('.content').textContent(), before);
    await setSettings(page, { temperature: 0 });
  });

  test('edit-and-resend replaces the message and everything after it', T, async () => {
    const count = await messageCount(page);
    const userMessages = page.locator('.msg.user');
    const lastUser = userMessages.last();
    await lastUser.locator('.act-edit').click();
    await lastUser.locator('.edit-box').fill('Once upon a time there was a big dog');
    const n = await replies(page);
    await lastUser.locator('.edit-save').click();
    await waitReplies(page, n + 1);
    assert.equal(await messageCount(page), count);
    const messages = await page.evaluate(() => window.oxidizeDemo.state.conversation.messages);
    assert.equal(messages.at(-2).content, 'Once upon a time there was a big dog');
    assert.equal(messages.at(-1).role, 'assistant');
    assert.ok(messages.at(-1).content.length > 0);
  });

  test('user text and replies are shown safely: markdown rendered, HTML sanitised', T, async () => {
    await page.evaluate(() => { window.__xss = 0; });
    const payload = '<img src=x onerror="window.__xss=1"> **not bold** <script>window.__xss=2</script>';
    await setSettings(page, { 'max-tokens': 4 });
    await chat(page, payload);
    const user = page.locator('.msg.user .content').last();
    assert.equal(await user.textContent(), payload, 'user text shown as typed, never parsed');
    // Model output that carries markdown and injections, streamed: a grammar makes the model write it.
    const output = '**bold** and <img src=x onerror="window.__xss=11"><script>window.__xss=12</script> [x](javascript:window.__xss=13)';
    await setSettings(page, { 'max-tokens': 400, 'extra-params': JSON.stringify({ grammar: `root ::= ${JSON.stringify(output)}` }) });
    await chat(page, 'Write');
    assert.equal(await page.evaluate(() => window.oxidizeDemo.state.conversation.messages.at(-1).content), output);
    const streamed = lastReply(page).locator('.markdown');
    assert.equal(await streamed.locator('strong').textContent(), 'bold');
    assert.equal(await streamed.locator('img, script').count(), 0);
    assert.equal(await streamed.locator('a').getAttribute('href'), null);
    await setSettings(page, { 'max-tokens': 4, 'extra-params': '' });
    // A reply with markdown and every usual injection (as a model could write it), put in by editing it.
    const reply = [
      '# Title', '', 'Some **bold**, *italic* and `code`.', '', '```js', 'let x = 1;', '```', '',
      '| a | b |', '|---|---|', '| 1 | 2 |', '', '- one', '- two', '',
      '<img src=x onerror="window.__xss=3"> <script>window.__xss=4</script>',
      '<a href="javascript:window.__xss=5">click</a> [md link](javascript:window.__xss=6) [ok](https://example.com/)',
      '<iframe src="javascript:window.__xss=7"></iframe><svg onload="window.__xss=8"></svg>',
      '<div onclick="window.__xss=9" style="position:fixed">styled</div><form action="/x"><button>go</button></form>',
    ].join('\n');
    const last = lastReply(page);
    await last.locator('.act-edit').click();
    await last.locator('.edit-box').fill(reply);
    await last.locator('.edit-save').click();
    const md = lastReply(page).locator('.markdown');
    await md.locator('h1').waitFor();
    assert.equal(await md.locator('h1').textContent(), 'Title');
    assert.equal(await md.locator('strong').textContent(), 'bold');
    assert.equal(await md.locator('em').textContent(), 'italic');
    assert.equal(await md.locator('pre code').textContent(), 'let x = 1;\n');
    await md.locator('.code-wrap .code-copy').click();
    await md.locator('.code-copy', { hasText: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), 'let x = 1;\n');
    assert.equal(await md.locator('.table-wrap table td').count(), 2);
    assert.equal(await md.locator('li').count(), 2);
    const found = await page.evaluate(() => {
      const chat = document.getElementById('chat');
      const all = [...chat.querySelectorAll('*')];
      return {
        dangerous: chat.querySelectorAll('script, img, iframe, svg, form, button:not(.small), [style]').length,
        handlers: all.filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
        jsLinks: [...chat.querySelectorAll('a')].filter((a) => /^\s*javascript:/i.test(a.getAttribute('href') ?? '')).length,
        external: [...chat.querySelectorAll('a[href^="https:"]')].map((a) => [a.target, a.rel]),
      };
    });
    assert.deepEqual(found, { dangerous: 0, handlers: 0, jsLinks: 0, external: [['_blank', 'noopener noreferrer nofollow']] });
    // Clicking what is left runs nothing either.
    await md.getByText('click').click().catch(() => {});
    await md.getByText('styled').click();
    await page.waitForTimeout(200);
    assert.equal(await page.evaluate(() => window.__xss), 0, 'no injected code ran');
    // A reasoning block folds away.
    await lastReply(page).locator('.act-edit').click();
    await lastReply(page).locator('.edit-box').fill('<think>\nLet me see.\n</think>\nThe answer is **42**.');
    await lastReply(page).locator('.edit-save').click();
    await lastReply(page).locator('details.thinking').waitFor();
    assert.equal(await lastReply(page).locator('details.thinking .thinking-text').textContent(), 'Let me see.');
    assert.equal(await lastReply(page).locator('.markdown strong').textContent(), '42');
    await shot(page, 'demo-markdown');
    await setSettings(page, { 'max-tokens': 48 });
  });

  test('copy puts a message on the clipboard', T, async () => {
    await page.locator('.msg.user .act-copy').first().click();
    await page.locator('.msg.user .act-copy', { hasText: 'Copied' }).first().waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), PROMPT);
  });

  test('conversations persist across reloads, listed; new, rename and delete', T, async () => {
    const first = await page.evaluate(() => window.oxidizeDemo.state.conversation);
    assert.equal(first.title, PROMPT);
    await page.reload();
    await page.waitForFunction(() => window.oxidizeDemo?.ready === true, null, { timeout: 60_000 });
    // The last model comes back from storage and the last conversation opens.
    assert.match(await page.textContent('#model-info'), /from cache/);
    assert.equal(await messageCount(page), first.messages.length);
    assert.equal(await page.locator('#conversation-list .conv').count(), 1);
    assert.equal(await page.textContent('#conversation-list .conv .conv-title'), PROMPT);
    assert.deepEqual(await page.evaluate(() => window.oxidizeDemo.state.conversation.messages.map((m) => m.content)),
      first.messages.map((m) => m.content));

    await page.click('#new-chat');
    assert.equal(await page.locator('#chat .msg').count(), 0);
    await chat(page, 'The cat sat');
    assert.equal(await page.locator('#conversation-list .conv').count(), 2);
    assert.equal(await page.textContent('#conversation-list .conv.active .conv-title'), 'The cat sat');

    // Rename the first conversation; it keeps the name after a reload.
    const firstItem = page.locator(`#conversation-list .conv[data-id="${first.id}"]`);
    await firstItem.locator('.conv-rename').click();
    await page.locator('#conversation-list .rename-box').fill('Stories');
    await page.locator('#conversation-list .rename-box').press('Enter');
    await page.locator(`#conversation-list .conv[data-id="${first.id}"] .conv-title`, { hasText: 'Stories' }).waitFor();
    await page.reload();
    await page.waitForFunction(() => window.oxidizeDemo?.ready === true, null, { timeout: 60_000 });
    assert.equal(await page.textContent(`#conversation-list .conv[data-id="${first.id}"] .conv-title`), 'Stories');
    // Open it again: its messages come back.
    await page.click(`#conversation-list .conv[data-id="${first.id}"] .conv-open`);
    assert.equal(await messageCount(page), first.messages.length);
    await shot(page, 'demo-conversations');
    // Delete the other one.
    const other = page.locator('#conversation-list .conv:not([data-id="' + first.id + '"])');
    await other.locator('.conv-delete').click();
    await page.waitForFunction(() => document.querySelectorAll('#conversation-list .conv').length === 1);
    await page.reload();
    await page.waitForFunction(() => window.oxidizeDemo?.ready === true, null, { timeout: 60_000 });
    assert.equal(await page.locator('#conversation-list .conv').count(), 1);
  });

  test('load settings reach the engine: context size and KV cache type, then threads', T, async () => {
    await setSettings(page, { 'n-ctx': 256, 'kv-type': 'bf16' });
    await openDrawer(page, 'settings');
    assert.equal(await page.isVisible('#apply-box'), true);
    assert.match(await page.textContent('#apply-text'), /Context size \(tokens\), KV cache type/);
    await page.click('#apply-settings');
    await page.waitForFunction(() => window.oxidizeDemo.engine.model?.n_ctx === 256, null, { timeout: 60_000 });
    const info = await page.evaluate(() => window.oxidizeDemo.engine.model);
    assert.equal(info.cache_type_k, 'bf16');
    assert.equal(info.cache_type_v, 'bf16');
    assert.equal(await page.isVisible('#apply-box'), false);
    await chat(page, PROMPT);
    assert.match(await page.textContent('#context-text'), /\/ 256 tokens/);

    const autoThreads = await page.evaluate(() => window.oxidizeDemo.engine.runtime.threads);
    await setSettings(page, { threads: 1 });
    await openDrawer(page, 'settings');
    assert.match(await page.textContent('#apply-text'), /Threads: .* restarted engine/);
    await page.click('#apply-settings');
    await page.waitForFunction(() => window.oxidizeDemo.engine?.runtime.threads === 1 && window.oxidizeDemo.engine.model !== null,
      null, { timeout: 60_000 });
    assert.match(await page.textContent('#runtime'), /multi-thread build .*, 1 thread /);
    assert.equal(await page.evaluate(() => window.oxidizeDemo.engine.model.n_ctx), 256);
    await page.click('#reset-settings');
    await page.click('#apply-settings');
    await page.waitForFunction((n) => window.oxidizeDemo.engine?.runtime.threads === n && window.oxidizeDemo.engine.model?.n_ctx > 256,
      autoThreads, { timeout: 60_000 });
    await setSettings(page, { temperature: 0, 'max-tokens': 48 });
  });

  test('a local file loads through the file picker', T, async () => {
    await openDrawer(page, 'models');
    await page.setInputFiles('#model-file', modelFile);
    await page.waitForFunction(() => window.oxidizeDemo.engine.model?.source === 'blob', null, { timeout: 60_000 });
    assert.match(await page.textContent('#model-info'), /from blob/);
    await chat(page, PROMPT);
    assert.ok((await lastReply(page).locator('.content').textContent()).length > 10);
  });

  test('a bad model shows the engine\'s error and keeps the model that works', T, async () => {
    await loadUrl(page, '/__test/head/4096/stories260K.gguf');
    await page.waitForSelector('#error:not([hidden])');
    assert.match(await page.textContent('#error-text'), /^invalid_file: /);
    assert.notEqual(await page.evaluate(() => window.oxidizeDemo.engine.model), null);
    assert.match(await page.textContent('#progress-text'), /failed/);
    await page.click('#error-close');
    assert.equal(await page.isVisible('#error'), false);
    await closeDrawers(page);
    assert.equal(await page.isDisabled('#send'), false);
  });

  test('storage manager lists the stored models with sizes, deletes one, clears all', T, async () => {
    // A second stored file: the server's own model, from its card.
    await openDrawer(page, 'models');
    await page.click(`#local-list .model-card[data-url="${base}${MODEL}"] .load-model`);
    await page.waitForFunction(() => window.oxidizeDemo.state.loadController === null && window.oxidizeDemo.engine.model?.source === 'network');
    await openDrawer(page, 'storage');
    const rows = page.locator('#stored-list .stored-model');
    await page.waitForFunction(() => document.querySelectorAll('#stored-list .stored-model').length >= 2);
    const listed = await rows.evaluateAll((els) => els.map((e) => ({ url: e.dataset.url, text: e.textContent })));
    const size = fs.statSync(modelFile).size;
    const sizeText = `${(size / 2 ** 20).toFixed(2)} MiB`;
    for (const url of [`${base}${MODEL}`, `${base}${SLOW_MODEL}`]) {
      const row = listed.find((r) => r.url === url);
      assert.ok(row, `${url} listed in ${JSON.stringify(listed)}`);
      assert.ok(row.text.includes(sizeText), `${row.text} shows ${sizeText}`);
    }
    assert.match(await page.textContent('#storage-summary'), /2 files, /);
    assert.match(await page.textContent('#persistence'), /^(Persistent|Best effort)/);
    assert.match(await page.textContent('#quota'), /This site uses .* of .* available/);
    await shot(page, 'demo-storage');

    await page.locator(`#stored-list .stored-model[data-url="${base}${SLOW_MODEL}"] .delete-stored`).click();
    await page.waitForFunction(() => document.querySelectorAll('#stored-list .stored-model').length === 1);
    const stored = await page.evaluate(async () => (await window.oxidizeDemo.engine.cache.list()).map((s) => s.url));
    assert.deepEqual(stored, [`${base}${MODEL}`]);
    // The model picker's badge follows.
    await openDrawer(page, 'models');
    assert.equal(await page.locator(`#custom-list .model-card[data-url="${base}${SLOW_MODEL}"] .badge.cached`).count(), 0);
    assert.equal(await page.locator(`#local-list .model-card[data-url="${base}${MODEL}"] .badge.cached`).count(), 1);

    await openDrawer(page, 'storage');
    await page.click('#clear-storage');
    await page.waitForFunction(() => document.querySelectorAll('#stored-list .stored-model').length === 0);
    assert.deepEqual(await page.evaluate(async () => window.oxidizeDemo.engine.cache.list()), []);
    assert.match(await page.textContent('#storage-summary'), /No model is stored/);
    assert.notEqual(await page.evaluate(() => window.oxidizeDemo.engine.model), null, 'the loaded model stays loaded');
    await page.click('#storage-drawer .close-drawer');
  });
});

describe('chat app on a phone-sized screen (390x844)', () => {
  test('no horizontal overflow in the chat, the drawers and the conversation list', T, async () => {
    const page = await openDemo(servers.isolated.url, `?model=${MODEL}`);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForFunction(() => window.oxidizeDemo.engine.model !== null);
    await page.click('#toggle-sidebar');
    await page.click('#new-chat');
    const long = `A very long word: ${'x'.repeat(300)} and a URL https://example.com/${'a/'.repeat(80)}`;
    await chat(page, long);
    const last = lastReply(page);
    await last.locator('.act-edit').click();
    await last.locator('.edit-box').fill(`| ${Array.from({ length: 12 }, (_, i) => `column ${i}`).join(' | ')} |\n|${'---|'.repeat(12)}\n` +
      `| ${Array.from({ length: 12 }, (_, i) => `value ${i}`).join(' | ')} |\n\n\`\`\`\n${'code '.repeat(60)}\n\`\`\``);
    await last.locator('.edit-save').click();
    await lastReply(page).locator('table').waitFor();
    const overflow = () => page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth, body: document.body.scrollWidth, width: window.innerWidth,
    }));
    const check = async (what) => {
      const o = await overflow();
      assert.ok(o.scroll <= o.width && o.body <= o.width, `${what}: ${JSON.stringify(o)}`);
    };
    await check('chat');
    assert.equal(await page.isVisible('#toggle-sidebar'), true, 'the conversation list is behind a button');
    await shot(page, 'demo-phone-chat');
    for (const drawer of ['models', 'settings', 'storage']) {
      await page.click(`#toggle-${drawer}`);
      await page.locator(`#${drawer}-drawer`).waitFor();
      const box = await page.locator(`#${drawer}-drawer`).boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `${drawer} drawer within the screen: ${JSON.stringify(box)}`);
      await check(`${drawer} drawer`);
      await shot(page, `demo-phone-${drawer}`);
      await page.click(`#${drawer}-drawer .close-drawer`);
    }
    await page.click('#toggle-sidebar');
    await page.waitForTimeout(300);  // the slide-in
    const side = await page.locator('#sidebar').boundingBox();
    assert.ok(side.x >= 0 && side.x + side.width <= 390, JSON.stringify(side));
    await check('conversation list');
    await shot(page, 'demo-phone-conversations');
    // The composer stays usable.
    await page.click('#close-sidebar');
    const composer = await page.locator('#composer').boundingBox();
    assert.ok(composer.y + composer.height <= 844 && composer.width <= 390, JSON.stringify(composer));
    await page.close();
  });
});

describe('chat app, not cross-origin isolated (single-thread build)', () => {
  test('loads, chats and says which build runs', T, async () => {
    const page = await openDemo(servers.plain.url, `?model=${MODEL}`);
    await page.waitForFunction(() => window.oxidizeDemo.engine.model !== null);
    assert.match(await page.textContent('#runtime'), /single-thread build .*, 1 thread/);
    await setSettings(page, { temperature: 0, 'max-tokens': 16 });
    await chat(page, PROMPT);
    assert.match(await lastReply(page).locator('.meta').textContent(), /^\d+ tokens/);
    await page.close();
  });
});
