// llama.cpp through node-llama-cpp, one model and one thread count per process (so its memory is that
// run's): `node --expose-gc llamacpp_child.mjs '{"model":...,"threads":1,"nPrompt":128,"nGen":64,"reps":3,
// "warmup":1}'` prints one JSON line. pp: one batch of nPrompt tokens (BOS + fixed ids) from an empty
// context; tg: nGen single-token evaluations from an empty context, as llama-bench does. Times are
// llama.cpp's own perf counters (prompt eval / eval time: evaluation only); wall-clock times, which add
// node-llama-cpp's per-call JS overhead and its greedy pick, are kept beside them.
import fs from 'node:fs';

// VmHWM (peak) or VmRSS (now) of this process, in bytes.
function statusBytes(key) {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) * 1024 : null;
}

// llama_perf_context_print lines -> {promptMs, promptN, evalMs, evalN}.
function parsePerf(lines) {
  const out = {};
  for (const l of lines) {
    let m = l.match(/prompt eval time =\s*([\d.]+) ms \/\s*(\d+) tokens/);
    if (m) [out.promptMs, out.promptN] = [Number(m[1]), Number(m[2])];
    m = l.match(/\beval time =\s*([\d.]+) ms \/\s*(\d+) runs/);
    if (m && !l.includes('prompt eval')) [out.evalMs, out.evalN] = [Number(m[1]), Number(m[2])];
  }
  return out;
}

// Fixed in-vocabulary ids >= 3 (not BOS/EOS/UNK), from the same kind of LCG as oxidize bench.
function benchTokens(n, nVocab, seed) {
  const ids = [];
  let x = (12345 + seed * 7919) >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    ids.push(3 + ((x >>> 8) % Math.max(nVocab - 3, 1)));
  }
  return ids;
}

const args = JSON.parse(process.argv[2]);
const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
const perfLines = [];
const llama = await getLlama({
  gpu: false,
  build: 'never', // the prebuilt CPU binary of @node-llama-cpp/linux-x64; never compile or download
  maxThreads: 0, // no cap: a context's `threads` is then exactly the number used
  logLevel: LlamaLogLevel.info,
  logger: (level, message) => {
    if (message.includes('llama_perf_context_print')) perfLines.push(message);
  },
});
// V8 keeps garbage from node-llama-cpp's per-call JS (tens of MB over a tg run) until it collects,
// which would be charged to llama.cpp: collect (run.mjs starts us with --expose-gc) before reading RSS.
const collect = () => globalThis.gc?.();
collect();
const baselineRss = statusBytes('VmRSS'); // node + the llama.cpp library, before the model
const model = await llama.loadModel({ modelPath: args.model, gpuLayers: 0 });
const meta = model.fileInfo.metadata;
const nVocab = meta?.tokenizer?.ggml?.tokens?.length ?? 256;
const contextSize = args.nPrompt + args.nGen;
const context = await model.createContext({
  contextSize,
  batchSize: Math.max(args.nPrompt, 1),
  threads: args.threads,
  sequences: 1,
  performanceTracking: true,
});
const sequence = context.getSequence();
const gen = { generateNext: { token: true } }; // forces the logits of that position (and a greedy pick)

async function timed(fn) {
  await context.printTimings(); // printing resets llama.cpp's counters: start from zero
  perfLines.length = 0;
  await sequence.clearHistory();
  const t0 = performance.now();
  await fn();
  const wallMs = performance.now() - t0;
  perfLines.length = 0;
  await context.printTimings();
  return { wallMs, perf: parsePerf(perfLines) };
}

async function pp(seed) {
  const ids = benchTokens(args.nPrompt, nVocab, seed);
  if (model.tokens.bos !== null && model.tokens.bos !== undefined) ids[0] = model.tokens.bos;
  const input = [...ids.slice(0, -1), [ids[ids.length - 1], gen]];
  const { wallMs, perf } = await timed(() => sequence.controlledEvaluate(input));
  if (perf.promptN !== args.nPrompt) throw new Error(`llama.cpp counted ${perf.promptN} prompt tokens, expected ${args.nPrompt}`);
  return { ts: (args.nPrompt * 1000) / perf.promptMs, wall_ts: (args.nPrompt * 1000) / wallMs };
}

async function tg(seed) {
  const ids = benchTokens(args.nGen, nVocab, seed);
  const { wallMs, perf } = await timed(async () => {
    for (const id of ids) await sequence.controlledEvaluate([[id, gen]]);
  });
  // llama.cpp files the first single-token batch of an empty context under "prompt eval".
  const evalMs = (perf.evalMs ?? 0) + (perf.evalN === args.nGen ? 0 : perf.promptMs ?? 0);
  const evalN = (perf.evalN ?? 0) + (perf.evalN === args.nGen ? 0 : perf.promptN ?? 0);
  if (evalN !== args.nGen) throw new Error(`llama.cpp counted ${evalN} evaluations, expected ${args.nGen}`);
  return { ts: (args.nGen * 1000) / evalMs, wall_ts: (args.nGen * 1000) / wallMs };
}

const results = [];
for (const [test, fn] of [[`pp${args.nPrompt}`, pp], [`tg${args.nGen}`, tg]]) {
  for (let i = 0; i < args.warmup; i++) await fn(1000 + i);
  const samples = [];
  for (let i = 0; i < args.reps; i++) {
    samples.push(await fn(i));
    collect(); // outside the timed region
  }
  results.push({ test, samples });
}
const info = {
  version: JSON.parse(fs.readFileSync(new URL('../node_modules/node-llama-cpp/package.json', import.meta.url), 'utf8')).version,
  system: llama.systemInfo,
  flash_attention: context.flashAttention,
  threads: context.currentThreads,
};
collect();
const rss = { rss_after: statusBytes('VmRSS'), peak_rss: statusBytes('VmHWM'), baseline_rss: baselineRss };
await context.dispose();
await model.dispose();
process.stdout.write(JSON.stringify({ info, results, ...rss }) + '\n');
