// An example consumer of the package, type-checked (tsc --noEmit) against dist/*.d.ts through the
// package's `exports`, as an application importing "@oxidize-llm/web" would be.
import {
  createEngine,
  EngineError,
  type BenchOptions,
  type BenchReport,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatMessage,
  type Completion,
  type ContextSource,
  type EmbeddingsResponse,
  type ModelInfo,
  type RerankResponse,
  type RuntimeInfo,
} from '@oxidize-llm/web';
import type { Request, Response } from '@oxidize-llm/web/protocol';

export async function demo(file: File | null, output: HTMLElement): Promise<void> {
  const engine = await createEngine({ onLog: (level, message) => console.log(level, message) });
  const runtime: RuntimeInfo = engine.runtime;
  console.log(runtime.build, runtime.threads, runtime.reason);
  const fallback: string | null = runtime.fallback;  // why one thread runs, when threads were wanted
  if (fallback !== null) console.warn(fallback);

  const controller = new AbortController();
  let model: ModelInfo;
  try {
    model = await engine.load(file ?? '/models/stories260K.gguf', {
      onProgress: ({ loaded, total, source }) => console.log(source, loaded, total),
      signal: controller.signal,
      nCtx: 512,
    });
  } catch (e) {
    if (e instanceof EngineError && e.code === 'too_large') console.error('model too large:', e.message);
    throw e;
  }
  console.log(model.arch, model.n_vocab, model.n_threads);
  const contextSource: ContextSource = model.n_ctx_source;  // 'requested' here: nCtx was given
  console.log(model.n_ctx, contextSource, model.n_ctx_reason);

  const messages: ChatMessage[] = [
    { role: 'system', content: [{ type: 'text', text: 'You tell short stories.' }] },  // OpenAI's content parts
    { role: 'user', content: 'Tell me a story.' },
  ];
  const stream = await engine.chat.completions.create({ messages, stream: true, max_tokens: 64, temperature: 0.7, seed: 42 });
  for await (const chunk of stream) {
    const c: ChatCompletionChunk = chunk;
    output.textContent += c.choices[0]?.delta.content ?? '';
    if (c.choices[0]?.finish_reason) console.log('tokens/s', c.timings?.tokens_per_second);
  }
  const full: ChatCompletion = await engine.chat.completions.create({ messages, max_tokens: 16, temperature: 0 });
  console.log(full.choices[0]!.message.content, full.usage.completion_tokens);

  const text: Completion = await engine.completions.create({ prompt: 'Once upon a time', max_tokens: 8, stop: ['\n'] });
  console.log(text.choices[0]!.text);
  const textStream = await engine.completions.create({ prompt: [1, 403], stream: true, top_k: 40, top_p: 0.9, min_p: 0.05 });
  setTimeout(() => textStream.abort(), 100);
  for await (const chunk of textStream) console.log(chunk.choices[0]!.text);
  console.log((await textStream.result).finish_reason);

  const ids: number[] = await engine.tokenize('Once upon a time', { addSpecial: true, parseSpecial: false });
  const back: string = await engine.detokenize(ids, { renderSpecial: false });
  const logits: Float32Array | null = await engine.getLogits();
  console.log(back, logits?.length);
  await engine.evaluate([1], { keep: 0 });
  const benchOptions: BenchOptions = { nPrompt: [64], nGen: [16], reps: 3, onProgress: ({ done, total }) => console.log(done, total) };
  const report: BenchReport = await engine.bench(benchOptions);
  console.log(report.markdown, report.records[0]?.avg_ts, report.records[0]?.n_threads === runtime.threads);
  const embedder: ModelInfo = await engine.load('/models/bge-small.gguf', { embeddings: true, pooling: 'cls' });
  const vectors: EmbeddingsResponse = await engine.embeddings.create({ input: ['a', 'b'], encoding_format: 'float' });
  console.log(embedder.embeddings?.n_embd_out, vectors.data[0]!.embedding, vectors.usage.prompt_tokens);
  await engine.load('/models/reranker.gguf', { embeddings: true, pooling: 'rank' });
  const ranked: RerankResponse = await engine.rerank({ query: 'q', documents: ['x', 'y'], top_n: 1, return_documents: true });
  console.log(ranked.results[0]?.relevance_score, ranked.results[0]?.document?.text);
  engine.abort();
  console.log(await engine.cache.list());
  await engine.unload();
  engine.terminate();
}

// The worker protocol is public too, for tooling that talks to the worker directly.
export function describe(message: Request | Response): string {
  return message.type;
}
