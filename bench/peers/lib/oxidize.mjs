// oxidize's own runs: `oxidize synth` to create the models, `oxidize bench -o jsonl` natively (under
// /usr/bin/time for the peak RSS) and, as a stand-in when the browser package is not built, the same
// command in the wasm build of the CLI under node.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchFlags, parseJsonl } from './bench_format.mjs';

// Children run in their own process group (see exec); on Ctrl-C or SIGTERM we end those we started.
const live = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const pid of live) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    process.exit(130);
  });
}

// Runs argv, resolving with {code, stdout, stderr}; never rejects on a non-zero exit. After timeoutMs
// the child's process group (the child and whatever it started, e.g. under /usr/bin/time) is killed.
export function exec(argv, { cwd, env, timeoutMs = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    live.add(child.pid);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = timeoutMs > 0 ? setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs) : null;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      live.delete(child.pid);
      if (timer) clearTimeout(timer);
      if (timedOut) stderr += `\ntimed out after ${timeoutMs / 1000} s (--timeout)`;
      resolve({ code: timedOut ? 'timeout' : code, stdout, stderr });
    });
  });
}

const TIME = '/usr/bin/time';

// argv under `/usr/bin/time -f %M` when it exists: returns the result plus peak RSS in bytes (or null).
export async function execWithPeakRss(argv, options) {
  if (!fs.existsSync(TIME)) return { ...(await exec(argv, options)), peakRss: null };
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oxidize-peers-')), 'rss');
  const r = await exec([TIME, '-f', '%M', '-o', out, ...argv], options);
  const kb = Number.parseInt(fs.existsSync(out) ? fs.readFileSync(out, 'utf8').trim().split('\n').pop() : '', 10);
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  return { ...r, peakRss: Number.isFinite(kb) ? kb * 1024 : null };
}

export function fail(what, r) {
  const tail = (r.stderr || r.stdout).trim().split('\n').slice(-8).join('\n');
  return new Error(`${what} exited with ${r.code}:\n${tail}`);
}

// `oxidize synth` unless the file exists. Written to NAME.tmp first so an interrupted run leaves no
// half model behind. args: more synth flags (e.g. --arch bert --vocab V); the file name must differ
// for each set.
export async function ensureSynthModel({ bin, shape, type, file, log, args = [] }) {
  if (fs.existsSync(file)) return;
  if (!fs.existsSync(bin)) throw new Error(`${file} is missing and there is no ${bin} to create it (build the native CLI)`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const what = ['synth', '--shape', shape, '--type', type, ...args].join(' ');
  log(`creating ${path.basename(file)}: ${bin} ${what}`);
  const r = await exec([bin, 'synth', '--shape', shape, '--type', type, ...args, '-o', tmp]);
  if (r.code !== 0 || !fs.existsSync(tmp)) {
    fs.rmSync(tmp, { force: true });
    throw fail(`oxidize ${what}`, r);
  }
  fs.renameSync(tmp, file);
}

// `oxidize bench ... -o jsonl` -> {tests: {pp128: {samples, ...}, 'tg64 @ d2048': ...}, type, isa}.
function parseBench(stdout) {
  const { rows, tests } = parseJsonl(stdout);
  return { tests, type: rows[0].type ?? null, isa: rows[0].isa ?? null };
}

function benchArgs({ model, ...run }) {
  return ['bench', '-m', model, ...benchFlags(run)];
}

export async function benchNative({ bin, timeoutMs, ...run }) {
  if (!fs.existsSync(bin)) throw new Error(`no native oxidize at ${bin} (cmake --preset native && cmake --build build/native --target oxidize)`);
  const r = await execWithPeakRss([bin, ...benchArgs(run)], { timeoutMs });
  if (r.code !== 0) throw fail('oxidize bench', r);
  return { ...parseBench(r.stdout), peakRss: r.peakRss };
}

// The wasm CLI under node (NODERAWFS reads the model from disk): SIMD128 kernels, threads from
// Emscripten's pthread pool. V8's warm-up is covered by oxidize bench's own untimed first run.
export async function benchNodeWasm({ mjs, timeoutMs, ...run }) {
  if (!fs.existsSync(mjs)) throw new Error(`no wasm oxidize CLI at ${mjs} (cmake --preset wasm && cmake --build build/wasm --target oxidize)`);
  const r = await exec([process.execPath, '--no-experimental-fetch', mjs, ...benchArgs(run)], {
    env: { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' },
    timeoutMs,
  });
  if (r.code !== 0) throw fail('node oxidize.mjs bench', r);
  return parseBench(r.stdout);
}
