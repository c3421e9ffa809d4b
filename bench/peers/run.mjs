#!/usr/bin/env node
// Side-by-side throughput (issue #4 item 5, issue #21 item 7): oxidize native vs llama.cpp (its own
// llama-bench) and oxidize wasm vs wllama (headless Chromium) on the same `oxidize synth` models,
// thread counts, context depths and KV cache type. Writes one markdown table to results/latest.md
// and the raw samples to results/latest.json. See README.md.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchBrowser, startServer } from './lib/browser.mjs';
import { benchLlamaCpp, defaultLlamaBench } from './lib/llamacpp.mjs';
import { benchNative, benchNodeWasm, ensureSynthModel } from './lib/oxidize.mjs';
import { ENGINES, markdownTable, stats } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const SHAPES = ['tiny-15M', '0.5B', '1B'];
// Shapes of other architectures (synth.cpp), run only when named: bench/moe_hybrid.sh.
const MORE_SHAPES = ['moe-16x64', 'lfm2-1.2B'];
const TYPES = ['Q4_0', 'Q8_0', 'Q4_K_M'];
// Idle time after Chromium starts, before its first page: its start-up work (GPU process, profile
// set-up) runs for a few seconds and would otherwise overlap the first measured run.
const SETTLE_MS = 5000;

const USAGE = `usage: node bench/peers/run.mjs [options]
  --models LIST    synth shapes (${SHAPES.join(',')}; also ${MORE_SHAPES.join(',')}) and/or paths to
                   .gguf files (default: ${SHAPES.join(',')})
  --model-dir DIR  where synth models are written and found (default bench/peers/models)
  --types LIST     weight types for synth shapes (default: ${TYPES.join(',')})
  --threads LIST   thread counts (default: 1,2)
  --engines LIST   subset of ${ENGINES.join(',')} (default: all)
  --reps N         measured repetitions per test (default 3; --quick: 1)
  --warmup N       untimed runs before the measured ones, browser and llama.cpp (default 1)
  --pp N --tg N    prompt / generation lengths (default 128 / 64)
  --depths LIST    tokens already in the context before each test, as llama-bench -d (default 0);
                   e.g. 0,2048,4096 (the browser engines run only the depth-0 tests)
  --cache-type T   KV cache type for K and V, as -ctk/-ctv (default f16; the browser engines run
                   only f16 and are skipped otherwise)
  --wasm MODE      oxidize wasm through: browser (web/dist), node (the wasm CLI), auto (default:
                   browser when web/dist/wasm/oxidize-mt.js exists, else node)
  --quick          smoke test: tiny-15M, Q4_0, 1 repetition (explicit --models/--types/--reps win)
  --oxidize PATH   native CLI (default build/native/bin/oxidize, or $OXIDIZE_BIN)
  --llama-bench PATH  llama.cpp's llama-bench (default build/llama.cpp/build/bin/llama-bench, which
                   bench/build_llama_cpp.sh builds, or $LLAMA_BENCH)
  --oxidize-wasm PATH  wasm CLI for --wasm node (default build/wasm/bin/oxidize.mjs)
  --web DIR        the built browser package for --wasm browser (default web/dist)
  --timeout S      give up on one engine run (one model, one thread count) after S seconds (default 1800; 0: never)
  --out DIR        results folder (default bench/peers/results)
  --verbose        print browser console lines`;

function parseArgs(argv) {
  const a = {
    models: null, types: null, threads: [1, 2], engines: [...ENGINES], reps: null, warmup: 1, pp: 128, tg: 64,
    depths: [0], cacheType: 'f16', llamaBench: defaultLlamaBench(repo),
    wasm: 'auto', quick: false, timeout: 1800, verbose: false, out: path.join(here, 'results'),
    oxidize: process.env.OXIDIZE_BIN || path.join(repo, 'build/native/bin/oxidize'),
    oxidizeWasm: path.join(repo, 'build/wasm/bin/oxidize.mjs'),
    web: path.join(repo, 'web/dist'), modelDir: path.join(here, 'models'),
  };
  const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
  const int = (s, flag) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${flag}: '${s}' is not a non-negative integer`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--models') a.models = list(next());
    else if (flag === '--types') a.types = list(next());
    else if (flag === '--threads') a.threads = list(next()).map((t) => int(t, flag));
    else if (flag === '--engines') a.engines = list(next());
    else if (flag === '--reps') a.reps = int(next(), flag);
    else if (flag === '--warmup') a.warmup = int(next(), flag);
    else if (flag === '--pp') a.pp = int(next(), flag);
    else if (flag === '--tg') a.tg = int(next(), flag);
    else if (flag === '--depths') a.depths = list(next()).map((d) => int(d, flag));
    else if (flag === '--cache-type') a.cacheType = next();
    else if (flag === '--wasm') a.wasm = next();
    else if (flag === '--quick') a.quick = true;
    else if (flag === '--timeout') a.timeout = int(next(), flag);
    else if (flag === '--oxidize') a.oxidize = path.resolve(next());
    else if (flag === '--llama-bench') a.llamaBench = path.resolve(next());
    else if (flag === '--oxidize-wasm') a.oxidizeWasm = path.resolve(next());
    else if (flag === '--web') a.web = path.resolve(next());
    else if (flag === '--out') a.out = path.resolve(next());
    else if (flag === '--model-dir') a.modelDir = path.resolve(next());
    else if (flag === '--verbose') a.verbose = true;
    else if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  a.models ??= a.quick ? ['tiny-15M'] : SHAPES;
  a.types ??= a.quick ? ['Q4_0'] : TYPES;
  a.reps ??= a.quick ? 1 : 3;
  for (const e of a.engines) if (!ENGINES.includes(e)) throw new Error(`--engines: unknown engine ${e}`);
  for (const t of a.types) if (!TYPES.includes(t)) throw new Error(`--types: ${t} is not one of ${TYPES.join(',')}`);
  if (a.threads.some((t) => t < 1)) throw new Error('--threads: counts must be >= 1');
  if (a.pp < 1 || a.tg < 2 || a.reps < 1) throw new Error('--pp >= 1, --tg >= 2 and --reps >= 1 please');
  if (a.depths.length === 0) throw new Error('--depths: give at least one depth (0: an empty context)');
  if (!/^[a-z0-9_]+$/.test(a.cacheType)) throw new Error(`--cache-type: '${a.cacheType}' is not a cache type (f16, q8_0, ...)`);
  if (!['auto', 'browser', 'node'].includes(a.wasm)) throw new Error(`--wasm: ${a.wasm} is not browser, node or auto`);
  return a;
}

// Synth shapes x types, then any .gguf paths (their type is what oxidize bench reports).
function modelList(a) {
  const out = [];
  for (const m of a.models) {
    if (m.endsWith('.gguf')) {
      const file = path.resolve(m);
      if (!fs.existsSync(file)) throw new Error(`--models: no file ${file}`);
      out.push({ name: path.basename(file, '.gguf'), file, type: null, url: `/models/${out.length}-${path.basename(file)}` });
    } else if (SHAPES.includes(m) || MORE_SHAPES.includes(m)) {
      for (const type of a.types) {
        out.push({ name: m, shape: m, type, file: path.join(a.modelDir, `${m}-${type}.gguf`), url: `/models/${out.length}-${m}-${type}.gguf` });
      }
    } else throw new Error(`--models: ${m} is neither a shape (${[...SHAPES, ...MORE_SHAPES].join(',')}) nor a .gguf path`);
  }
  return out;
}

function tryRun(argv) {
  try {
    return execFileSync(argv[0], argv.slice(1), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

function pkgVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

function machine(a) {
  const cpu = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? os.arch();
  const commit = tryRun(['git', '-C', repo, 'rev-parse', '--short', 'HEAD']);
  const dirty = tryRun(['git', '-C', repo, 'status', '--porcelain', '--untracked-files=no']);
  return {
    cpu, cores: os.cpus().length, mem_gib: +(os.totalmem() / 2 ** 30).toFixed(1), node: process.version,
    oxidize_commit: commit ? `${commit}${dirty ? '+dirty' : ''}` : null,
    node_llama_cpp: pkgVersion('node-llama-cpp'), llama_bench: a.llamaBench, wllama: pkgVersion('@wllama/wllama'),
    chromium: tryRun([process.env.OXIDIZE_CHROMIUM || '/usr/bin/chromium', '--version']),
  };
}

// "llama-bench de3ff81 (build/llama.cpp/build/bin/llama-bench, CPU, flash_attn -1)" from its first row.
function llamaInfo(raw) {
  const i = raw.find((x) => x.engine === 'llama.cpp')?.info;
  if (!i) return 'not run';
  return `llama-bench ${i.build_commit ?? '?'} (${path.relative(repo, i.bin)}, ${i.backends ?? '?'}, flash_attn ${i.flash_attn ?? '?'})`;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const log = (s) => console.error(`[peers] ${s}`);
  const models = modelList(a);
  const webBuilt = fs.existsSync(path.join(a.web, 'index.js')) && fs.existsSync(path.join(a.web, 'wasm/oxidize-mt.js'));
  const wasmMode = a.wasm === 'auto' ? (webBuilt ? 'browser' : 'node') : a.wasm;
  if (wasmMode === 'browser' && !webBuilt) throw new Error(`--wasm browser: ${a.web} holds no built package (scripts/build-web)`);
  const wasmLabel = wasmMode === 'browser' ? 'oxidize wasm (browser)' : 'oxidize wasm (node)';
  const run = { nPrompt: a.pp, nGen: a.tg, reps: a.reps, warmup: a.warmup, depths: a.depths, cacheType: a.cacheType };
  // The browser engines run every depth (wllama only its tg cells) with an f16 cache only.
  const browserCells = a.cacheType === 'f16';
  const timeoutMs = a.timeout * 1000;
  const started = new Date();
  const loadBefore = os.loadavg();
  const errors = [];
  const rows = new Map(); // model|type|threads|test -> table row
  const raw = [];
  const row = (m, threads, test) => {
    const key = `${m.name}|${m.type}|${threads}|${test}`;
    if (!rows.has(key)) rows.set(key, { model: m.name, type: m.type ?? '?', threads, test, engines: {}, rss: {} });
    return rows.get(key);
  };
  const record = (m, threads, engine, tests, rss, extra = {}) => {
    for (const [test, t] of Object.entries(tests)) {
      const r = row(m, threads, test);
      r.engines[engine] = stats(t.samples);
      if (rss !== undefined) r.rss[engine] = rss;
      if (engine === 'oxidize') r.kvBytes = t.kv_bytes;
    }
    raw.push({ model: m.name, file: m.file, type: m.type, threads, engine, tests, peak_rss: rss ?? null, ...extra });
  };
  const attempt = async (what, fn) => {
    const t0 = Date.now();
    try {
      await fn();
      log(`${what}: done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } catch (e) {
      log(`${what}: FAILED: ${e.message}`);
      errors.push({ what, message: e.message });
    }
  };

  const inBrowserEngines = a.engines.filter((e) => e === 'wllama' || (e === 'oxidize-wasm' && wasmMode === 'browser'));
  if (inBrowserEngines.length && !browserCells) {
    log(`${inBrowserEngines.join(', ')}: skipped (they run only with an f16 cache; --cache-type ${a.cacheType})`);
    a.engines = a.engines.filter((e) => !inBrowserEngines.includes(e));
  }
  const needBrowser = inBrowserEngines.length > 0 && browserCells;
  let server = null;
  let browser = null;
  if (needBrowser) {
    const files = Object.fromEntries(models.map((m) => [m.url, m.file]));
    server = await startServer({
      mounts: {
        '/peers/': path.join(here, 'page'),
        '/wllama/': path.join(here, 'node_modules/@wllama/wllama/esm'),
        '/oxidize/': a.web,
      },
      files,
      log: a.verbose ? log : null,
    });
  }
  // Chromium runs only while browser engines do: launched on first use and closed before the next
  // native run, so that its start-up and background work never share the cores with a native
  // measurement (with it launched up front, the run's first native cell came out 3-5x slow).
  const ensureBrowser = async () => {
    if (!browser) {
      browser = await launchBrowser({ log: a.verbose ? log : () => {} });
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    }
    return browser;
  };
  const closeBrowser = async () => {
    await browser?.close();
    browser = null;
  };
  const inBrowser = async (module, m, threads) => {
    const page = await (await ensureBrowser()).open(`${server.url}/peers/index.html`);
    try {
      const args = { ...run, threads, modelUrl: m.url };
      let timer;
      const timeout = new Promise((_, reject) => {
        if (timeoutMs > 0) timer = setTimeout(() => reject(new Error(`timed out after ${a.timeout} s (--timeout)`)), timeoutMs);
      });
      try {
        return await Promise.race([page.evaluate(async ([mod, args]) => (await import(mod)).run(args), [`/peers/${module}`, args]), timeout]);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      await page.close();
    }
  };
  const fromBrowser = (r) => r.tests;

  try {
    for (const m of models) {
      if (m.shape) {
        await attempt(`synth ${m.shape} ${m.type}`, () => ensureSynthModel({ bin: a.oxidize, shape: m.shape, type: m.type, file: m.file, log }));
        if (!fs.existsSync(m.file)) continue;
      }
      for (const threads of a.threads) {
        const label = `${m.name} ${m.type ?? ''} t=${threads}`;
        if (a.engines.includes('oxidize') || a.engines.includes('llama.cpp')) await closeBrowser();
        if (a.engines.includes('oxidize')) {
          await attempt(`oxidize ${label}`, async () => {
            const r = await benchNative({ bin: a.oxidize, model: m.file, threads, timeoutMs, ...run });
            m.type ??= r.type;
            record(m, threads, 'oxidize', r.tests, r.peakRss, { isa: r.isa });
          });
        }
        if (a.engines.includes('llama.cpp')) {
          await attempt(`llama.cpp ${label}`, async () => {
            const r = await benchLlamaCpp({ bin: a.llamaBench, model: m.file, threads, timeoutMs, ...run });
            record(m, threads, 'llama.cpp', r.tests, r.peakRss, { info: r.info });
          });
        }
        if (a.engines.includes('oxidize-wasm')) {
          await attempt(`${wasmLabel} ${label}`, async () => {
            if (wasmMode === 'browser') {
              const r = await inBrowser('oxidize_bench.mjs', m, threads);
              record(m, threads, 'oxidize-wasm', fromBrowser(r), undefined, { runtime: r.runtime, isa: r.runtime.isa, mode: 'browser' });
            } else {
              // TODO(web): drop this stand-in once web/dist is built everywhere; --wasm browser forces the real path.
              const r = await benchNodeWasm({ mjs: a.oxidizeWasm, model: m.file, threads, timeoutMs, ...run });
              record(m, threads, 'oxidize-wasm', r.tests, undefined, { isa: r.isa, mode: 'node' });
            }
          });
        }
        if (a.engines.includes('wllama')) {
          await attempt(`wllama ${label}`, async () => {
            const r = await inBrowser('wllama_bench.mjs', m, threads);
            record(m, threads, 'wllama', fromBrowser(r), undefined, { runtime: r.runtime });
          });
        }
      }
    }
  } finally {
    await closeBrowser();
    await server?.close();
  }

  const info = { ...machine(a), started: started.toISOString(), load_before: loadBefore, load_after: os.loadavg(), wasm_mode: wasmMode };
  const table = markdownTable([...rows.values()], { wasmLabel, engines: a.engines });
  const load = (l) => l.map((x) => x.toFixed(1)).join(' ');
  const md = [
    `# oxidize vs peers: ${info.started}`,
    '',
    `${info.cpu}, ${info.cores} cores, ${info.mem_gib} GiB; load average ${load(info.load_before)} before, ${load(info.load_after)} after.`,
    [
      `oxidize ${info.oxidize_commit ?? '?'}`,
      a.engines.includes('llama.cpp') && `llama.cpp: ${llamaInfo(raw)}`,
      a.engines.includes('wllama') && `wllama ${info.wllama ?? '?'}`,
      needBrowser && (info.chromium ?? 'no Chromium'),
      `node ${info.node}.`,
    ].filter(Boolean).join('; '),
    `pp${a.pp} / tg${a.tg} at depth ${a.depths.join(', ')}, KV cache ${a.cacheType}, ${a.reps} measured repetition(s) after ${a.warmup} warm-up; t/s as mean ± sd.${a.engines.includes('oxidize-wasm') ? ` ${wasmLabel}.` : ''}`,
    '',
    table,
    '',
    errors.length ? `Failed runs:\n${errors.map((e) => `- ${e.what}: ${e.message.split('\n')[0]}`).join('\n')}\n` : '',
  ].join('\n');
  fs.mkdirSync(a.out, { recursive: true });
  fs.writeFileSync(path.join(a.out, 'latest.md'), md);
  fs.writeFileSync(path.join(a.out, 'latest.json'), JSON.stringify({ info, options: { ...a, models: models.map((m) => m.file) }, rows: [...rows.values()], raw, errors }, null, 2) + '\n');
  console.log(md);
  log(`wrote ${path.relative(process.cwd(), path.join(a.out, 'latest.md'))} and latest.json`);
  return errors.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`[peers] ${e.message}`);
    process.exit(2);
  },
);
