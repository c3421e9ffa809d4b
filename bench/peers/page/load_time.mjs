// load()-to-first-token of a model already in the browser's storage (load_time.mjs drives it): one
// load that downloads and stores the file, then per repetition a fresh engine (a new worker, as a
// page reload gets) whose load() reads the stored copy (`version` given, so no request is made),
// then one streamed completion of max_tokens 1. Phases from the page's clock: create (worker and
// wasm start), copy (load() until its last progress event: the stored bytes into wasm memory),
// open (the rest of load(): parsing, weight relayout, context), first token (the request until its
// first chunk: tokenizing and the prompt's evaluation), and a second request's first token (a
// warm engine's) to tell the first request's one-time costs from its work.
import { createEngine } from '/oxidize/index.js';

export async function run({ modelUrl, threads, reps, prompt }) {
  const opts = { version: 'load-time-bench', nCtx: 512 };
  const first = await createEngine({ threads, onLog: () => {} });
  const t0 = performance.now();
  await first.load(modelUrl, opts);
  const download_ms = performance.now() - t0;
  first.terminate();
  const samples = [];
  for (let r = 0; r < reps; r++) {
    const c0 = performance.now();
    const engine = await createEngine({ threads, onLog: () => {} });
    const l0 = performance.now();
    let lastProgress = l0, source = null;
    try {
      const info = await engine.load(modelUrl, { ...opts, onProgress: (p) => { lastProgress = performance.now(); source = p.source; } });
      const l1 = performance.now();
      const stream = await engine.completions.create({ prompt, max_tokens: 1, stream: true, temperature: 0 });
      let f1 = null;
      for await (const chunk of stream) {
        if (f1 === null) f1 = performance.now();
      }
      // The same request again on a different prompt: what the first one cost beyond a warm engine's.
      const s0 = performance.now();
      let s1 = null;
      for await (const chunk of await engine.completions.create({ prompt: `${prompt} a`, max_tokens: 1, stream: true, temperature: 0 })) {
        if (s1 === null) s1 = performance.now();
      }
      samples.push({
        create_ms: l0 - c0, copy_ms: lastProgress - l0, open_ms: l1 - lastProgress, load_ms: l1 - l0,
        first_token_ms: f1 - l1, load_to_first_token_ms: f1 - l0, warm_first_token_ms: s1 - s0, source, info_source: info.source,
        kernels: engine.runtime.kernels, threads: engine.runtime.threads,
      });
    } finally {
      engine.terminate();
    }
  }
  return { download_ms, samples };
}
