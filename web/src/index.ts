// oxidize's browser API (main thread). Everything runs in a Web Worker (worker.ts); this side only
// posts messages and turns the answers into promises and async iterators, OpenAI-style:
//   const engine = await createEngine();
//   await engine.load('/models/stories260K.gguf', { onProgress: (p) => console.log(p.loaded, p.total) });
//   for await (const chunk of await engine.chat.completions.create({ messages, stream: true }))
//     out.textContent += chunk.choices[0]?.delta.content ?? '';
//   const { records, markdown } = await engine.bench({ nPrompt: [512], nGen: [128], reps: 5 });  // oxidize bench
import { EngineError } from './errors.js';
import {
  checkBoolean, checkMessages, refuseAborted, refuseRenamed, refuseUnknown, requestObject, tokenIds,
  RENAMED_DETOKENIZE_OPTIONS, RENAMED_LOAD_OPTIONS, RENAMED_TOKENIZE_OPTIONS,
} from './request_checks.js';
import { explainWorkerFailure, startWorker } from './assets.js';
import type {
  BenchParams,
  BenchRecord,
  BenchReport,
  AssistantMessage,
  ChatMessage,
  EmbeddingsParams,
  EmbeddingsResponse,
  FinishReason,
  GenerationResult,
  LoadParams,
  MessageDelta,
  ModelInfo,
  ModelSource,
  PromptSpec,
  RequestBody,
  RerankParams,
  RerankResponse,
  RequestType,
  Response,
  ResultMap,
  RuntimeInfo,
  SamplingParams,
  StorageBackend,
  StoredCheck,
  StoredModel,
  TokenEvent,
  ToolParams,
} from './protocol.js';
import { requestPersistence } from './storage/persist.js';

export { EngineError } from './errors.js';
export type {
  AssistantMessage,
  BenchRecord,
  BenchReport,
  ChatMessage,
  ChatRole,
  TextContentPart,
  FunctionTool,
  MessageDelta,
  ToolCall,
  ToolChoice,
  ToolParams,
  ChatTemplateInfo,
  ChatTemplateOrigin,
  ContextSource,
  EmbeddingsParams,
  EmbeddingsResponse,
  ErrorCode,
  FinishReason,
  GenerationResult,
  KvCacheType,
  ModelInfo,
  PoolingType,
  RerankParams,
  RerankResponse,
  RuntimeInfo,
  SamplingParams,
  StorageBackend,
  StoredCheck,
  StoredModel,
  TokenAlternative,
  TokenEvent,
} from './protocol.js';

export interface EngineOptions {
  /**
   * Folder holding oxidize-mt.* and oxidize-st.* (dist/wasm/ copied elsewhere; another origin must
   * allow CORS); default: the package's own, which bundlers find and emit.
   */
  wasmBaseUrl?: string | URL;
  /** The worker script (dist/worker.js served elsewhere); default: the package's own, which bundlers find and bundle. */
  workerUrl?: string | URL;
  /**
   * Threads of the multi-thread build, the engine worker's own included (1 runs the multi-thread
   * build on that worker alone). 0 or absent: navigator.hardwareConcurrency up to 4, half of it
   * above that (at least 4, at most 8). A count above navigator.hardwareConcurrency (or 64) is
   * clamped to it, with a warning through `onLog`;
   * `engine.runtime.threads` is the count that runs. Anything but a non-negative integer rejects with
   * EngineError "invalid_argument". Ignored by the single-thread build (always 1 thread).
   */
  threads?: number;
  /** Use the single-thread build even when the page is cross-origin isolated. */
  forceSingleThread?: boolean;
  /**
   * Load the copy of the module whose hot kernels use relaxed SIMD (oxidize-*.relaxed.wasm) where the
   * browser validates it (Chromium, Firefox); it computes the same bits, faster. Default true; false
   * keeps the SIMD128 module. `engine.runtime.kernels` says which runs ("simd128+relaxed" / "simd128").
   */
  relaxedSimd?: boolean;
  /**
   * Where downloaded models are stored: 'auto' (default) is the Origin Private File System where the
   * browser has it, the Cache API otherwise; 'opfs' or 'cache-api' use that one only.
   */
  storage?: StorageBackend | 'auto';
  /** Where the worker's notes go (which build and why, cache problems); default: console. */
  onLog?: (level: 'info' | 'warn', message: string) => void;
}

export interface LoadProgress {
  loaded: number;
  /** 0 when the server did not announce a length. */
  total: number;
  source: ModelInfo['source'];
}

export interface LoadOptions extends Omit<LoadParams, 'sha256'> {
  onProgress?: (progress: LoadProgress) => void;
  signal?: AbortSignal;
  /**
   * URL sources: keep the file in the browser's storage (OPFS, else the Cache API) and load it from
   * there next time (default true). A stored copy is revalidated with a conditional request (ETag /
   * Last-Modified; a changed file is downloaded again, an unreachable server keeps the stored copy)
   * unless `version` is given; a download cut short resumes (HTTP Range) from the bytes stored.
   * false: neither reads nor writes the store.
   */
  cache?: boolean;
  /**
   * URL sources: your version of the file. A stored copy downloaded as this version is used without
   * asking the server; one of another version (or none) is downloaded again.
   */
  version?: string;
  /**
   * Expected SHA-256 (hex) of the file, checked on the bytes as they arrive, before parsing; a split
   * model given by URL takes one per shard. A stored copy is not read twice to check it: the SHA-256
   * recorded when it was downloaded is compared with this one (another is downloaded again); `verify`
   * hashes the stored bytes themselves.
   */
  sha256?: string | string[];
  /**
   * URL sources: hash the stored copy again before using it and compare it with the SHA-256
   * recorded when it was downloaded (and `sha256`, if given); a damaged copy is downloaded again.
   * Default false: a load from the store trusts its record (complete, and its size the stored
   * file's), which spares reading the model twice (a 770 MB model took 9.5 s more to hash than to
   * load), so a byte changed on disk after the download is not noticed. engine.cache.verify(url)
   * does the same check without loading.
   */
  verify?: boolean;
  /** Blob / ArrayBuffer sources: the name used in messages (a File's own name otherwise). */
  name?: string;
}

/** Every LoadOptions key; load() refuses any other by name. */
const LOAD_OPTIONS = [
  'nCtx', 'nBatch', 'cacheTypeK', 'cacheTypeV', 'swaFull', 'sha256', 'chatTemplate', 'embeddings', 'pooling',
  'onProgress', 'signal', 'cache', 'version', 'verify', 'name',
] as const satisfies readonly (keyof LoadOptions)[];
// The list and the type name the same keys (a compile error names a key one of them lacks).
const loadOptionsListed: Record<Exclude<keyof LoadOptions, (typeof LOAD_OPTIONS)[number]>, never> = {};
void loadOptionsListed;

/** A URL (relative ones resolve against the page), a File/Blob, or bytes. An ArrayBuffer is
 * transferred to the worker (it is detached here) so the model is never held twice. A split GGUF
 * (NAME-00001-of-0000N.gguf, llama.cpp's gguf-split) loads from its first shard's URL (the others
 * are found by name) or from the list of its shards' URLs, in order. */
export type ModelInput = string | URL | (string | URL)[] | Blob | ArrayBuffer;

interface RequestCommon extends SamplingParams {
  /**
   * Stops the generation within one token: a stream yields no content after the abort, only its
   * last chunk with finish_reason "abort". Already aborted: create() rejects with "aborted" at once.
   */
  signal?: AbortSignal;
  /** Accepted for OpenAI compatibility; the loaded model is always used. */
  model?: string;
  /** Choices to generate (default 1): each one after the last, from the prompt evaluated once. */
  n?: number;
  /** include_usage: false leaves usage out of the last chunk (default: included). */
  stream_options?: { include_usage?: boolean };
  /** Accepted for OpenAI compatibility (an end-user id); not used. */
  user?: string;
}
export interface ChatCompletionRequestStreaming extends RequestCommon, ToolParams {
  messages: ChatMessage[];
  stream: true;
}
export interface ChatCompletionRequestNonStreaming extends RequestCommon, ToolParams {
  messages: ChatMessage[];
  stream?: false | null;
}
export type ChatCompletionRequest = ChatCompletionRequestStreaming | ChatCompletionRequestNonStreaming;

export interface CompletionRequestStreaming extends RequestCommon {
  prompt: string | number[];
  stream: true;
}
export interface CompletionRequestNonStreaming extends RequestCommon {
  prompt: string | number[];
  stream?: false | null;
}
export type CompletionRequest = CompletionRequestStreaming | CompletionRequestNonStreaming;

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Not in OpenAI's API: where the time went. */
export interface Timings {
  prompt_tokens: number;
  prompt_tokens_cached: number;
  prompt_ms: number;
  generated_tokens: number;
  generate_ms: number;
  prompt_tokens_per_second: number;
  tokens_per_second: number;
  threads: number;
}

/** OpenAI's chat logprobs: one entry per generated token (requests with logprobs: true). */
export interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}
export interface ChatLogprobs {
  content: ChatTokenLogprob[];
  refusal: null;
}
/** OpenAI's legacy completions logprobs (logprobs: N); text_offset counts UTF-8 bytes of the output. */
export interface CompletionLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    /** With tools: reasoning_content and tool_calls deltas too (MessageDelta). */
    delta: { role?: 'assistant' } & MessageDelta;
    finish_reason: FinishReason | null;
    logprobs: ChatLogprobs | null;
  }[];
  /** Set on the last chunk only. */
  usage?: CompletionUsage;
  timings?: Timings;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    /** content null, tool_calls and reasoning_content: with tools, as OpenAI / llama-server. */
    message: AssistantMessage;
    finish_reason: FinishReason;
    logprobs: ChatLogprobs | null;
  }[];
  usage: CompletionUsage;
  timings: Timings;
}

export interface CompletionChunk {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: { index: number; text: string; finish_reason: FinishReason | null; logprobs: CompletionLogprobs | null }[];
  usage?: CompletionUsage;
  timings?: Timings;
}

export interface Completion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: { index: number; text: string; finish_reason: FinishReason; logprobs: CompletionLogprobs | null }[];
  usage: CompletionUsage;
  timings: Timings;
}

/**
 * engine.bench(): `oxidize bench` in the browser. Defaults are the CLI's (`-p 512 -n 128 -r 5`).
 * Token counts are integers in [0, 2^20]; at least one must be above 0.
 */
export interface BenchOptions {
  /** Prompt sizes, as `oxidize bench -p`: one pp test per entry (0 entries skipped). Default [512]. */
  nPrompt?: number[];
  /** Generation sizes, as `-n`: one tg test per entry (0 entries skipped). Default [128]. */
  nGen?: number[];
  /** Tokens in the context before each test, as `-d` (the test named "tg64 @ d2048"). Default [0]. */
  nDepth?: number[];
  /** Timed repetitions of each test, 1..1000, as `-r`. Default 5. */
  reps?: number;
  /** One untimed run of each test first (default true; `--no-warmup` natively). */
  warmup?: boolean;
  /**
   * The browser engine benches the thread count it runs (`engine.runtime.threads`) and no other:
   * its pthread pool is sized for that count when the engine starts. Given, it must equal that
   * count, or bench() rejects with "invalid_argument"; to bench another count, create an engine
   * with `createEngine({ threads })`.
   */
  threads?: number;
  /** Stops the run after the test in progress; bench() then rejects with "aborted". */
  signal?: AbortSignal;
  /** Called after each test with its rows (and how many of the tests have run). */
  onProgress?: (progress: BenchProgress) => void;
}

export interface BenchProgress {
  records: BenchRecord[];
  done: number;
  total: number;
}

/** An async iterable of chunks; breaking out of the loop or calling abort() stops generation. */
export interface ChunkStream<T> extends AsyncIterable<T> {
  abort(): void;
  /** Resolves with the whole result once the stream has ended. */
  readonly result: Promise<GenerationResult>;
}

// ---- transport ------------------------------------------------------------------------------

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: EngineError) => void;
  onProgress?: (p: LoadProgress) => void;
  onDelta?: (events: TokenEvent[], messageDeltas?: MessageDelta[]) => void;
  onBench?: (progress: BenchProgress) => void;
}

class Transport {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: EngineError | null = null;

  constructor(
    private readonly worker: Worker,
    private readonly onLog: (level: 'info' | 'warn', message: string) => void,
    workerUrl: string | null,
  ) {
    worker.onmessage = (event: MessageEvent<Response>) => this.receive(event.data);
    worker.onerror = (event: Event) => {
      event.preventDefault();
      // An error thrown in the worker has a message; a script that did not load has none (assets.ts finds why).
      if (event instanceof ErrorEvent && event.message) {
        this.fail(new EngineError('internal', `the engine worker failed: ${event.message}`));
        return;
      }
      void explainWorkerFailure(workerUrl).then((why) => this.fail(new EngineError('io', why)));
    };
  }

  send<T extends RequestType>(
    body: Extract<RequestBody, { type: T }>,
    handlers: Omit<Pending, 'resolve' | 'reject'> = {},
    transfer: Transferable[] = [],
  ): { id: number; promise: Promise<ResultMap[T]> } {
    const id = this.nextId++;
    const promise = new Promise<ResultMap[T]>((resolve, reject) => {
      if (this.dead !== null) {
        reject(this.dead);
        return;
      }
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, ...handlers });
      this.worker.postMessage({ ...body, id }, transfer);
    });
    return { id, promise };
  }

  abort(target: number): void {
    if (this.dead === null && this.pending.has(target)) {
      this.worker.postMessage({ id: this.nextId++, type: 'abort', target });
    }
  }

  fail(error: EngineError): void {
    this.dead = error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  private receive(msg: Response): void {
    if (msg.type === 'log') {
      this.onLog(msg.level, msg.message);
      return;
    }
    const p = this.pending.get(msg.id);
    if (p === undefined) return;  // an abort's own answer
    switch (msg.type) {
      case 'progress':
        p.onProgress?.({ loaded: msg.loaded, total: msg.total, source: msg.source });
        break;
      case 'delta':
        p.onDelta?.(msg.events, msg.message_deltas);
        break;
      case 'bench_progress':
        p.onBench?.({ records: msg.records, done: msg.done, total: msg.total });
        break;
      case 'result':
        this.pending.delete(msg.id);
        p.resolve(msg.value);
        break;
      case 'error':
        this.pending.delete(msg.id);
        p.reject(EngineError.fromWire(msg.error));
        break;
    }
  }
}

// ---- streams --------------------------------------------------------------------------------

/** A push queue read by one async iterator. */
class Channel<T> implements AsyncIterator<T> {
  private readonly items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | null = null;
  private failer: ((e: unknown) => void) | null = null;
  private closed = false;
  private error: unknown = null;

  constructor(private readonly onReturn: () => void) {}

  push(item: T): void {
    if (this.waiter !== null) {
      const w = this.waiter;
      this.waiter = this.failer = null;
      w({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  close(error: unknown = null): void {
    this.closed = true;
    this.error = error;
    if (this.waiter !== null) {
      const w = this.waiter, f = this.failer!;
      this.waiter = this.failer = null;
      if (error !== null) f(error);
      else w({ value: undefined, done: true });
    }
  }

  /** Forgets the items not read yet (a stopped stream's content). */
  discard(): void {
    this.items.length = 0;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.closed) return this.error !== null ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.failer = reject;
    });
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.closed) this.onReturn();
    this.closed = true;
    this.items.length = 0;
    return Promise.resolve({ value: undefined, done: true });
  }
}

function timings(r: GenerationResult): Timings {
  return {
    prompt_tokens: r.n_prompt,
    prompt_tokens_cached: r.n_prompt_cached,
    prompt_ms: r.prompt_ms,
    generated_tokens: r.n_generated,
    generate_ms: r.generate_ms,
    prompt_tokens_per_second: r.prompt_ms > 0 ? (r.n_prompt * 1000) / r.prompt_ms : 0,
    tokens_per_second: r.generate_ms > 0 ? (r.n_generated * 1000) / r.generate_ms : 0,
    threads: r.threads,
  };
}

/** The prompt counted once (later choices reuse it from the cache), the completions of every choice. */
function usageOf(rs: GenerationResult[]): CompletionUsage {
  const prompt = rs[0].n_prompt + rs[0].n_prompt_cached;
  const completion = rs.reduce((sum, r) => sum + r.n_generated, 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

// The request's own fields, handled here; every other key goes to the engine, which implements it
// or refuses it by name (wasm/generate_options.cpp).
const REQUEST_KEYS = new Set(['signal', 'model', 'messages', 'prompt', 'stream', 'stream_options', 'n', 'user']);

function samplingOf(req: RequestCommon, seedOffset = 0): SamplingParams {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req)) {
    if (REQUEST_KEYS.has(k) || v === undefined || v === null) continue;
    out[k] = v;
  }
  if (seedOffset > 0 && typeof out.seed === 'number' && out.seed >= 0) out.seed = (out.seed + seedOffset) % 4294967295;
  return out as SamplingParams;
}

// Logprobs: asked for with chat's logprobs: true or completions' logprobs: N; the alternatives per
// token are top_logprobs (chat) or N (completions). The engine checked the values.
function wantsLogprobs(req: RequestCommon): boolean {
  return req.logprobs === true || typeof req.logprobs === 'number';
}
function topLogprobsOf(req: RequestCommon): number {
  return typeof req.logprobs === 'number' ? req.logprobs : (req.top_logprobs ?? 0);
}
function chatLogprobs(events: TokenEvent[], n: number): ChatLogprobs {
  return {
    content: events.map((e) => ({
      token: e.piece ?? '', logprob: e.logprob ?? 0, bytes: e.bytes ?? [],
      top_logprobs: (e.top ?? []).slice(0, n).map((t) => ({ token: t.piece, logprob: t.logprob, bytes: t.bytes })),
    })),
    refusal: null,
  };
}
// offset: the text_offset of the first event, advanced past them (a stream continues it).
function completionLogprobs(events: TokenEvent[], n: number, offset: { at: number }): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for (const e of events) {
    out.tokens.push(e.piece ?? '');
    out.token_logprobs.push(e.logprob ?? 0);
    const top: Record<string, number> = {};
    for (const t of (e.top ?? []).slice(0, n)) if (!(t.piece in top)) top[t.piece] = t.logprob;
    out.top_logprobs.push(top);
    out.text_offset.push(offset.at);
    offset.at += (e.bytes ?? []).length;
  }
  return out;
}

/** A request object at all, and its signal not already aborted (then nothing is started). */
function checkRequest(req: unknown, what: string): void {
  requestObject(req, what);
  refuseAborted((req as RequestCommon).signal, what);
}

/** n (OpenAI): how many choices; each is generated after the previous one from the cached prompt. */
function choicesOf(req: RequestCommon): number {
  const n = req.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 128) {
    throw new EngineError('invalid_argument', `n: ${String(n)} is not an integer in [1, 128]`);
  }
  return n;
}

const MAX_BENCH_TOKENS = 1 << 20;  // the native CLI's bounds (native/cmd_bench.cpp)
const MAX_BENCH_REPS = 1000;

/** Checks engine.bench() options here, so a mistake names the option; the wasm side checks again. */
function benchParams(options: BenchOptions): BenchParams {
  const sizes = (name: 'nPrompt' | 'nGen' | 'nDepth', fallback: number[]): number[] => {
    const v = options[name] ?? fallback;
    if (!Array.isArray(v)) throw new EngineError('invalid_argument', `bench: ${name} must be an array of token counts, got ${String(v)}`);
    v.forEach((n, i) => {
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_BENCH_TOKENS) {
        throw new EngineError('invalid_argument', `bench: ${name}[${i}] = ${String(n)} is not a token count in [0, ${MAX_BENCH_TOKENS}]`);
      }
    });
    return Array.from(v);
  };
  const n_prompt = sizes('nPrompt', [512]);
  const n_gen = sizes('nGen', [128]);
  const n_depth = sizes('nDepth', [0]);
  if (n_depth.length === 0) throw new EngineError('invalid_argument', 'bench: nDepth holds no depth');
  if (![...n_prompt, ...n_gen].some((n) => n > 0)) {
    throw new EngineError('invalid_argument', 'bench: nothing to run (nPrompt and nGen hold no size above 0)');
  }
  const reps = options.reps ?? 5;
  if (typeof reps !== 'number' || !Number.isInteger(reps) || reps < 1 || reps > MAX_BENCH_REPS) {
    throw new EngineError('invalid_argument', `bench: reps = ${String(reps)} is not a repetition count in [1, ${MAX_BENCH_REPS}]`);
  }
  const threads = options.threads ?? null;
  if (threads !== null && (typeof threads !== 'number' || !Number.isSafeInteger(threads) || threads < 1)) {
    throw new EngineError('invalid_argument', `bench: threads must be a positive integer, got ${String(threads)}`);
  }
  return { n_prompt, n_gen, n_depth, repetitions: reps, warmup: options.warmup ?? true, threads };
}

let completionCounter = 0;

// ---- the engine -----------------------------------------------------------------------------

export class Engine {
  /** Which wasm build runs, with how many threads, and why. */
  readonly runtime: RuntimeInfo;
  readonly chat: {
    completions: {
      create(request: ChatCompletionRequestStreaming): Promise<ChunkStream<ChatCompletionChunk>>;
      create(request: ChatCompletionRequestNonStreaming): Promise<ChatCompletion>;
      create(request: ChatCompletionRequest): Promise<ChunkStream<ChatCompletionChunk> | ChatCompletion>;
    };
  };
  readonly completions: {
    create(request: CompletionRequestStreaming): Promise<ChunkStream<CompletionChunk>>;
    create(request: CompletionRequestNonStreaming): Promise<Completion>;
    create(request: CompletionRequest): Promise<ChunkStream<CompletionChunk> | Completion>;
  };
  /**
   * OpenAI's embeddings API over a model loaded with { embeddings: true }: one vector per input,
   * pooled and L2-normalised as llama.cpp's server returns them. Rejects with EngineError naming
   * the problem (empty input, an input longer than n_ctx without truncate, a model loaded for
   * reranking or without embeddings).
   */
  readonly embeddings: {
    create(request: EmbeddingsParams): Promise<EmbeddingsResponse>;
  };
  /** The models this origin stored (OPFS or the Cache API; EngineOptions.storage). */
  readonly cache: {
    /** Every stored file, complete or cut short, with its size, validators and SHA-256. */
    list(): Promise<StoredModel[]>;
    /** Removes the stored copy of one file (each shard of a split model is a file). */
    delete(url: string | URL): Promise<void>;
    /**
     * Hashes the stored copy of one file again and compares it with the SHA-256 recorded at its
     * download (loads trust that record unless LoadOptions.verify is given); a copy that does not
     * match, or cannot be read, is deleted (ok: false), so the next load downloads it again.
     * Rejects with "invalid_argument" when nothing, or only a download cut short, is stored for it.
     */
    verify(url: string | URL): Promise<StoredCheck>;
    clear(): Promise<void>;
    /** Asks the browser to keep this origin's storage under pressure (load() asks too); whether it does. */
    persist(): Promise<boolean>;
  };

  /** Requests abort() stops: generations and benchmarks. */
  private readonly stoppable = new Set<number>();
  /** Marks each running stream stopped (no more content chunks); see stream(). */
  private readonly streamStops = new Set<() => void>();
  private modelInfo: ModelInfo | null = null;

  /** Use createEngine(). */
  constructor(private readonly transport: Transport, private readonly worker: Worker, runtime: RuntimeInfo) {
    this.runtime = runtime;
    // async: a bad request rejects, never throws synchronously.
    const chatCreate = async (req: ChatCompletionRequest) => this.createChat(req);
    const textCreate = async (req: CompletionRequest) => this.createCompletion(req);
    this.chat = { completions: { create: chatCreate as Engine['chat']['completions']['create'] } };
    this.completions = { create: textCreate as Engine['completions']['create'] };
    this.embeddings = {
      create: async (params) => {
        requestObject(params, 'embeddings.create()');
        return this.transport.send({ type: 'embeddings', params }).promise;
      },
    };
    this.cache = {
      list: () => this.transport.send({ type: 'cache', action: { op: 'list' } }).promise,
      delete: async (url) => {
        await this.transport.send({ type: 'cache', action: { op: 'delete', url: new URL(url, location.href).href } }).promise;
      },
      clear: async () => {
        await this.transport.send({ type: 'cache', action: { op: 'clear' } }).promise;
      },
      verify: async (url) => this.transport.send({ type: 'verify_stored', url: new URL(url, location.href).href }).promise,
      persist: requestPersistence,
    };
  }

  /**
   * Relevance of each document to the query (llama-server's /v1/rerank) with a reranker loaded as
   * { embeddings: true, pooling: 'rank' }: results by descending relevance_score, the best top_n.
   */
  async rerank(params: RerankParams): Promise<RerankResponse> {
    requestObject(params, 'rerank()');
    return this.transport.send({ type: 'rerank', params }).promise;
  }

  /** The loaded model, or null. */
  get model(): ModelInfo | null {
    return this.modelInfo;
  }

  /**
   * Loads a GGUF model, replacing the current one. Rejects with EngineError: "io" (download),
   * "invalid_file" (malformed, or sha256 mismatch), "unsupported" (architecture), "too_large" (does
   * not fit in wasm memory, or nCtx too large for memory, with the sizes), "aborted" (at once for
   * an already-aborted signal). After an error the previous model is still loaded and usable (see
   * `model`), unless the new file did not fit in memory beside it: only then was it unloaded first.
   */
  async load(input: ModelInput, options: LoadOptions = {}): Promise<ModelInfo> {
    refuseRenamed(options, RENAMED_LOAD_OPTIONS, 'load()');
    refuseUnknown(options, LOAD_OPTIONS, 'load()');
    refuseAborted(options.signal, 'load()');
    const params: LoadParams = {};
    if (options.nCtx !== undefined) params.nCtx = options.nCtx;
    if (options.nBatch !== undefined) params.nBatch = options.nBatch;
    if (options.cacheTypeK !== undefined) params.cacheTypeK = options.cacheTypeK;
    if (options.cacheTypeV !== undefined) params.cacheTypeV = options.cacheTypeV;
    if (options.swaFull !== undefined) params.swaFull = options.swaFull;
    if (typeof options.sha256 === 'string') params.sha256 = options.sha256;
    else if (options.sha256 !== undefined && !(typeof input === 'string' || input instanceof URL || Array.isArray(input))) {
      throw new EngineError('invalid_argument', 'sha256 for a File, Blob or ArrayBuffer is one string (a list is for the shards of a split model by URL)');
    }
    if (options.chatTemplate !== undefined) params.chatTemplate = options.chatTemplate;
    if (options.embeddings !== undefined) params.embeddings = options.embeddings;
    if (options.pooling !== undefined) params.pooling = options.pooling;
    let source: ModelSource;
    const transfer: Transferable[] = [];
    if (typeof input === 'string' || input instanceof URL || Array.isArray(input)) {
      source = urlSource(input, options);
      if (source.cache) void requestPersistence();
    } else if (input instanceof Blob) {
      const name = options.name ?? (input instanceof File ? input.name : 'model.gguf');
      source = { kind: 'blob', blob: input, name };
    } else if (input instanceof ArrayBuffer) {
      source = { kind: 'buffer', buffer: input, name: options.name ?? 'model.gguf' };
      transfer.push(input);
    } else {
      throw new EngineError('invalid_argument', 'load() takes a URL, a File/Blob or an ArrayBuffer');
    }
    this.abort();  // a running generation would hold the worker's queue
    const handlers = options.onProgress ? { onProgress: options.onProgress } : {};
    const { id, promise } = this.transport.send({ type: 'load', source, params }, handlers, transfer);
    const onAbort = () => this.transport.abort(id);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      this.modelInfo = await promise;
      return this.modelInfo;
    } catch (e) {
      // The previous model is still loaded unless memory forced it out: ask what is.
      this.modelInfo = await this.transport.send({ type: 'model' }).promise.catch(() => null);
      throw e;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  async unload(): Promise<void> {
    this.abort();
    await this.transport.send({ type: 'unload' }).promise;
    this.modelInfo = null;
  }

  /** Token ids of `text`; addSpecial adds BOS as the vocabulary wants, parseSpecial reads "<s>" etc. as control tokens. */
  async tokenize(text: string, options: { addSpecial?: boolean; parseSpecial?: boolean } = {}): Promise<number[]> {
    refuseRenamed(options, RENAMED_TOKENIZE_OPTIONS, 'tokenize()');
    return this.transport.send({
      type: 'tokenize',
      text,
      add_special: options.addSpecial ?? true,
      parse_special: options.parseSpecial ?? true,
    }).promise;
  }

  async detokenize(tokens: ArrayLike<number>, options: { renderSpecial?: boolean } = {}): Promise<string> {
    refuseRenamed(options, RENAMED_DETOKENIZE_OPTIONS, 'detokenize()');
    return this.transport.send({ type: 'detokenize', tokens: tokenIds(tokens, 'detokenize()'), render_special: options.renderSpecial ?? false }).promise;
  }

  /** The prompt text the model's chat template makes of `messages` (checked as in chat.completions.create). */
  async applyChatTemplate(messages: ChatMessage[], addGenerationPrompt = true): Promise<string> {
    return this.transport.send({ type: 'apply_chat_template', messages: checkMessages(messages), add_generation_prompt: addGenerationPrompt }).promise;
  }

  /** Low level: appends tokens to the context (after keeping only its first `keep` positions, if given). */
  async evaluate(tokens: ArrayLike<number>, options: { keep?: number } = {}): Promise<{ n_past: number }> {
    return this.transport.send({ type: 'evaluate', tokens: tokenIds(tokens, 'evaluate()'), n_keep: options.keep ?? -1 }).promise;
  }

  /**
   * Logits [n_vocab] of the last step: after a generation, the distribution its last token was
   * sampled from; after evaluate(), the next-token distribution. Null before either.
   */
  async getLogits(): Promise<Float32Array | null> {
    return this.transport.send({ type: 'logits' }).promise;
  }

  /**
   * The context's saved state: the tokens it holds, the logits of the last one and their KV cache,
   * in oxidize's versioned state format (the native CLI's `run --prompt-cache` files are the same
   * bytes). Load it with loadState() into this or another engine that loaded the same model with the
   * same cacheTypeK / cacheTypeV and an n_ctx at least its token count. Rejects with
   * "invalid_argument" when no model is loaded, "too_large" when wasm memory cannot hold a copy.
   */
  async saveState(): Promise<Uint8Array> {
    return this.transport.send({ type: 'save_state' }).promise;
  }

  /**
   * Replaces the context with a state from saveState(), as if its tokens had been evaluated here: a
   * generation whose prompt starts with them evaluates only the rest (the last token at least), and
   * getLogits() returns the saved logits. Stops a running generation first. Everything is checked
   * before the context changes; on error it is left as it was and the promise rejects with the
   * core's message: "invalid_argument" for a state of another model (both hashes named) or other
   * cache types (both named); "out_of_range" for more tokens than n_ctx; "invalid_file" for a
   * damaged state (the offset and what was expected there); "unsupported" for another format version.
   */
  async loadState(state: Uint8Array | ArrayBuffer): Promise<{ n_past: number }> {
    const bytes = state instanceof Uint8Array ? state : state instanceof ArrayBuffer ? new Uint8Array(state) : null;
    if (bytes === null) {
      return Promise.reject(new EngineError('invalid_argument', 'loadState() takes the Uint8Array saveState() made (or an ArrayBuffer)'));
    }
    this.abort();  // a running generation would hold the worker's queue
    return this.transport.send({ type: 'load_state', bytes }).promise;
  }

  /**
   * Stops every running generation (they end with finish_reason "abort") and benchmark (it rejects
   * with "aborted" once its current test has finished).
   */
  abort(): void {
    for (const stop of this.streamStops) stop();
    for (const id of this.stoppable) this.transport.abort(id);
  }

  /**
   * Throughput benchmark in llama-bench's spirit, run by the same C++ as `oxidize bench`
   * (core/tools/bench.cpp) inside the worker, on the loaded model with `engine.runtime.threads`
   * threads: pp tests evaluate n fixed token ids in one batch, tg tests n single tokens, each from an
   * empty context, so tokenization and sampling are not timed. Resolves with the rows `oxidize bench
   * -o json` prints and the markdown table it prints. The context is left empty, as after load().
   * Rejects with EngineError: "invalid_argument" (bad options, another thread count, no model
   * loaded), "aborted" (signal, abort(), load() or unload() while it runs).
   */
  async bench(options: BenchOptions = {}): Promise<BenchReport> {
    refuseAborted(options.signal, 'bench()');
    const params = benchParams(options);
    const handlers = options.onProgress ? { onBench: options.onProgress } : {};
    const { id, promise } = this.transport.send({ type: 'bench', params }, handlers);
    this.stoppable.add(id);
    const onAbort = () => this.transport.abort(id);
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await promise;
    } finally {
      this.stoppable.delete(id);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Stops the worker; the engine is unusable afterwards. */
  terminate(): void {
    this.worker.terminate();
    this.transport.fail(new EngineError('aborted', 'the engine was terminated'));
  }

  private createChat(req: ChatCompletionRequest): Promise<ChunkStream<ChatCompletionChunk> | ChatCompletion> {
    checkRequest(req, 'chat.completions.create()');
    const prompt: PromptSpec = { kind: 'chat', messages: checkMessages(req.messages) };
    choicesOf(req);
    const id = `chatcmpl-${Date.now().toString(36)}-${++completionCounter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = this.modelInfo?.name ?? '';
    if (req.stream) {
      const started = new Set<number>();
      return Promise.resolve(
        this.stream<ChatCompletionChunk>(prompt, req, (index, text, finish, result, parsed, lp) => {
          const delta: { role?: 'assistant' } & MessageDelta = {};
          if (!started.has(index)) delta.role = 'assistant';
          if (text !== null) delta.content = text;
          if (parsed !== undefined) Object.assign(delta, parsed);
          started.add(index);
          const chunk: ChatCompletionChunk = {
            id, object: 'chat.completion.chunk', created, model,
            choices: [{ index, delta, finish_reason: finish, logprobs: lp ? chatLogprobs(lp, topLogprobsOf(req)) : null }],
          };
          if (result !== null) {
            chunk.usage = result.usage;
            chunk.timings = result.timings;
          }
          return chunk;
        }),
      );
    }
    return this.runChoices(prompt, req).then((rs) => ({
      id, object: 'chat.completion', created, model,
      choices: rs.map((r, index) => ({
        index, message: r.message ?? { role: 'assistant' as const, content: r.text }, finish_reason: r.finish_reason,
        logprobs: wantsLogprobs(req) ? chatLogprobs(r.logprobs ?? [], topLogprobsOf(req)) : null,
      })),
      usage: usageOf(rs),
      timings: timings(rs[0]),
    }));
  }

  private createCompletion(req: CompletionRequest): Promise<ChunkStream<CompletionChunk> | Completion> {
    checkRequest(req, 'completions.create()');
    if (typeof req.prompt !== 'string' && !Array.isArray(req.prompt)) {
      throw new EngineError('invalid_argument', 'prompt must be a string or an array of token ids');
    }
    choicesOf(req);
    const prompt: PromptSpec =
      typeof req.prompt === 'string' ? { kind: 'text', text: req.prompt } : { kind: 'tokens', tokens: Array.from(req.prompt) };
    const id = `cmpl-${Date.now().toString(36)}-${++completionCounter}`;
    const created = Math.floor(Date.now() / 1000);
    const model = this.modelInfo?.name ?? '';
    if (req.stream) {
      const offsets: { at: number }[] = [];  // per choice: text_offset so far
      return Promise.resolve(
        this.stream<CompletionChunk>(prompt, req, (index, text, finish, result, _parsed, lp) => {
          const offset = (offsets[index] ??= { at: 0 });
          const chunk: CompletionChunk = {
            id, object: 'text_completion', created, model,
            choices: [{ index, text: text ?? '', finish_reason: finish, logprobs: lp ? completionLogprobs(lp, topLogprobsOf(req), offset) : null }],
          };
          if (result !== null) {
            chunk.usage = result.usage;
            chunk.timings = result.timings;
          }
          return chunk;
        }),
      );
    }
    return this.runChoices(prompt, req).then((rs) => ({
      id, object: 'text_completion', created, model,
      choices: rs.map((r, index) => ({
        index, text: r.text, finish_reason: r.finish_reason,
        logprobs: wantsLogprobs(req) ? completionLogprobs(r.logprobs ?? [], topLogprobsOf(req), { at: 0 }) : null,
      })),
      usage: usageOf(rs),
      timings: timings(rs[0]),
    }));
  }

  // Choice `index` of a request: seeds after the first are seed + index, so choices differ.
  private start(prompt: PromptSpec, req: RequestCommon, index: number,
                onDelta?: (events: TokenEvent[], messageDeltas?: MessageDelta[]) => void) {
    const params = samplingOf(req, index);
    const { id, promise } = this.transport.send({ type: 'generate', prompt, params }, onDelta ? { onDelta } : {});
    this.stoppable.add(id);
    const onAbort = () => this.transport.abort(id);
    if (req.signal?.aborted) onAbort();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const done = promise.finally(() => {
      this.stoppable.delete(id);
      req.signal?.removeEventListener('abort', onAbort);
    });
    return { id, done };
  }

  // The n choices one after another: the prompt is evaluated for the first and reused from the
  // cache by the others.
  private async runChoices(prompt: PromptSpec, req: RequestCommon): Promise<GenerationResult[]> {
    const n = choicesOf(req);
    const results: GenerationResult[] = [];
    for (let i = 0; i < n; ++i) results.push(await this.start(prompt, req, i).done);
    return results;
  }

  // Chunks of every choice (index 0 to n-1, one after another); the last choice's final chunk carries
  // the usage of all of them (unless stream_options.include_usage is false).
  private stream<T>(
    prompt: PromptSpec,
    req: RequestCommon,
    // parsed: with tools, one delta of the parsed reply (then text is null).
    make: (index: number, text: string | null, finish: FinishReason | null, last: { usage?: CompletionUsage; timings?: Timings } | null,
           parsed?: MessageDelta, logprobs?: TokenEvent[]) => T,
  ): ChunkStream<T> {
    const n = choicesOf(req);
    const withUsage = req.stream_options?.include_usage !== false;
    let id = -1;
    // Stopped (abort(), the signal, engine.abort(), leaving the loop): chunks not read yet and deltas
    // the worker sent before it saw the abort are dropped, so no content follows it; only the
    // finish chunk comes.
    let stopped = false;
    const stop = () => {
      stopped = true;
      channel.discard();  // chunks received but not read yet: after the abort, they are not yielded
      this.transport.abort(id);
    };
    const channel: Channel<T> = new Channel<T>(stop);
    req.signal?.addEventListener('abort', stop, { once: true });
    this.streamStops.add(stop);
    const results: GenerationResult[] = [];
    const runAll = async (): Promise<GenerationResult> => {
      for (let index = 0; index < n; ++index) {
        const started = this.start(prompt, req, index, (events, deltas) => {
          if (stopped) return;
          if (deltas !== undefined) {
            for (const d of deltas) channel.push(make(index, null, null, null, d));
          } else {
            // A token with probabilities gets its chunk even while its text is held back.
            for (const e of events) {
              if (e.logprob !== undefined) channel.push(make(index, e.text, null, null, undefined, [e]));
              else if (e.text !== '') channel.push(make(index, e.text, null, null));
            }
          }
        });
        id = started.id;
        const r = await started.done;
        results.push(r);
        const last = index === n - 1 || r.finish_reason === 'abort' || stopped;
        channel.push(make(index, null, r.finish_reason, last ? (withUsage ? { usage: usageOf(results), timings: timings(results[0]) } : {}) : null));
        if (last) return r;
      }
      return results[results.length - 1];
    };
    const done = () => {
      this.streamStops.delete(stop);
      req.signal?.removeEventListener('abort', stop);
    };
    const result = runAll().then(
      (r) => {
        done();
        channel.close();
        return r;
      },
      (e: unknown) => {
        done();
        channel.close(e);
        throw e;
      },
    );
    result.catch(() => {});  // surfaced through the iterator; avoid an unhandled rejection here
    return {
      [Symbol.asyncIterator]: () => channel,
      abort: stop,
      result,
    };
  }
}

// A URL load's source: the URLs resolved against the page, the store's options checked.
function urlSource(input: string | URL | (string | URL)[], options: LoadOptions): Extract<ModelSource, { kind: 'url' }> {
  const list = Array.isArray(input) ? input : [input];
  const sha = options.sha256 === undefined ? [] : Array.isArray(options.sha256) ? options.sha256 : [options.sha256];
  if (sha.some((h) => typeof h !== 'string' || !/^[0-9a-fA-F]{64}$/.test(h.trim()))) {
    throw new EngineError('invalid_argument', 'sha256 must be 64 hex digits (or a list of them, one per file)');
  }
  if (options.version !== undefined && typeof options.version !== 'string') {
    throw new EngineError('invalid_argument', 'version must be a string');
  }
  checkBoolean(options.cache, 'cache', 'load()');
  checkBoolean(options.verify, 'verify', 'load()');
  return {
    kind: 'url',
    urls: list.map((u) => new URL(u, location.href).href),
    cache: options.cache ?? true,
    store: { version: options.version ?? null, sha256: sha.map((h) => h.trim().toLowerCase()), verify: options.verify ?? false },
  };
}

/**
 * Starts the worker and the wasm build this page can run: threads when cross-origin isolated; one
 * thread otherwise or when the threaded build fails to start (`engine.runtime.fallback` says why,
 * and `onLog` gets a warning). Rejects with EngineError when the worker cannot start or neither
 * build can, naming the cause (a file's URL and HTTP status, a missing header) of each.
 */
export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const threads = options.threads ?? 0;
  if (typeof threads !== 'number' || !Number.isSafeInteger(threads) || threads < 0) {
    throw new EngineError('invalid_argument', `threads must be a non-negative integer (0: from the hardware), got ${String(threads)}`);
  }
  const wasmBaseUrl = options.wasmBaseUrl !== undefined ? new URL(options.wasmBaseUrl, location.href).href : null;
  const onLog =
    options.onLog ?? ((level: 'info' | 'warn', message: string) => (level === 'warn' ? console.warn(message) : console.info(message)));
  const { worker, url: workerUrl } = startWorker(options.workerUrl);
  const transport = new Transport(worker, onLog, workerUrl);
  try {
    const runtime = await transport.send({
      type: 'init',
      options: {
        wasmBaseUrl: wasmBaseUrl === null || wasmBaseUrl.endsWith('/') ? wasmBaseUrl : `${wasmBaseUrl}/`,
        threads,
        forceSingleThread: options.forceSingleThread ?? false,
        relaxedSimd: options.relaxedSimd ?? true,
        storage: options.storage ?? 'auto',
      },
    }).promise;
    return new Engine(transport, worker, runtime);
  } catch (e) {
    worker.terminate();
    throw e;
  }
}
