// Browser tests of how the engine starts when its threaded build cannot (issue #25, item 2): it
// falls back to one thread and says why (RuntimeInfo.fallback, a console warning), and when the
// single-thread build cannot start either, createEngine rejects with both causes, naming the file
// and its HTTP status. Each test serves web/ with the headers it chooses per file. Run with
// web/scripts/test.sh.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { sharedDir, startServer } from '../scripts/serve.mjs';
import { launchBrowser, openPage } from './page_helpers.mjs';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(webDir, '..');
const artifacts = path.join(process.env.OXIDIZE_WEB_ARTIFACTS || path.join(repoRoot, 'build', 'web-artifacts'), 'fallback');
const N_GREEDY = 24;
const T = { timeout: 120_000 };
const PLAIN = { 'cache-control': 'no-cache' };

let browser;
let greedyReference;  // stories260K's greedy tokens from BOS: the float32 numpy reference in ../shared
const consoleLines = [];

before(async () => {
  assert.ok(fs.existsSync(path.join(webDir, 'dist', 'index.js')), 'web/dist is missing: run scripts/build-web');
  fs.mkdirSync(artifacts, { recursive: true });
  const text = fs.readFileSync(path.join(sharedDir(), 'models', 'stories260K.greedy.txt'), 'utf8');
  greedyReference = text.split('\n').find((l) => l !== '' && !l.startsWith('#')).trim().split(/\s+/).slice(0, N_GREEDY).map(Number);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  fs.writeFileSync(path.join(artifacts, 'browser-console.log'), consoleLines.join('\n') + '\n');
});

/**
 * Serves web/ (the harness page, dist/, /models/): `rule(urlPath)` says how each file is sent:
 * 'isolated' (COOP/COEP/CORP), 'plain' (none of them) or 'missing' (404). In the page,
 * createEngine(options), then (when it resolved) stories260K greedy from BOS and one chat turn.
 */
async function startWith(rule, options = {}) {
  const server = await startServer({
    port: 0, isolated: true,
    policy: (urlPath, isolatedHeaders) => {
      const how = rule(urlPath);
      if (how === 'missing') return null;
      return how === 'isolated' ? isolatedHeaders : PLAIN;
    },
  });
  const page = await openPage(browser, consoleLines, server.url);
  try {
    return await page.evaluate(async ([o, n]) => {
      const logs = [];
      let engine;
      try {
        engine = await window.oxidize.createEngine({ ...o, onLog: (level, message) => logs.push({ level, message }) });
      } catch (e) {
        return { error: { name: e.name, code: e.code, message: e.message, isEngineError: e instanceof window.oxidize.EngineError }, logs };
      }
      try {
        await engine.load('/models/stories260K.gguf');
        const stream = await engine.completions.create({ prompt: [1], max_tokens: n, temperature: 0, stream: true });
        for await (const _ of stream);
        const greedy = await stream.result;
        const chat = await engine.chat.completions.create({
          messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 8, temperature: 0,
        });
        return {
          runtime: engine.runtime, logs, coi: self.crossOriginIsolated, tokens: greedy.tokens, threads: greedy.threads,
          chat: { content: chat.choices[0].message.content, finish: chat.choices[0].finish_reason },
        };
      } finally {
        engine.terminate();
      }
    }, [options, N_GREEDY]);
  } finally {
    await page.close();
    await server.close();
  }
}

// The engine ran one thread and generated the reference's tokens; the fallback was warned about.
function assertSingleThreadChat(r, fallbackPattern) {
  assert.equal(r.error, undefined, JSON.stringify(r.error));
  assert.equal(r.runtime.build, 'single-thread');
  assert.equal(r.runtime.threads, 1);
  assert.equal(r.threads, 1);
  assert.match(r.runtime.fallback ?? '', fallbackPattern);
  assert.equal(r.runtime.reason, r.runtime.fallback);
  assert.ok(r.logs.some((l) => l.level === 'warn' && l.message.includes('falling back to the single-thread build') &&
    l.message.includes(r.runtime.fallback)), `a warning names the fallback: ${JSON.stringify(r.logs)}`);
  assert.deepEqual(r.tokens, greedyReference, 'greedy tokens from BOS equal the numpy reference');
  assert.ok(r.chat.content.length > 0, 'the chat turn has content');
  assert.equal(r.chat.finish, 'length');
}

describe('threads unavailable: one thread, and why', () => {
  test('no COOP/COEP anywhere: not cross-origin isolated, falls back to one thread and chats', T, async () => {
    const r = await startWith(() => 'plain');
    assert.equal(r.coi, false);
    assertSingleThreadChat(r, /^the page is not cross-origin isolated, so SharedArrayBuffer and threads are unavailable; serve it .*'Cross-Origin-Embedder-Policy: require-corp'/);
    assert.equal(r.runtime.crossOriginIsolated, false);
  });

  test('forceSingleThread is no fallback: fallback null, no warning', T, async () => {
    const r = await startWith(() => 'isolated', { forceSingleThread: true });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.runtime.build, 'single-thread');
    assert.equal(r.runtime.fallback, null);
    assert.match(r.runtime.reason, /forceSingleThread/);
    assert.ok(!r.logs.some((l) => l.level === 'warn'), JSON.stringify(r.logs));
    assert.deepEqual(r.tokens, greedyReference);
  });

  test('isolated, but the multi-thread module is missing: falls back naming the URL and the HTTP status', T, async () => {
    const r = await startWith((p) => (/\/oxidize-mt(\.relaxed)?\.wasm$/.test(p) ? 'missing' : 'isolated'));
    assert.equal(r.coi, true);
    assertSingleThreadChat(r, /^the multi-thread build failed to start \(could not instantiate http:\/\/127\.0\.0\.1:\d+\/dist\/wasm\/oxidize-mt\.relaxed\.wasm: http:\S+\/oxidize-mt\.relaxed\.wasm answered HTTP 404 Not Found\)$/);
    assert.equal(r.runtime.crossOriginIsolated, true);
    assert.equal(r.runtime.kernels, 'simd128+relaxed');
  });

  test('with the multi-thread build working, the same page runs threads (no fallback)', T, async () => {
    const r = await startWith(() => 'isolated');
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.runtime.build, 'multi-thread');
    assert.equal(r.runtime.fallback, null);
    assert.ok(r.threads > 1, `threads = ${r.threads}`);
    assert.deepEqual(r.tokens, greedyReference);
  });
});

describe('COOP/COEP on some responses only', () => {
  test('on the page and the engine worker only: threads run (wasm, glue and thread workers are same-origin)', T, async () => {
    const r = await startWith((p) => (p === '/test/harness.html' || p === '/dist/worker.js' ? 'isolated' : 'plain'));
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.runtime.build, 'multi-thread', r.runtime.reason);
    assert.equal(r.runtime.fallback, null);
    assert.deepEqual(r.tokens, greedyReference);
  });

  test('on the page only: createEngine rejects naming the worker script and the missing header', T, async () => {
    for (const options of [{}, { forceSingleThread: true }]) {
      const r = await startWith((p) => (p === '/test/harness.html' ? 'isolated' : 'plain'), options);
      assert.equal(r.error?.isEngineError, true, JSON.stringify(r));
      assert.equal(r.error.code, 'io');
      assert.match(r.error.message, /^the engine worker could not start: http:\/\/127\.0\.0\.1:\d+\/dist\/worker\.js is served without a Cross-Origin-Embedder-Policy header: .*'Cross-Origin-Embedder-Policy: require-corp' too/);
    }
  });
});

describe('no build can start: rejects with the real causes', () => {
  test('wasmBaseUrl where nothing is: both builds\' failures, each naming its URL and HTTP status', T, async () => {
    const r = await startWith(() => 'isolated', { wasmBaseUrl: '/nowhere/' });
    assert.equal(r.error?.isEngineError, true, JSON.stringify(r));
    assert.equal(r.error.code, 'io');
    assert.match(r.error.message, /^the single-thread build failed to start: could not import http:\/\/127\.0\.0\.1:\d+\/nowhere\/oxidize-st\.js: \S+\/nowhere\/oxidize-st\.js answered HTTP 404 Not Found; before that, the multi-thread build failed to start \(http:\S+\/nowhere\/oxidize-mt\.worker\.js answered HTTP 404 Not Found\)$/);
  });

  test('every .wasm missing (not isolated): rejects naming the module\'s URL and HTTP status', T, async () => {
    const r = await startWith((p) => (p.endsWith('.wasm') ? 'missing' : 'plain'));
    assert.equal(r.error?.isEngineError, true, JSON.stringify(r));
    assert.equal(r.error.code, 'io');
    assert.match(r.error.message, /^the single-thread build failed to start: could not instantiate http:\S+\/dist\/wasm\/oxidize-st\.relaxed\.wasm: \S+ answered HTTP 404 Not Found; before that, the page is not cross-origin isolated/);
  });

  test('every .wasm missing (isolated): both builds\' modules named with their status', T, async () => {
    const r = await startWith((p) => (p.endsWith('.wasm') ? 'missing' : 'isolated'));
    assert.equal(r.error?.code, 'io', JSON.stringify(r));
    assert.match(r.error.message, /^the single-thread build failed to start: could not instantiate \S+\/oxidize-st\.relaxed\.wasm: .*HTTP 404 Not Found; before that, the multi-thread build failed to start \(could not instantiate \S+\/oxidize-mt\.relaxed\.wasm: .*HTTP 404 Not Found\)$/);
  });
});
