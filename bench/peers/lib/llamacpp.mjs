// llama.cpp's side: its own llama-bench (built from the source node-llama-cpp bundles by
// bench/build_llama_cpp.sh, GGML_NATIVE), given the same -p/-n/-t/-r/-d/-ctk/-ctv as `oxidize bench`,
// one process per model and thread count under /usr/bin/time for its peak RSS; `-o jsonl` rows.
import fs from 'node:fs';
import path from 'node:path';
import { benchFlags, parseJsonl } from './bench_format.mjs';
import { execWithPeakRss, fail } from './oxidize.mjs';

// --llama-bench PATH, else $LLAMA_BENCH, else what bench/build_llama_cpp.sh builds in this repo.
export function defaultLlamaBench(repo) {
  return process.env.LLAMA_BENCH || path.join(repo, 'build/llama.cpp/build/bin/llama-bench');
}

export async function benchLlamaCpp({ bin, model, timeoutMs, ...run }) {
  if (!fs.existsSync(bin)) {
    throw new Error(`no llama-bench at ${bin}: run bench/build_llama_cpp.sh, or pass --llama-bench PATH / set LLAMA_BENCH`);
  }
  const r = await execWithPeakRss([bin, '-m', model, ...benchFlags(run)], { timeoutMs });
  if (r.code !== 0) throw fail('llama-bench', r);
  const { tests, rows } = parseJsonl(r.stdout);
  const first = rows[0] ?? {};
  const info = { bin, build_commit: first.build_commit, cpu_info: first.cpu_info, backends: first.backends, flash_attn: first.flash_attn, n_batch: first.n_batch, n_ubatch: first.n_ubatch };
  return { tests, info, peakRss: r.peakRss };
}
