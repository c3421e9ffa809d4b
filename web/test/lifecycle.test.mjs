// Browser tests of the engine's lifecycle and API contract (issue #25, item 5): a failed load keeps
// the previous model, abort stops at once and nothing follows it, streamed text is well-formed
// UTF-16, chat messages are checked, nothing throws synchronously, nCtx up to the trained context
// with a memory estimate, camelCase option names. Run with web/scripts/test.sh.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { sharedDir } from '../scripts/serve.mjs';
import { inEngine, startBrowserAndServers, openPage, rejection } from './page_helpers.mjs';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(webDir, '..');
const artifacts = path.join(process.env.OXIDIZE_WEB_ARTIFACTS || path.join(repoRoot, 'build', 'web-artifacts'), 'lifecycle');
const cli = process.env.OXIDIZE_CLI || path.join(repoRoot, 'build', 'native', 'bin', 'oxidize');
const zoo = path.join(sharedDir(), 'zoo', 'models');
const PROMPT = 'Once upon a time';
const STORIES = '/models/stories260K.gguf';
const GEMMA3 = '/__test/generated/gemma3.gguf';  // the zoo's gemma3: its greedy text holds invalid UTF-8
const LONG_CTX = '/__test/generated/llama-long-ctx.gguf';  // the zoo's llama, trained context set to 2^23
const LONG_CTX_TRAIN = 1 << 23;  // 2 layers x 2 KV heads x 32 dims x (K + V) x f16: 4 GiB of KV cache at 2^23
const KV_BYTES_PER_TOKEN = 2 * 2 * 2 * 32 * 2;  // the same sum: 512 bytes
const FITS_CTX = '/__test/generated/llama-131k.gguf';  // the zoo's llama, trained context set to 2^17 (64 MiB of KV)
const FITS_CTX_TRAIN = 1 << 17;
const T = { timeout: 120_000 };

let browser;
let servers;
let closeAll;
const consoleLines = [];

// A copy of the zoo's llama.gguf whose llama.context_length (a uint32) says `n`.
function withTrainedContext(file, n, out) {
  const bytes = fs.readFileSync(file);
  const key = Buffer.from('llama.context_length');
  const at = bytes.indexOf(key);
  assert.ok(at > 8, `${file} has no llama.context_length`);
  assert.equal(bytes.readBigUInt64LE(at - 8), BigInt(key.length), 'a GGUF key: its length first');
  assert.equal(bytes.readUInt32LE(at + key.length), 4, 'llama.context_length is a uint32');
  bytes.writeUInt32LE(n, at + key.length + 4);
  fs.writeFileSync(out, bytes);
}

// What the native CLI writes for a greedy run (stdout, less its final newline), as bytes.
function nativeGreedyBytes(model, prompt, n, extra = []) {
  const out = execFileSync(cli, ['run', '-m', model, '-p', prompt, '-n', String(n), '--temp', '0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  return out.subarray(0, out.length - 1);
}

// The native CLI's rendering of `messages` with the model's template.
function nativeTemplate(model, messages) {
  const file = path.join(artifacts, 'messages.json');
  fs.writeFileSync(file, JSON.stringify(messages));
  return execFileSync(cli, ['template', '-m', model, '--messages', file, '--add-generation-prompt'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

before(async () => {
  assert.ok(fs.existsSync(path.join(webDir, 'dist', 'index.js')), 'web/dist is missing: run scripts/build-web');
  assert.ok(fs.existsSync(cli), `native CLI missing at ${cli}: build the "native" preset`);
  fs.mkdirSync(artifacts, { recursive: true });
  fs.copyFileSync(path.join(zoo, 'gemma3.gguf'), path.join(artifacts, 'gemma3.gguf'));
  withTrainedContext(path.join(zoo, 'llama.gguf'), LONG_CTX_TRAIN, path.join(artifacts, 'llama-long-ctx.gguf'));
  withTrainedContext(path.join(zoo, 'llama.gguf'), FITS_CTX_TRAIN, path.join(artifacts, 'llama-131k.gguf'));
  ({ browser, servers, close: closeAll } = await startBrowserAndServers(artifacts, consoleLines));
});

after(async () => closeAll?.());

for (const mode of ['isolated', 'plain']) {
  describe(`${mode === 'isolated' ? 'cross-origin isolated (threads)' : 'not isolated (single-thread)'}`, () => {
    let page;
    before(async () => {
      page = await openPage(browser, consoleLines, servers[mode].url);
    });
    after(async () => page?.close());

    test('a failed load leaves the previous model loaded and usable', T, async () => {
      const r = await inEngine(page, async (engine, a) => {
        const greedy = async () => (await engine.completions.create({ prompt: a.prompt, max_tokens: 24, temperature: 0 })).choices[0].text;
        const out = { failures: [] };
        await engine.load(a.stories);
        out.before = await greedy();
        const attempts = [
          ['a URL typo', () => engine.load('/models/stories260K-typo.gguf')],
          ['a truncated file', async () => {
            const head = (await (await fetch(a.stories)).arrayBuffer()).slice(0, 4096);
            return engine.load(head, { name: 'truncated.gguf' });
          }],
          ['an unknown chat template', () => engine.load(a.stories, { chatTemplate: 'no-such-template' })],
          ['an aborted signal', () => engine.load(a.stories, { signal: AbortSignal.abort() })],
        ];
        for (const [what, attempt] of attempts) {
          try {
            await attempt();
            out.failures.push({ what, code: null });
          } catch (e) {
            out.failures.push({ what, code: e.code, model: engine.model?.name ?? null, text: await greedy() });
          }
        }
        return out;
      }, { prompt: PROMPT, stories: STORIES });
      assert.ok(r.before.length > 10, r.before);
      assert.deepEqual(r.failures.map((f) => [f.what, f.code]), [
        ['a URL typo', 'io'], ['a truncated file', 'invalid_file'], ['an unknown chat template', 'invalid_argument'],
        ['an aborted signal', 'aborted'],
      ]);
      for (const f of r.failures) {
        assert.equal(f.model, 'stories260K.gguf', `${f.what}: engine.model`);
        assert.equal(f.text, r.before, `${f.what}: the previous model still generates the same text`);
      }
    });

    test('one load after another: each replaces the last and generates (the threaded build hung on the third)', T, async () => {
      const r = await inEngine(page, async (engine, a) => {
        const out = [];
        for (let i = 0; i < 4; ++i) {
          const info = await engine.load(a.stories);
          const c = await engine.completions.create({ prompt: [1], max_tokens: 8, temperature: 0 });
          out.push({ name: info.name, tokens: c.usage.completion_tokens });
        }
        return out;
      }, { stories: STORIES });
      assert.deepEqual(r, Array(4).fill({ name: 'stories260K.gguf', tokens: 8 }));
    });

    test('abort: no chunk follows it, generation stops at once; an aborted signal rejects at once', T, async () => {
      const r = await inEngine(page, async (engine, a) => {
        await engine.load(a.stories);
        const out = {};
        // Each token has its chunk (logprobs), so chunks count tokens.
        const stream = await engine.completions.create({ prompt: a.prompt, max_tokens: 2000, ignore_eos: true, logprobs: 1, stream: true });
        let seen = 0, atAbort = -1;
        out.afterAbort = [];
        for await (const chunk of stream) {
          const c = chunk.choices[0];
          if (atAbort >= 0) out.afterAbort.push({ text: c.text, finish: c.finish_reason, logprobs: c.logprobs !== null });
          else seen += 1;
          if (seen === 3 && atAbort < 0) {
            atAbort = seen;
            stream.abort();
          }
        }
        const result = await stream.result;
        out.atAbort = atAbort;
        out.generated = result.n_generated;
        out.finish = result.finish_reason;
        // Aborted (through an AbortController, with chat) as soon as the stream exists: the abort
        // reaches the worker while it evaluates the prompt, so at most the token in progress is
        // generated. (How far a worker gets ahead of a reader that aborts mid-stream depends on the
        // reader's speed, so that case is only checked for what follows the abort.)
        const controller = new AbortController();
        const chat = await engine.chat.completions.create({
          messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 2000, ignore_eos: true, stream: true,
          signal: controller.signal,
        });
        controller.abort();
        const chatChunks = [];
        for await (const chunk of chat) chatChunks.push({ content: chunk.choices[0].delta.content ?? null, finish: chunk.choices[0].finish_reason });
        out.chat = { chunks: chatChunks, generated: (await chat.result).n_generated };
        // An already-aborted signal: rejected before anything runs, streaming or not.
        out.pre = [];
        for (const stream of [false, true]) {
          const t0 = performance.now();
          try {
            await engine.completions.create({ prompt: a.prompt, max_tokens: 4, stream, signal: AbortSignal.abort() });
            out.pre.push(null);
          } catch (e) {
            out.pre.push({ code: e.code, ms: performance.now() - t0 });
          }
        }
        return out;
      }, { prompt: PROMPT, stories: STORIES });
      assert.equal(r.atAbort, 3);
      assert.deepEqual(r.afterAbort.map((c) => [c.text, c.finish]), [['', 'abort']], 'only the finish chunk follows the abort');
      assert.equal(r.finish, 'abort');
      assert.ok(r.generated < 2000, `${r.generated} tokens generated, ${r.atAbort} seen at the abort`);
      assert.deepEqual(r.chat.chunks, [{ content: null, finish: 'abort' }], 'no content after the abort');
      assert.ok(r.chat.generated <= 1, `an abort while the prompt is evaluated: ${r.chat.generated} tokens generated`);
      for (const p of r.pre) {
        assert.equal(p?.code, 'aborted');
        assert.ok(p.ms < 1000, `rejected after ${p.ms} ms`);
      }
    });

    test('streamed text is well-formed UTF-16: invalid UTF-8 becomes U+FFFD, as TextDecoder decodes the native bytes', T, async () => {
      const n = 64;
      const want = new TextDecoder().decode(nativeGreedyBytes(path.join(zoo, 'gemma3.gguf'), PROMPT, n));
      assert.ok(want.includes('\uFFFD'), 'the reference holds invalid UTF-8 (else this test shows nothing)');
      const r = await inEngine(page, async (engine, a) => {
        await engine.load(a.model);
        const stream = await engine.completions.create({ prompt: a.prompt, max_tokens: a.n, temperature: 0, stream: true });
        const chunks = [];
        for await (const chunk of stream) chunks.push(chunk.choices[0].text);
        const whole = await engine.completions.create({ prompt: a.prompt, max_tokens: a.n, temperature: 0 });
        const encodes = (s) => {
          try { encodeURIComponent(s); return true; } catch { return false; }
        };
        return {
          chunks, text: whole.choices[0].text, streamed: (await stream.result).text,
          allEncode: chunks.every(encodes) && encodes(whole.choices[0].text),
        };
      }, { prompt: PROMPT, n, model: GEMMA3 });
      const lone = r.chunks.filter((c) => LONE_SURROGATE.test(c));
      assert.deepEqual(lone, [], 'no chunk holds a lone surrogate');
      assert.ok(r.allEncode, 'encodeURIComponent accepts every chunk and the whole text');
      assert.equal(r.chunks.join(''), want);
      assert.equal(r.text, want);
      assert.equal(r.streamed, want);
    });
  });
}

describe('API contract (cross-origin isolated)', () => {
  let page;
  before(async () => {
    page = await openPage(browser, consoleLines, servers.isolated.url);
    await inEngine(page, (engine, a) => engine.load(a), STORIES);
  });
  after(async () => page?.close());

  test('content parts are accepted; system messages in any position rendered as the template does', T, async () => {
    const orders = [
      [['system', 'Be brief.'], ['assistant', 'Hello there.'], ['user', 'Tell me a story.']],
      [['user', 'Hi.'], ['system', 'Be brief.'], ['user', 'Tell me a story.']],
    ].map((o) => o.map(([role, content]) => ({ role, content })));
    for (const [url, file] of [[STORIES, path.join(sharedDir(), 'models', 'stories260K.gguf')], [GEMMA3, path.join(zoo, 'gemma3.gguf')]]) {
      const r = await inEngine(page, async (engine, a) => {
        await engine.load(a.url);
        const out = { rendered: [] };
        for (const messages of a.orders) out.rendered.push(await engine.applyChatTemplate(messages));
        const parts = a.orders[0].map((m) => ({ ...m, content: [{ type: 'text', text: m.content }] }));
        out.parts = await engine.applyChatTemplate(parts);
        const c = await engine.chat.completions.create({ messages: parts, max_tokens: 4, temperature: 0 });
        const s = await engine.chat.completions.create({ messages: a.orders[0], max_tokens: 4, temperature: 0 });
        out.partsUsage = c.usage.prompt_tokens;
        out.stringUsage = s.usage.prompt_tokens;
        out.partsText = c.choices[0].message.content;
        out.stringText = s.choices[0].message.content;
        return out;
      }, { url, orders });
      orders.forEach((messages, i) => {
        assert.equal(r.rendered[i], nativeTemplate(file, messages), `${url}: ${messages.map((m) => m.role).join(', ')}`);
        assert.ok(r.rendered[i].includes('Be brief.'), `${url}: the system message is rendered`);
      });
      assert.equal(r.parts, r.rendered[0], `${url}: text parts render as the string`);
      assert.equal(r.partsUsage, r.stringUsage);
      assert.equal(r.partsText, r.stringText);
    }
    await inEngine(page, (engine, a) => engine.load(a), STORIES);
  });

  test('an unknown role, no messages or an empty message: errors naming the problem', T, async () => {
    const cases = [
      [[{ role: 'bot', content: 'hi' }], 'invalid_argument', /messages\[0\]\.role "bot" is not a known role/],
      [[], 'invalid_argument', /messages is empty/],
      [[{ role: 'user', content: 'a' }, { role: 'user', content: '' }], 'invalid_argument', /messages\[1\] \(role 'user'\) is empty/],
      [[{ role: 'user' }], 'invalid_argument', /messages\[0\] \(role 'user'\) is empty/],
      [[{ role: 'user', content: [] }], 'invalid_argument', /messages\[0\] \(role 'user'\) is empty: content has no parts/],
      [[{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }], 'unsupported', /messages\[0\]\.content\[0\] is not a text part/],
      ['hello', 'invalid_argument', /messages must be an array/],
    ];
    for (const [messages, code, pattern] of cases) {
      for (const call of ['chat', 'template']) {
        const e = await rejection(page, (engine, a) => a.call === 'chat'
          ? engine.chat.completions.create({ messages: a.messages, max_tokens: 2 })
          : engine.applyChatTemplate(a.messages), { messages, call });
        assert.equal(e?.code, code, `${call} ${JSON.stringify(messages)}: ${e?.message}`);
        assert.match(e.message, pattern);
        assert.ok(e.isEngineError);
      }
    }
  });

  test('swaFull: sliding-window layers keep only their window by default (fewer KV bytes), the same text as the whole context', T, async () => {
    // The zoo's gemma3: a window of 8 on layer 0 of 2. Batches of 4 keep 8 + 4 + 64 rows there, so
    // 100 tokens move the window rows several times; the native CLI with --swa-full is the reference.
    const n = 100;
    const want = new TextDecoder().decode(nativeGreedyBytes(path.join(zoo, 'gemma3.gguf'), PROMPT, n, ['--swa-full', '-c', '128']));
    const r = await inEngine(page, async (engine, a) => {
      const out = {};
      for (const swaFull of [false, true]) {
        const info = await engine.load(a.model, { nCtx: 128, nBatch: 4, swaFull });
        const c = await engine.completions.create({ prompt: a.prompt, max_tokens: a.n, temperature: 0 });
        out[swaFull ? 'full' : 'window'] = { kv: info.kv_bytes, text: c.choices[0].text, n: c.usage.completion_tokens };
      }
      await engine.load(a.stories);
      return out;
    }, { prompt: PROMPT, n, model: GEMMA3, stories: STORIES });
    assert.ok(r.window.kv < r.full.kv, `window-only ${r.window.kv} bytes, --swa-full ${r.full.kv}`);
    assert.ok(r.window.n > 80, `${r.window.n} tokens: too few to move the window rows`);
    assert.equal(r.window.text, want);
    assert.equal(r.full.text, want);
  });

  test('create() and every method reject instead of throwing synchronously', T, async () => {
    const r = await inEngine(page, async (engine) => {
      const calls = {
        'chat.completions.create(null)': () => engine.chat.completions.create(null),
        'chat.completions.create({messages: "x"})': () => engine.chat.completions.create({ messages: 'x', stream: true }),
        'completions.create({n: 0, stream: true})': () => engine.completions.create({ prompt: 'x', n: 0, stream: true }),
        'completions.create({prompt: 5})': () => engine.completions.create({ prompt: 5 }),
        'detokenize(null)': () => engine.detokenize(null),
        'evaluate(null)': () => engine.evaluate(null),
        'tokenize("x", {add_special})': () => engine.tokenize('x', { add_special: false }),
        'embeddings.create(null)': () => engine.embeddings.create(null),
        'load(42)': () => engine.load(42),
        'bench({reps: 0})': () => engine.bench({ reps: 0 }),
      };
      const out = {};
      for (const [name, call] of Object.entries(calls)) {
        let p;
        try {
          p = call();
        } catch (e) {
          out[name] = `threw ${e.message}`;
          continue;
        }
        out[name] = await p.then(() => 'resolved', (e) => `rejected ${e.code}`);
      }
      return out;
    });
    for (const [name, outcome] of Object.entries(r)) assert.match(outcome, /^rejected (invalid_argument|unsupported)$/, `${name}: ${outcome}`);
  });

  test('nCtx: by default the trained context where it fits, else the largest power of two that does; refused with the numbers', T, async () => {
    const r = await inEngine(page, async (engine, a) => {
      const attempt = async (url, options) => {
        try {
          const info = await engine.load(url, options);
          return { n_ctx: info.n_ctx, kv_bytes: info.kv_bytes, source: info.n_ctx_source, reason: info.n_ctx_reason };
        } catch (e) {
          return { code: e.code, message: e.message, model: engine.model?.n_ctx ?? null };
        }
      };
      // A prompt past position 4096 (the old cap), without context shifts: the context holds it.
      const longPrompt = async () => {
        const c = await engine.completions.create({
          prompt: Array(5000).fill(a.token), max_tokens: 4, temperature: 0, context_shift: false,
        });
        return { finish: c.choices[0].finish_reason, usage: c.usage };
      };
      const out = {};
      out.fits = await attempt(a.fits, {});
      out.fitsRun = await longPrompt();
      out.memory = await attempt(a.long, {});
      const m = await engine.completions.create({ prompt: 'Hello', max_tokens: 4, temperature: 0 });
      out.memoryRun = m.choices[0].finish_reason;
      // In q8_0 the trained context's cache (2.13 GiB) would fit in memory but not in one wasm32
      // KV cache (at most 2 GiB): refused by the core, the next power of two is taken.
      out.memoryQ8 = await attempt(a.long, { cacheTypeK: 'q8_0', cacheTypeV: 'q8_0' });
      out.large = await attempt(a.long, { nCtx: 65536 });
      out.tooLarge = await attempt(a.long, { nCtx: a.train });
      const c = await engine.completions.create({ prompt: 'Hello', max_tokens: 4, temperature: 0 });
      out.afterRefusal = c.choices[0].finish_reason;
      out.aboveTrained = await attempt(a.long, { nCtx: a.train + 1 });
      out.renamed = await attempt(a.long, { n_ctx: 512 });
      return out;
    }, { long: LONG_CTX, train: LONG_CTX_TRAIN, fits: FITS_CTX, token: 400 });
    // The trained context fits: it is the default.
    assert.equal(r.fits.n_ctx, FITS_CTX_TRAIN, JSON.stringify(r));
    assert.equal(r.fits.kv_bytes, FITS_CTX_TRAIN * KV_BYTES_PER_TOKEN);
    assert.equal(r.fits.source, 'trained');
    assert.match(r.fits.reason, /^the trained context of 131072 tokens: its KV cache \(64\.0 MiB in f16\/f16\) fits in wasm memory \([\d.]+ GiB free\)$/);
    assert.equal(r.fitsRun.usage.prompt_tokens, 5000);
    assert.equal(r.fitsRun.usage.completion_tokens, 4);
    assert.equal(r.fitsRun.finish, 'length');
    // 2^23 positions need 4 GiB of KV cache: the default is 2^22 (2 GiB), and says why.
    assert.equal(r.memory.n_ctx, LONG_CTX_TRAIN / 2);
    assert.equal(r.memory.kv_bytes, (LONG_CTX_TRAIN / 2) * KV_BYTES_PER_TOKEN);
    assert.equal(r.memory.source, 'memory');
    assert.match(r.memory.reason, /^4194304 tokens \(KV cache 2\.00 GiB in f16\/f16\), the largest power of two that fits: the trained context of 8388608 tokens does not \(its KV cache \(4\.00 GiB in f16\/f16\) and 256\.0 MiB kept for buffers need more than the [\d.]+ GiB wasm memory can still grow to\)/);
    assert.equal(r.memoryRun, 'length');
    assert.equal(r.memoryQ8.n_ctx, LONG_CTX_TRAIN / 2, JSON.stringify(r.memoryQ8));
    assert.equal(r.memoryQ8.kv_bytes, (LONG_CTX_TRAIN / 2) * 2 * 2 * (2 * 34));  // 2 layers, K + V, 2 q8_0 blocks of 34 bytes per row
    assert.equal(r.memoryQ8.source, 'memory');
    assert.match(r.memoryQ8.reason, /^4194304 tokens \(KV cache 1\.06 GiB in q8_0\/q8_0\), the largest power of two that fits: the trained context of 8388608 tokens does not \(KV cache for 8388608 positions x 2 layers x 1 sequences needs 2176\.0 MiB, more than this build can hold \(2048 MiB\)/);
    // Explicit sizes: as asked, or refused before allocating with the numbers.
    assert.equal(r.large.n_ctx, 65536, 'a context above 4096 as asked');
    assert.equal(r.large.kv_bytes, 65536 * KV_BYTES_PER_TOKEN);
    assert.equal(r.large.source, 'requested');
    assert.equal(r.tooLarge.code, 'too_large');
    assert.match(r.tooLarge.message, /8388608 positions \(KV cache 4\.00 GiB in f16\/f16.*needs [\d.]+ GiB but only [\d.]+ GiB of memory is available/);
    assert.equal(r.tooLarge.model, 65536, 'the previous model (and context) is still loaded');
    assert.equal(r.afterRefusal, 'length');
    assert.equal(r.aboveTrained.code, 'invalid_argument');
    assert.match(r.aboveTrained.message, /nCtx = 8388609 is above llama-long-ctx\.gguf's trained context of 8388608 tokens/);
    assert.equal(r.renamed.code, 'invalid_argument');
    assert.match(r.renamed.message, /n_ctx is now called nCtx/);
  });
});
