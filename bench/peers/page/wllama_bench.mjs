// wllama (llama.cpp compiled to wasm) in the page: load the model with n_threads threads, then time
// one completion per repetition (a prompt of about nPrompt tokens, nGen greedy tokens, EOS ignored)
// from llama.cpp's own timings (prompt_ms / predicted_ms: evaluation only, no JS round trips).
import { Wllama } from '/wllama/index.js';
import { benchText } from './common.mjs';

export async function run({ modelUrl, threads, nPrompt, nGen, reps, warmup, depths = [0] }) {
  const wllama = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { suppressNativeLog: true, allowOffline: true });
  wllama.setCompat(null); // compat mode loads a build from a CDN; Chromium needs none
  const blob = await (await fetch(modelUrl)).blob();
  await wllama.loadModel([blob], {
    n_threads: threads,
    n_ctx: Math.max(nPrompt, ...depths) + nGen + 64,
    n_batch: 512,
    n_gpu_layers: 0,
  });
  const runtime = { multiThread: wllama.isMultithread(), threads: wllama.getNumThreads(), coi: self.crossOriginIsolated };

  // wllama 3.8.1 rejects token-array prompts (and its wasm dies on them), so the prompt is text and
  // its length in tokens is calibrated from the prompt_n llama.cpp reports (BOS included).
  const complete = async (text, maxTokens) => {
    const res = await wllama.createCompletion({
      prompt: text,
      max_tokens: maxTokens,
      temperature: 0,
      ignore_eos: true,
      cache_prompt: false,
    });
    if (!res.timings) throw new Error('wllama returned no timings');
    return res.timings;
  };
  // Words of bench text that make `tokens` prompt tokens.
  const calibrate = async (tokens) => {
    let words = tokens;
    for (let i = 0; i < 4; i++) {
      const t = await complete(benchText(words, 100 + i), 1);
      if (t.prompt_n === tokens) break;
      words = Math.max(1, words + Math.round(((tokens - t.prompt_n) * words) / t.prompt_n));
    }
    return words;
  };
  const nWords = await calibrate(nPrompt);

  const once = async (seed) => {
    const t = await complete(benchText(nWords, seed), nGen);
    // A BOS shared by consecutive prompts may be reused; anything more would flatter pp.
    if (t.cache_n > 1) throw new Error(`wllama reused ${t.cache_n} cached prompt tokens`);
    if (t.predicted_n !== nGen) throw new Error(`wllama generated ${t.predicted_n} tokens, expected ${nGen}`);
    return { pp: (t.prompt_n * 1000) / t.prompt_ms, tg: (t.predicted_n * 1000) / t.predicted_ms, prompt_n: t.prompt_n };
  };
  for (let i = 0; i < warmup; i++) await once(1000 + i); // V8 tiers the wasm up during the first runs
  const samples = [];
  for (let i = 0; i < reps; i++) samples.push(await once(i));
  const tests = {
    [`pp${nPrompt}`]: { samples: samples.map((x) => x.pp) },
    [`tg${nGen}`]: { samples: samples.map((x) => x.tg) },
  };
  // At a depth: a prompt of about `depth` tokens, then nGen tokens, whose decode rate is the
  // "tg @ d" cell (llama.cpp's own predicted_ms). A pp at a depth cannot be told apart from the
  // depth's own prompt here, so wllama has no "pp @ d" cells.
  for (const depth of depths.filter((d) => d > 0)) {
    const words = await calibrate(depth);
    const tg = [];
    for (let i = 0; i < warmup + reps; i++) {
      const t = await complete(benchText(words, 2000 + i), nGen);
      if (t.predicted_n !== nGen) throw new Error(`wllama generated ${t.predicted_n} tokens, expected ${nGen}`);
      if (i >= warmup) tg.push((t.predicted_n * 1000) / t.predicted_ms);
    }
    tests[`tg${nGen} @ d${depth}`] = { samples: tg };
  }
  await wllama.exit();
  return { runtime, samples, tests };
}
