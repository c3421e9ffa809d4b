// oxidize's browser package (web/dist, mounted at /oxidize/) in the page: an engine with `threads`
// threads (the page is cross-origin isolated; 1 thread runs the single-thread build, as wllama runs
// its single-thread mode for n_threads 1), then engine.bench(): the C++ of `oxidize bench`
// (core/tools/bench.cpp) run in the engine's worker, so this column is the same benchmark as the
// native and node-wasm ones: pp = one eval of nPrompt fixed token ids, tg = nGen single-token evals,
// each from an empty context, timed around evaluation only.
import { createEngine } from '/oxidize/index.js';

export async function run({ modelUrl, threads, nPrompt, nGen, reps, warmup, depths = [0] }) {
  // 1 thread: the single-thread build, as wllama uses its single-thread build for n_threads 1.
  const engine = await createEngine({ threads, forceSingleThread: threads === 1, onLog: () => {} });
  try {
    // The engine's own session is dropped while bench runs (each test makes its own context), so
    // its context is kept small; n_batch is what bench's pp tests use, as `oxidize bench -b 512`.
    await engine.load(modelUrl, { cache: false, nCtx: 64, nBatch: 512 });
    const runtime = { ...engine.runtime, coi: self.crossOriginIsolated };
    if (runtime.threads !== threads) throw new Error(`asked for ${threads} threads, the engine runs ${runtime.threads}`);
    const tests = { nPrompt: [nPrompt], nGen: [nGen], nDepth: depths, threads };
    // bench's own warm-up is one untimed run of each test (V8 tiers the wasm up during the first
    // runs); any further warm-up runs are a discarded bench before the measured one.
    if (warmup > 1) await engine.bench({ ...tests, reps: warmup - 1, warmup: false });
    const { records } = await engine.bench({ ...tests, reps, warmup: warmup > 0 });
    const pp = records.find((r) => r.test === `pp${nPrompt}` || r.test === `pp${nPrompt} @ d${depths[0]}`);
    const tg = records.find((r) => r.test === `tg${nGen}` || r.test === `tg${nGen} @ d${depths[0]}`);
    if (!pp || !tg) throw new Error(`engine.bench returned ${records.map((r) => r.test).join(', ')}`);
    for (const r of records) {
      if (r.n_threads !== threads) throw new Error(`${r.test} ran on ${r.n_threads} threads, not ${threads}`);
    }
    const samples = pp.samples_ts.map((x, i) => ({ pp: x, tg: tg.samples_ts[i], prompt_n: pp.n_prompt }));
    // Every row by its llama-bench name ("tg64 @ d2048"), depth 0 included.
    const byTest = Object.fromEntries(records.map((r) => [r.test, { samples: r.samples_ts }]));
    return { runtime: { ...runtime, isa: pp.isa }, samples, records, tests: byTest };
  } finally {
    engine.terminate();
  }
}
