// oxidize's browser package (web/dist, mounted at /oxidize/) in the page: an engine with `threads`
// threads (the page is cross-origin isolated; 1 thread runs the single-thread build, as wllama runs
// its single-thread mode for n_threads 1), then one completion per
// repetition (nPrompt fixed token ids, nGen greedy tokens, EOS ignored) timed by the engine itself.
// Its tg counts like llama-server's (and so wllama's): nGen tokens over nGen - 1 evaluations after
// the prompt, the first one being sampled from the prompt's logits.
import { createEngine } from '/oxidize/index.js';
import { benchTokens } from './common.mjs';

export async function run({ modelUrl, threads, nPrompt, nGen, reps, warmup }) {
  // 1 thread: the single-thread build, as wllama uses its single-thread build for n_threads 1.
  const engine = await createEngine({ threads, forceSingleThread: threads === 1, onLog: () => {} });
  try {
    const info = await engine.load(modelUrl, { cache: false, n_ctx: nPrompt + nGen + 16, n_batch: 512 });
    const runtime = { ...engine.runtime, coi: self.crossOriginIsolated };
    if (runtime.threads !== threads) throw new Error(`asked for ${threads} threads, the engine runs ${runtime.threads}`);
    const once = async (seed) => {
      const res = await engine.completions.create({
        prompt: benchTokens(nPrompt, info.n_vocab, seed), // token ids: no tokenizer in the timing
        max_tokens: nGen,
        temperature: 0,
        ignore_eos: true,
      });
      const t = res.timings;
      // A BOS shared by consecutive prompts may be reused; anything more would flatter pp.
      if (t.prompt_tokens_cached > 1) throw new Error(`oxidize reused ${t.prompt_tokens_cached} cached prompt tokens`);
      if (t.generated_tokens !== nGen) throw new Error(`oxidize generated ${t.generated_tokens} tokens, expected ${nGen}`);
      return { pp: t.prompt_tokens_per_second, tg: t.tokens_per_second, prompt_n: t.prompt_tokens };
    };
    for (let i = 0; i < warmup; i++) await once(1000 + i); // V8 tiers the wasm up during the first runs
    const samples = [];
    for (let i = 0; i < reps; i++) samples.push(await once(i));
    return { runtime, samples };
  } finally {
    engine.terminate();
  }
}
