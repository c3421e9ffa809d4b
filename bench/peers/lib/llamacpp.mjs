// llama.cpp's side: spawns llamacpp_child.mjs per model and thread count (its own process, so its
// peak RSS belongs to that run) and collects its JSON line.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exec } from './oxidize.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function benchLlamaCpp({ model, threads, nPrompt, nGen, reps, warmup, timeoutMs }) {
  const pkg = path.join(here, '..', 'node_modules', '@node-llama-cpp', 'linux-x64');
  if (!fs.existsSync(pkg)) {
    throw new Error('node-llama-cpp or its CPU binary is missing: run `npm install --omit=optional` in bench/peers');
  }
  const args = JSON.stringify({ model, threads, nPrompt, nGen, reps, warmup });
  const r = await exec([process.execPath, '--expose-gc', path.join(here, 'llamacpp_child.mjs'), args], { timeoutMs });
  const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (r.code !== 0 || !line) {
    throw new Error(`node-llama-cpp exited with ${r.code}:\n${(r.stderr || r.stdout).trim().split('\n').slice(-8).join('\n')}`);
  }
  const out = JSON.parse(line);
  const tests = {};
  for (const t of out.results) tests[t.test] = { samples: t.samples.map((s) => s.ts), wallSamples: t.samples.map((s) => s.wall_ts) };
  // The model's and context's share of the process: resident after the runs (garbage collected)
  // minus resident before the model loaded. The process's own peak is kept for the JSON.
  return { tests, info: out.info, rss: out.rss_after - out.baseline_rss, processPeakRss: out.peak_rss, baselineRss: out.baseline_rss };
}
