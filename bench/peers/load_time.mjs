// load()-to-first-token of a cached model in headless Chromium (issue #25 item 7): the browser
// package (web/dist) loads a synth model once (downloaded and stored), then each repetition starts
// a fresh engine that loads it from the store and streams one token (page/load_time.mjs). Prints
// the median of each phase and every sample as JSON.
//   node bench/peers/load_time.mjs [--model 1B] [--type Q4_K_M] [--threads 2] [--reps 5] [--web DIR]
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launchBrowser, startServer } from './lib/browser.mjs';
import { ensureSynthModel } from './lib/oxidize.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

function parseArgs(argv) {
  const a = { model: '1B', type: 'Q4_K_M', threads: 2, reps: 5, web: path.join(root, 'web/dist'),
    oxidize: process.env.OXIDIZE_BIN || path.join(root, 'build/native/bin/oxidize'), prompt: 'Once upon a time there was' };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in a)) throw new Error(`unknown option ${argv[i]} (options: ${Object.keys(a).map((k) => `--${k}`).join(' ')})`);
    const v = argv[++i];
    a[key] = typeof a[key] === 'number' ? Number(v) : key === 'web' ? path.resolve(v) : v;
  }
  return a;
}

const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const log = (s) => console.error(`[load_time] ${s}`);
  const file = path.join(here, 'models', `${a.model}-${a.type}.gguf`);
  await ensureSynthModel({ bin: a.oxidize, shape: a.model, type: a.type, file, log });
  const url = `/models/${a.model}-${a.type}.gguf`;
  const server = await startServer({ mounts: { '/peers/': path.join(here, 'page'), '/oxidize/': a.web }, files: { [url]: file } });
  const browser = await launchBrowser({ log: () => {} });
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' / ');
  try {
    const page = await browser.open(`${server.url}/peers/index.html`);
    const r = await page.evaluate(async ([mod, args]) => (await import(mod)).run(args),
      ['/peers/load_time.mjs', { modelUrl: url, threads: a.threads, reps: a.reps, prompt: a.prompt }]);
    const keys = ['create_ms', 'copy_ms', 'open_ms', 'load_ms', 'first_token_ms', 'load_to_first_token_ms', 'warm_first_token_ms'];
    console.log(`${a.model} ${a.type}, ${a.threads} threads, ${a.reps} reps, ${r.samples[0]?.kernels}, stored in ${r.samples[0]?.source}; load average ${load} at the start`);
    console.log(`first load (download and store): ${r.download_ms.toFixed(0)} ms`);
    for (const k of keys) console.log(`${k.padEnd(24)} median ${median(r.samples.map((s) => s[k])).toFixed(0).padStart(6)}   samples ${r.samples.map((s) => s[k].toFixed(0)).join(' ')}`);
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
