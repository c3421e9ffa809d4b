// Embeddings per second in the page (issue #24 item 6), one engine per call: oxidize's browser
// package (engine.embeddings.create, web/dist mounted at /oxidize/) or wllama (createEmbedding,
// mounted at /wllama/). Both load the model for embeddings with the pooling its file names, on
// `threads` threads, and are timed the same way: performance.now() around one call that embeds a
// whole batch (tokenizing, the forward passes, pooling and the worker round trip: what a page waits for).

// Both engines see a context that holds the largest batch in one pass (32 texts of ~30 tokens).
const N_CTX = 2048;

async function openOxidize({ modelUrl, threads }) {
  const { createEngine } = await import('/oxidize/index.js'); // (imported here: one engine need not have the other built)
  // 1 thread: the single-thread build, as wllama uses its single-thread build for n_threads 1.
  const engine = await createEngine({ threads, forceSingleThread: threads === 1, onLog: () => {} });
  await engine.load(modelUrl, { cache: false, embeddings: true, nCtx: N_CTX, nBatch: N_CTX });
  return {
    runtime: { threads: engine.runtime.threads, pooling: engine.model?.embeddings?.pooling ?? null },
    embed: async (input) => {
      const { data } = await engine.embeddings.create({ input });
      return () => data.map((d) => d.embedding);
    },
    close: async () => engine.terminate(),
  };
}

async function openWllama({ modelUrl, threads, maxBatch }) {
  const { Wllama } = await import('/wllama/index.js');
  const wllama = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true, allowOffline: true });
  wllama.setCompat(null); // compat mode loads a build from a CDN; Chromium needs none
  const blob = await (await fetch(modelUrl)).blob();
  // pooling_type left out: the file's (llama.cpp's default). One slot per text of the largest batch,
  // so wllama's server loop can put a whole batch in one decode as oxidize packs it into one pass
  // (its default is 4 slots); a ubatch of the whole context, which non-causal models need per pass.
  await wllama.loadModel([blob], {
    n_threads: threads,
    embeddings: true,
    n_ctx: N_CTX,
    n_batch: N_CTX,
    n_ubatch: N_CTX,
    n_parallel: maxBatch,
    n_gpu_layers: 0,
  });
  // wllama 3.8.1's createEmbedding computes every input of an array (its worker sends one result
  // chunk per input, in the order they finish, each with index 0) but returns only the last chunk's
  // vector. The chunks are kept on their way through the worker proxy (the strings only; parsed
  // after the clock stops) to check them all; their order is not the inputs'.
  let chunks = null;
  const action = wllama.proxy.wllamaAction.bind(wllama.proxy);
  wllama.proxy.wllamaAction = async (name, body) => {
    const result = await action(name, body);
    if (name === 'get_result' && chunks && result.data_json && result.data_json !== 'null') chunks.push(result.data_json);
    return result;
  };
  return {
    runtime: { threads: wllama.getNumThreads(), multiThread: wllama.isMultithread() },
    embed: async (input) => {
      chunks = [];
      await wllama.createEmbedding({ input });
      const got = chunks;
      chunks = null;
      return () => got.flatMap((json) => JSON.parse(json).data.map((d) => d.embedding));
    },
    close: async () => wllama.exit(),
  };
}

// texts: the sentences; batches: batch sizes (each a prefix of texts). Returns, per batch size, the
// milliseconds of each measured call and the last call's vectors (the cross-engine check).
// An engine's embed(input) resolves, when the call has returned, to a function giving the vectors.
export async function run({ engine, modelUrl, threads, texts, batches, reps, warmup }) {
  const maxBatch = Math.max(...batches);
  const e = engine === 'oxidize'
    ? await openOxidize({ modelUrl, threads })
    : await openWllama({ modelUrl, threads, maxBatch });
  try {
    if (e.runtime.threads !== threads) throw new Error(`asked for ${threads} threads, ${engine} runs ${e.runtime.threads}`);
    const results = {};
    for (const n of batches) {
      const input = texts.slice(0, n);
      let vectors = null;
      // Untimed calls first: V8 tiers the wasm up during the first runs.
      for (let i = 0; i < warmup; i++) await e.embed(input);
      const ms = [];
      for (let i = 0; i < reps; i++) {
        const t0 = performance.now();
        const got = await e.embed(input);
        ms.push(performance.now() - t0);
        vectors = got();
        if (vectors.length !== n) throw new Error(`${engine}: ${vectors.length} vectors for ${n} inputs`);
      }
      results[n] = { ms, vectors, n_embd: vectors[0].length };
    }
    return { runtime: { ...e.runtime, coi: self.crossOriginIsolated }, results };
  } finally {
    await e.close();
  }
}
