// Renderer memory during load() in headless Chromium, as web/test/storage.test.mjs's memory test
// measures it (issue #25 item 3: peak <= model size + 15%): per run, a fresh profile, one browser
// that downloads and stores the model, then another on the same profile that loads it from OPFS;
// each prints how far the renderer's peak resident memory (VmHWM) rose above its VmRSS before the
// load, and with --smaps what rose by mapping class (the wasm memory is the one big rw-p mapping;
// 2 MiB rw-p mappings are PartitionAlloc super pages, e.g. ArrayBuffer backing stores; r-xp
// chromium is code paged in).
//   node bench/peers/load_memory.mjs [--web DIR] [--shape 0.5B] [--type Q4_0] [--runs 5] [--threads 0] [--smaps]
// OXIDIZE_CHROMIUM_ARGS adds Chromium flags (e.g. "--js-flags=--no-wasm-tier-up").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startServer } from './lib/browser.mjs';
import { ensureSynthModel } from './lib/oxidize.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const MiB = (b) => (b / 2 ** 20).toFixed(1);

function parseArgs(argv) {
  const a = { web: path.join(root, 'web/dist'), shape: '0.5B', type: 'Q4_0', runs: 5, threads: 0, smaps: false,
    oxidize: process.env.OXIDIZE_BIN || path.join(root, 'build/native/bin/oxidize') };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in a)) throw new Error(`unknown option ${argv[i]} (options: ${Object.keys(a).map((k) => `--${k}`).join(' ')})`);
    if (typeof a[key] === 'boolean') a[key] = true;
    else a[key] = typeof a[key] === 'number' ? Number(argv[++i]) : key === 'web' ? path.resolve(argv[++i]) : argv[++i];
  }
  return a;
}

function readProc(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

// The renderer processes under the browser started with `profile` (the page and its workers run there).
function renderers(profile) {
  const parent = new Map();
  let browser = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    const stat = readProc(`/proc/${pid}/stat`);
    if (stat !== null) parent.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    const cmd = readProc(`/proc/${pid}/cmdline`) ?? '';
    if (cmd.includes(`--user-data-dir=${profile}`) && !cmd.includes('--type=')) browser = Number(pid);
  }
  const under = (pid) => {
    for (let p = pid; p > 1; p = parent.get(p) ?? 0) if (p === browser) return true;
    return false;
  };
  return [...parent.keys()].filter((pid) => under(pid) && (readProc(`/proc/${pid}/cmdline`) ?? '').includes('--type=renderer'));
}

function status(pid) {
  const s = readProc(`/proc/${pid}/status`) ?? '';
  const kb = (k) => Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

// Resident bytes per mapping, keyed by start address.
function mappings(pid) {
  const out = new Map();
  let cur = null;
  for (const line of (readProc(`/proc/${pid}/smaps`) ?? '').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) {
      cur = { size: parseInt(m[2], 16) - parseInt(m[1], 16), perms: m[3], name: m[4] || '[anon]', rss: 0 };
      out.set(m[1], cur);
    } else if (cur !== null && line.startsWith('Rss:')) {
      cur.rss = Number(line.match(/(\d+) kB/)[1]) * 1024;
    }
  }
  return out;
}

// What rose between two mapping snapshots, by class (permissions, name, new or not, size).
function risesByClass(before, after) {
  const classes = new Map();
  for (const [key, m] of after) {
    const rise = m.rss - (before.get(key)?.rss ?? 0);
    const size = m.size > 64 * 2 ** 20 ? '>64 MiB' : `${MiB(m.size)} MiB`;
    const name = `${m.perms} ${m.name} ${size}${before.has(key) ? '' : ' new'}`;
    const c = classes.get(name) ?? { rise: 0, n: 0 };
    c.rise += rise;
    c.n += 1;
    classes.set(name, c);
  }
  return [...classes].filter(([, c]) => Math.abs(c.rise) >= 2 ** 19).sort((x, y) => y[1].rise - x[1].rise)
    .map(([name, c]) => `    ${MiB(c.rise).padStart(6)} MiB in ${c.n} x ${name}`).join('\n');
}

async function loadOnce(chromium, profile, serverUrl, url, a) {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.OXIDIZE_CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ...(process.env.OXIDIZE_CHROMIUM_ARGS || '').split(' ').filter(Boolean)],  // e.g. "--js-flags=--no-wasm-tier-up"
  });
  try {
    const page = ctx.pages()[0] ?? await ctx.newPage();
    await page.goto(`${serverUrl}/peers/index.html`);
    await page.evaluate(async (threads) => {
      window.engine = await (await import('/oxidize/index.js')).createEngine({ threads, onLog: () => {} });
    }, a.threads);
    const pids = renderers(profile);
    const before = new Map(pids.map((p) => [p, { status: status(p), maps: a.smaps ? mappings(p) : null }]));
    const info = await page.evaluate(async (u) => {
      const t0 = performance.now();
      const i = await window.engine.load(u, { nCtx: 64, nBatch: 32 });
      return { source: i.source, ms: performance.now() - t0 };
    }, url);
    let top = null;
    for (const p of pids) {
      const now = status(p);
      const rise = now.hwm - before.get(p).status.rss;
      if (top === null || rise > top.rise) top = { pid: p, rise, after: now.rss - before.get(p).status.rss };
    }
    const detail = a.smaps ? `\n${risesByClass(before.get(top.pid).maps, mappings(top.pid))}` : '';
    return { ...info, ...top, detail };
  } finally {
    await ctx.close();
  }
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const { chromium } = await import('playwright-core');
  const file = path.join(here, 'models', `${a.shape}-${a.type}.gguf`);
  await ensureSynthModel({ bin: a.oxidize, shape: a.shape, type: a.type, file, log: (s) => console.error(s) });
  const size = fs.statSync(file).size;
  const url = `/models/${path.basename(file)}`;
  const server = await startServer({ mounts: { '/peers/': path.join(here, 'page'), '/oxidize/': a.web }, files: { [url]: file } });
  console.log(`${path.basename(file)}: ${MiB(size)} MiB, the test's limit ${MiB(size * 1.15)} MiB; ${a.web}; load average ${os.loadavg()[0].toFixed(2)}`);
  const rises = { network: [], cache: [] };
  try {
    for (let r = 0; r < a.runs; r++) {
      const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'oxidize-load-memory-'));
      try {
        for (let k = 0; k < 2; k++) {
          const m = await loadOnce(chromium, profile, server.url, url, a);
          rises[m.source].push(m.rise);
          console.log(`  run ${r + 1} ${m.source.padEnd(7)} ${m.ms.toFixed(0).padStart(6)} ms: peak rose ${MiB(m.rise)} MiB (${MiB(m.after)} MiB still after the load)${m.detail}`);
        }
      } finally {
        fs.rmSync(profile, { recursive: true, force: true });
      }
    }
  } finally {
    await server.close();
  }
  for (const [source, xs] of Object.entries(rises)) console.log(`${source}: ${xs.map(MiB).join(' ')} MiB`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
