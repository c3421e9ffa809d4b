#!/usr/bin/env node
// Embeddings per second in the browser (issue #24 item 6): oxidize's browser package
// (engine.embeddings.create) against wllama (createEmbedding) in the same headless Chromium, on the
// same `oxidize synth --arch bert` models (bge-small and bge-base shapes, bge's WordPiece vocabulary),
// threads and batches of ~30-token sentences. Prints one markdown table, also written to
// results/embeddings.md (samples in results/embeddings.json). See README.md.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, startServer } from './lib/browser.mjs';
import { asInt, asIntList, asList, asPath, parseFlags } from './lib/flags.mjs';
import { ensureSynthModel } from './lib/oxidize.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const SHAPES = ['bge-small', 'bge-base'];
const ENGINES = ['oxidize', 'wllama'];
const SETTLE_MS = 5000; // Chromium's start-up work, before the first page (as run.mjs)
// Each of wllama's vectors of a batch must be this close to one of oxidize's, a different one each
// (same model, same pooling; wllama's come in no fixed order). Random-weight models give different
// sentences vectors within cosine ~0.9999 of each other, so the bound is the parity tests' one.
const MIN_COSINE = 0.99999;

const USAGE = `usage: node bench/peers/embeddings.mjs [options]
  --models LIST    synth shapes (${SHAPES.join(',')}; default both)
  --type T         weight type of the synth models (default F32)
  --threads N      threads of both engines (default 2)
  --batches LIST   sentences per call (default 1,32)
  --reps N         measured calls per batch (default 5; --quick: 1)
  --warmup N       untimed calls before them (default 1)
  --quick          smoke test: bge-small, 1 repetition
  --oxidize PATH   native CLI that writes the models (default build/native/bin/oxidize, or $OXIDIZE_BIN)
  --web DIR        the built browser package (default web/dist)
  --vocab PATH     the models' vocabulary (default $OXIDIZE_SHARED/vocab/ggml-vocab-bert-bge.gguf)
  --timeout S      give up on one engine run after S seconds (default 1800)
  --out DIR        results folder (default bench/peers/results)
  --verbose        print browser console lines`;

function parseArgs(argv) {
  const shared = process.env.OXIDIZE_SHARED || path.join(repo, '..', 'shared');
  const defaults = {
    models: null, type: 'F32', threads: 2, batches: [1, 32], reps: null, warmup: 1, quick: false, timeout: 1800,
    verbose: false, out: path.join(here, 'results'), web: path.join(repo, 'web/dist'),
    oxidize: process.env.OXIDIZE_BIN || path.join(repo, 'build/native/bin/oxidize'),
    vocab: path.join(shared, 'vocab/ggml-vocab-bert-bge.gguf'),
  };
  const a = parseFlags(argv, defaults, {
    '--models': ['models', asList],
    '--type': ['type', (s) => s],
    '--threads': ['threads', asInt(1)],
    '--batches': ['batches', asIntList(1)],
    '--reps': ['reps', asInt(1)],
    '--warmup': ['warmup', asInt(0)],
    '--quick': ['quick', true],
    '--oxidize': ['oxidize', asPath],
    '--web': ['web', asPath],
    '--vocab': ['vocab', asPath],
    '--timeout': ['timeout', asInt(0)],
    '--out': ['out', asPath],
    '--verbose': ['verbose', true],
  }, USAGE);
  a.models ??= a.quick ? ['bge-small'] : SHAPES;
  a.reps ??= a.quick ? 1 : 5;
  for (const m of a.models) if (!SHAPES.includes(m)) throw new Error(`--models: ${m} is not one of ${SHAPES.join(',')}`);
  if (a.batches.length === 0 || a.batches.some((b) => b > 64)) throw new Error('--batches: sizes in [1, 64]');
  if (!/^[A-Z0-9_]+$/.test(a.type)) throw new Error(`--type: '${a.type}' is not a weight type (F32, F16, Q8_0, ...)`);
  if (!fs.existsSync(a.vocab)) throw new Error(`--vocab: no file ${a.vocab}`);
  if (!fs.existsSync(path.join(a.web, 'index.js'))) throw new Error(`--web: ${a.web} holds no built package (scripts/build web)`);
  return a;
}

// The sentences of bench/embeddings.sh: ~30 WordPiece tokens each, every one different.
function sentences(n) {
  return Array.from({ length: n }, (_, i) =>
    `Sentence ${i + 1}: retrieval models map each passage of a document collection to a vector, so that a query finds the passages nearest to it.`);
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function cosine(x, y) {
  let dot = 0, xx = 0, yy = 0;
  for (let i = 0; i < x.length; i++) {
    dot += x[i] * y[i];
    xx += x[i] * x[i];
    yy += y[i] * y[i];
  }
  return dot / Math.sqrt(xx * yy);
}

// The lowest cosine of each of b's vectors with its best match in a, or -1 when two match the same.
function matchVectors(a, b) {
  if (a.length !== b.length) return -1;
  const used = new Set();
  let lowest = 1;
  for (const y of b) {
    let best = -1;
    let at = -1;
    a.forEach((x, i) => {
      const c = cosine(x, y);
      if (c > best) [best, at] = [c, i];
    });
    if (used.has(at)) return -1;
    used.add(at);
    lowest = Math.min(lowest, best);
  }
  return lowest;
}

function pkgVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const log = (s) => console.error(`[embeddings] ${s}`);
  const models = a.models.map((shape) => ({
    shape, file: path.join(here, 'models', `${shape}-bert-${a.type}.gguf`), url: `/models/${shape}-bert-${a.type}.gguf`,
  }));
  const texts = sentences(Math.max(...a.batches));
  const loadBefore = os.loadavg();
  const started = new Date();
  const errors = [];
  const rows = [];
  const raw = [];
  const server = await startServer({
    mounts: {
      '/peers/': path.join(here, 'page'),
      '/wllama/': path.join(here, 'node_modules/@wllama/wllama/esm'),
      '/oxidize/': a.web,
    },
    files: Object.fromEntries(models.map((m) => [m.url, m.file])),
    log: a.verbose ? log : null,
  });
  const browser = await launchBrowser({ log: a.verbose ? log : () => {} });
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const inBrowser = async (engine, m) => {
      const page = await browser.open(`${server.url}/peers/index.html`);
      let timer;
      try {
        const args = { engine, modelUrl: m.url, threads: a.threads, texts, batches: a.batches, reps: a.reps, warmup: a.warmup };
        const timeout = new Promise((_, reject) => {
          if (a.timeout > 0) timer = setTimeout(() => reject(new Error(`timed out after ${a.timeout} s (--timeout)`)), a.timeout * 1000);
        });
        const run = page.evaluate(async ([mod, args]) => (await import(mod)).run(args), ['/peers/embeddings_bench.mjs', args]);
        return await Promise.race([run, timeout]);
      } finally {
        clearTimeout(timer);
        await page.close();
      }
    };
    for (const m of models) {
      try {
        await ensureSynthModel({
          bin: a.oxidize, shape: m.shape, type: a.type, file: m.file, log,
          args: ['--arch', 'bert', '--weight-std', '0.02', '--vocab', a.vocab],
        });
      } catch (e) {
        errors.push({ what: `synth ${m.shape}`, message: e.message });
        continue;
      }
      const got = {};
      for (const engine of ENGINES) {
        const t0 = Date.now();
        try {
          got[engine] = await inBrowser(engine, m);
          const { runtime, results } = got[engine];
          const timings = Object.fromEntries(Object.entries(results).map(([n, r]) => [n, { ms: r.ms, n_embd: r.n_embd }]));
          raw.push({ model: m.shape, engine, runtime, results: timings });
          log(`${engine} ${m.shape}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        } catch (e) {
          log(`${engine} ${m.shape}: FAILED: ${e.message}`);
          errors.push({ what: `${engine} ${m.shape}`, message: e.message });
        }
      }
      for (const n of a.batches) {
        const ox = got.oxidize?.results[n];
        const wl = got.wllama?.results[n];
        const cos = ox && wl ? matchVectors(ox.vectors, wl.vectors) : null;
        if (cos !== null && !(cos >= MIN_COSINE)) {
          errors.push({ what: `${m.shape} batch ${n}`, message: `the engines' vectors differ: cosine ${cos.toFixed(7)} < ${MIN_COSINE}` });
        }
        rows.push({ model: m.shape, batch: n, oxidize: ox ? median(ox.ms) : null, wllama: wl ? median(wl.ms) : null, cosine: cos, n_embd: ox?.n_embd ?? wl?.n_embd });
      }
    }
  } finally {
    await browser.close();
    await server.close();
  }

  const ms = (x) => (x === null ? '–' : x.toFixed(x >= 100 ? 1 : 2));
  const perS = (n, x) => (x === null ? '–' : ((n * 1000) / x).toFixed(1));
  const table = [
    `| model | batch | oxidize wasm ms | wllama ms | oxidize wasm emb/s | wllama emb/s | oxidize / wllama | cosine |`,
    `|---|---:|---:|---:|---:|---:|---:|---:|`,
    ...rows.map((r) => `| ${r.model} ${a.type} (n_embd ${r.n_embd ?? '?'}) | ${r.batch} | ${ms(r.oxidize)} | ${ms(r.wllama)} | ` +
      `${perS(r.batch, r.oxidize)} | ${perS(r.batch, r.wllama)} | ` +
      `${r.oxidize && r.wllama ? `${(r.wllama / r.oxidize).toFixed(2)}×` : '–'} | ${r.cosine === null ? '–' : r.cosine.toFixed(7)} |`),
  ].join('\n');
  const load = (l) => l.map((x) => x.toFixed(1)).join(' ');
  const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? os.arch();
  const md = [
    `# Embeddings in the browser: oxidize vs wllama, ${started.toISOString()}`,
    '',
    `${cpu}, ${os.cpus().length} cores; load average ${load(loadBefore)} before, ${load(os.loadavg())} after. ` +
      `wllama ${pkgVersion('@wllama/wllama') ?? '?'}, node ${process.version}.`,
    `${a.threads} thread(s); ms per call (median of ${a.reps}, after ${a.warmup} untimed) of a batch of ~30-token sentences; ` +
      `cosine: the lowest of each wllama vector's with the oxidize vector it matches.`,
    '',
    table,
    '',
    errors.length ? `Failed:\n${errors.map((e) => `- ${e.what}: ${e.message.split('\n')[0]}`).join('\n')}\n` : '',
  ].join('\n');
  fs.mkdirSync(a.out, { recursive: true });
  fs.writeFileSync(path.join(a.out, 'embeddings.md'), md);
  fs.writeFileSync(path.join(a.out, 'embeddings.json'), JSON.stringify({ options: a, rows, raw, errors }, null, 2) + '\n');
  console.log(md);
  return errors.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`[embeddings] ${e.message}`);
    process.exit(2);
  },
);
