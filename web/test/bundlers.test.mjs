// The package as an application gets it (#25): `npm pack`, installed into a fresh folder, imported by
// node, and built unmodified (no bundler configuration about workers or wasm) by Vite (production
// build and dev server) and webpack 5 into a small chat app that headless Chromium runs, cross-origin
// isolated (the threaded build), against the native CLI's greedy reply.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { sharedDir, startServer } from '../scripts/serve.mjs';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(webDir, '..');
const cli = process.env.OXIDIZE_CLI || path.join(repoRoot, 'build', 'native', 'bin', 'oxidize');
const chromiumPath = process.env.OXIDIZE_CHROMIUM || '/usr/bin/chromium';
const modelFile = path.join(sharedDir(), 'models', 'stories260K.gguf');
const PKG = JSON.parse(fs.readFileSync(path.join(webDir, 'package.json'), 'utf8')).name;
const PROMPT = 'Tell me a story';
const N_PREDICT = 12;
const T = { timeout: 240_000 };
const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

// The app: one page that imports the package by name and chats, greedy, streamed.
const APP_HTML = (script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bundled oxidize</title></head>
<body><pre id="out"></pre>${script}</body></html>
`;
const APP_JS = `import { createEngine } from '${PKG}';

window.chat = async (prompt, n) => {
  const engine = await createEngine();
  await engine.load(new URL('stories260K.gguf', location.href).href);
  let text = '';
  let finish = null;
  const stream = await engine.chat.completions.create({
    messages: [{ role: 'user', content: prompt }], stream: true, max_tokens: n, temperature: 0,
  });
  for await (const chunk of stream) {
    text += chunk.choices[0].delta.content ?? '';
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  document.getElementById('out').textContent = text;
  const runtime = engine.runtime;
  engine.terminate();
  return { text, finish, runtime };
};
window.appReady = true;
`;

let tmp;
let appDir;  // the installed app, shared by the three builds
let packed;  // npm pack --json's record of the tarball
let browser;
let expected;
const consoleLines = [];
const timings = {};

function run(cmd, args, cwd) {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

// Opens `url` (the app's page), chats, and returns what the page got.
async function chatIn(url) {
  const page = await browser.newPage();
  page.on('console', (m) => consoleLines.push(`[${url}] ${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`[${url}] pageerror: ${e.message}`));
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.appReady === true, null, { timeout: 60_000 });
    return await page.evaluate(([p, n]) => window.chat(p, n), [PROMPT, N_PREDICT]);
  } finally {
    await page.close();
  }
}

function checkChat(r, what) {
  assert.equal(r.runtime.build, 'multi-thread', `${what}: the threaded build runs (${r.runtime.reason})`);
  assert.ok(r.runtime.threads > 1, `${what}: threads = ${r.runtime.threads}`);
  assert.equal(r.runtime.kernels, 'simd128+relaxed', `${what}: the relaxed-SIMD module was found and loaded`);
  assert.equal(r.text, expected, `${what}: greedy chat equals the native CLI's`);
  assert.equal(r.finish, 'length');
}

// Serves a built app (its folder) with the isolation headers and chats with it.
async function chatWithBuild(outDir, what) {
  fs.copyFileSync(modelFile, path.join(outDir, 'stories260K.gguf'));
  const server = await startServer({ port: 0, isolated: true, root: outDir });
  try {
    checkChat(await chatIn(`${server.url}/index.html`), what);
  } finally {
    await server.close();
  }
}

before(async () => {
  assert.ok(fs.existsSync(path.join(webDir, 'dist', 'index.js')), 'web/dist is missing: run scripts/build-web');
  assert.ok(fs.existsSync(cli), `native CLI missing at ${cli}: build the "native" preset`);
  const out = run(cli, ['run', '--chat', '-m', modelFile, '-p', PROMPT, '-n', String(N_PREDICT), '--temp', '0']);
  expected = out.endsWith('\n') ? out.slice(0, -1) : out;
  assert.ok(expected.length > 5, `native output too short: ${JSON.stringify(expected)}`);

  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'oxidize-bundlers-'));
  appDir = path.join(tmp, 'app');
  fs.mkdirSync(path.join(appDir, 'src'), { recursive: true });
  fs.mkdirSync(path.join(appDir, 'public'));
  fs.copyFileSync(modelFile, path.join(appDir, 'public', 'stories260K.gguf'));
  fs.writeFileSync(path.join(appDir, 'src', 'main.js'), APP_JS);
  fs.writeFileSync(path.join(appDir, 'index.html'), APP_HTML('<script type="module" src="/src/main.js"></script>'));
  // The app installs the packed tarball (every test below uses it).
  const started = Date.now();
  packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', tmp], webDir))[0];
  fs.writeFileSync(path.join(appDir, 'package.json'), JSON.stringify({
    name: 'bundled-app', private: true, type: 'module',
    dependencies: { [PKG]: `file:${path.join(tmp, packed.filename)}` },
  }, null, 2));
  run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--loglevel=error'], appDir);
  timings.pack_install = (Date.now() - started) / 1000;

  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  const artifacts = process.env.OXIDIZE_WEB_ARTIFACTS || path.join(repoRoot, 'build', 'web-artifacts');
  fs.mkdirSync(artifacts, { recursive: true });
  fs.writeFileSync(path.join(artifacts, 'bundlers-console.log'), consoleLines.join('\n') + '\n');
  console.log(`bundler test timings (s): ${JSON.stringify(timings)}`);
  if (tmp && !process.env.OXIDIZE_KEEP_TMP) fs.rmSync(tmp, { recursive: true, force: true });
});

test('npm pack: the tarball installs into a fresh folder and imports by name', T, async () => {
  const files = packed.files.map((f) => f.path);
  for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/worker.js', 'dist/assets.js', 'dist/wasm_files.js',
    'dist/wasm/oxidize-mt.js', 'dist/wasm/oxidize-mt.wasm', 'dist/wasm/oxidize-mt.relaxed.wasm',
    'dist/wasm/oxidize-mt.worker.js', 'dist/wasm/oxidize-st.js', 'dist/wasm/oxidize-st.wasm',
    'dist/wasm/oxidize-st.relaxed.wasm', 'package.json', 'README.md']) {
    assert.ok(files.includes(f), `the tarball holds ${f}`);
  }
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'sources and tests stay out');
  // node resolves the package and each `exports` entry from the app
  const probe = `
    const m = await import('${PKG}');
    const r = (s) => import.meta.resolve(s);
    console.log(JSON.stringify({ createEngine: typeof m.createEngine, EngineError: typeof m.EngineError,
      worker: r('${PKG}/worker.js'), wasm: r('${PKG}/wasm/oxidize-st.wasm'), protocol: r('${PKG}/protocol') }));`;
  const got = JSON.parse(run(process.execPath, ['--input-type=module', '-e', probe], appDir));
  assert.equal(got.createEngine, 'function');
  assert.equal(got.EngineError, 'function');
  assert.match(got.worker, /node_modules\/@oxidize-llm\/web\/dist\/worker\.js$/);
  assert.match(got.wasm, /node_modules\/@oxidize-llm\/web\/dist\/wasm\/oxidize-st\.wasm$/);
  assert.match(got.protocol, /dist\/protocol\.js$/);
});

test('Vite production build: chats in Chromium with threads', T, async () => {
  const started = Date.now();
  const vite = await import('vite');
  const outDir = path.join(tmp, 'vite-dist');
  await vite.build({ root: appDir, configFile: false, logLevel: 'warn', cacheDir: path.join(tmp, 'vite-cache'),
    build: { outDir, emptyOutDir: true } });
  const emitted = fs.readdirSync(path.join(outDir, 'assets'));
  assert.ok(emitted.some((f) => /^oxidize-mt\.relaxed-.*\.wasm$/.test(f)), `the wasm is emitted: ${emitted.join(' ')}`);
  timings.vite_build = (Date.now() - started) / 1000;
  await chatWithBuild(outDir, 'vite build');
  timings.vite_build_and_chat = (Date.now() - started) / 1000;
});

test('Vite dev server: chats in Chromium with threads', T, async () => {
  const started = Date.now();
  const vite = await import('vite');
  const server = await vite.createServer({
    root: appDir, configFile: false, logLevel: 'warn', cacheDir: path.join(tmp, 'vite-dev-cache'),
    server: { host: '127.0.0.1', port: 0, strictPort: false, headers: ISOLATION, hmr: false },
  });
  await server.listen();
  try {
    const base = server.resolvedUrls.local[0];
    checkChat(await chatIn(`${base}index.html`), 'vite dev');
  } finally {
    await server.close();
  }
  timings.vite_dev = (Date.now() - started) / 1000;
});

test('webpack 5 production build: chats in Chromium with threads', T, async () => {
  const started = Date.now();
  const { default: webpack } = await import('webpack');
  const outDir = path.join(tmp, 'webpack-dist');
  const stats = await new Promise((resolve, reject) => {
    webpack({
      mode: 'production', context: appDir, entry: './src/main.js',
      output: { path: outDir, filename: 'main.js', clean: true },
      performance: { hints: false },
    }, (err, s) => (err ? reject(err) : resolve(s)));
  });
  assert.ok(!stats.hasErrors(), stats.toString({ all: false, errors: true }));
  assert.ok(!stats.hasWarnings(), stats.toString({ all: false, warnings: true }));
  fs.writeFileSync(path.join(outDir, 'index.html'), APP_HTML('<script src="main.js"></script>'));
  timings.webpack_build = (Date.now() - started) / 1000;
  await chatWithBuild(outDir, 'webpack');
  timings.webpack_build_and_chat = (Date.now() - started) / 1000;
});

// Unbundled (an import map names the package), on a page that is cross-origin isolated while other
// responses are not: what starts, what falls back to one thread, and what rejects naming the cause.
describe('unbundled, with the isolation headers missing from some responses', () => {
  const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<script type="importmap">{ "imports": { "${PKG}": "/node_modules/${PKG}/dist/index.js" } }</script></head>
<body><script type="module">
  import * as oxidize from '${PKG}';
  window.start = async (options) => {
    try {
      const engine = await oxidize.createEngine(options);
      await engine.load('/public/stories260K.gguf');
      const c = await engine.completions.create({ prompt: 'Once upon a time', max_tokens: 8, temperature: 0 });
      const runtime = engine.runtime;
      engine.terminate();
      return { runtime, text: c.choices[0].text };
    } catch (e) {
      return { error: { name: e.name, code: e.code, message: e.message } };
    }
  };
  window.appReady = true;
</script></body></html>
`;
  // Serves the app folder; the page always isolated, other files as `rule(urlPath)` says:
  // 'isolated' (COOP/COEP), 'plain' (neither) or 'missing' (404).
  async function startWith(rule, options = {}) {
    fs.writeFileSync(path.join(appDir, 'unbundled.html'), PAGE);
    const server = await startServer({
      port: 0, isolated: true, root: appDir,
      policy: (urlPath, isolatedHeaders) => {
        const how = urlPath === '/unbundled.html' ? 'isolated' : rule(urlPath);
        if (how === 'missing') return null;
        return how === 'isolated' ? isolatedHeaders : { 'cache-control': 'no-cache' };
      },
    });
    const page = await browser.newPage();
    page.on('console', (m) => consoleLines.push(`[${server.url}] ${m.type()}: ${m.text()}`));
    try {
      await page.goto(`${server.url}/unbundled.html`);
      await page.waitForFunction(() => window.appReady === true);
      return await page.evaluate((o) => window.start(o), options);
    } finally {
      await page.close();
      await server.close();
    }
  }

  test('COOP/COEP on the page and the engine worker only: threads run (the rest is same-origin)', T, async () => {
    const r = await startWith((p) => (p.endsWith('/dist/worker.js') ? 'isolated' : 'plain'));
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.runtime.build, 'multi-thread', r.runtime.reason);
    assert.equal(r.runtime.kernels, 'simd128+relaxed');
    assert.ok(r.text.length > 0);
  });

  test('the engine worker served without COEP: createEngine rejects naming the header and the file', T, async () => {
    for (const options of [{}, { forceSingleThread: true }]) {
      const r = await startWith(() => 'plain', options);
      assert.equal(r.error?.name, 'EngineError', JSON.stringify(r));
      assert.equal(r.error.code, 'io');
      assert.match(r.error.message, /engine worker could not start: http:\/\/127\.0\.0\.1:\d+\/node_modules\/@oxidize-llm\/web\/dist\/worker\.js is served without a Cross-Origin-Embedder-Policy header/);
    }
  });

  test('a workerUrl that is not there: rejects with the HTTP status', T, async () => {
    const r = await startWith(() => 'isolated', { workerUrl: '/nowhere/worker.js' });
    assert.equal(r.error?.code, 'io', JSON.stringify(r));
    assert.match(r.error.message, /\/nowhere\/worker\.js answered HTTP 404/);
  });

  test('the thread workers\' script missing: falls back to one thread and says why', T, async () => {
    const r = await startWith((p) => (p.endsWith('/oxidize-mt.worker.js') ? 'missing' : 'isolated'));
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.equal(r.runtime.build, 'single-thread');
    assert.equal(r.runtime.crossOriginIsolated, true);
    assert.match(r.runtime.reason, /the multi-thread build failed to start \(.*oxidize-mt\.worker\.js answered HTTP 404/);
    assert.equal(r.runtime.kernels, 'simd128+relaxed', 'the single-thread build finds its relaxed module too');
    assert.ok(r.text.length > 0);
  });
});
