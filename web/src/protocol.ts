// The worker protocol: every message between the main thread (index.ts) and the engine worker
// (worker.ts), as discriminated unions. Requests carry an id; the worker answers each with exactly
// one `result` or `error`, after any number of `progress` / `delta` messages for that id.

/** Error categories: the core's (core/base/status.h) plus none of our own. */
export type ErrorCode =
  | 'invalid_argument'
  | 'invalid_file'
  | 'unsupported'
  | 'out_of_range'
  | 'too_large'
  | 'io'
  | 'aborted'
  | 'internal';

export interface WireError {
  code: ErrorCode;
  message: string;
}

/** Where a model's bytes come from. Blobs are posted by reference, ArrayBuffers transferred. */
export type ModelSource =
  /** urls: the model's files (one, or every shard of a split GGUF, in order); see UrlLoadParams. */
  | { kind: 'url'; urls: string[]; cache: boolean; store: UrlLoadParams }
  | { kind: 'blob'; blob: Blob; name: string }
  | { kind: 'buffer'; buffer: ArrayBuffer; name: string };

/** Where downloaded models are kept: the Origin Private File System or the Cache API. */
export type StorageBackend = 'opfs' | 'cache-api';

/** How a URL load uses the store (LoadOptions' fields, filled in by the client). */
export interface UrlLoadParams {
  /** An app's version of the file: a stored copy of another version is downloaded again; the same
   * version is used without asking the server. null: revalidate by ETag / Last-Modified. */
  version: string | null;
  /** Per file: the expected SHA-256 (hex) of each URL, or null. */
  sha256: (string | null)[];
  /** Hash a stored copy again before using it (LoadOptions.verify); otherwise its record is trusted. */
  verify: boolean;
}

/** One stored file (engine.cache.list()). */
export interface StoredModel {
  url: string;
  /** The file's size in bytes. */
  size: number;
  /** Bytes stored: `size` when complete, fewer for a download that was cut short (resumed next load). */
  stored: number;
  complete: boolean;
  etag: string | null;
  lastModified: string | null;
  /** LoadOptions.version it was downloaded as, or null. */
  version: string | null;
  /**
   * SHA-256 (hex) of the file, computed on the bytes as they were downloaded. A load from the store
   * compares a `sha256` option with it without reading the bytes again; LoadOptions.verify and
   * engine.cache.verify() hash the stored bytes again and compare them with it.
   */
  sha256: string | null;
  /** When the download completed (ms since 1970), or 0. */
  storedAt: number;
  backend: StorageBackend;
}

export interface InitOptions {
  /** Where models are stored: 'auto' (OPFS, else the Cache API) unless the page asked for one. */
  storage?: StorageBackend | 'auto';
  /** Absolute URL of the folder holding oxidize-mt.js / oxidize-st.js and their .wasm; null: the package's own (wasm_files.ts). */
  wasmBaseUrl: string | null;
  /** Threads asked for (the worker's own included); 0: from hardwareConcurrency. Clamped by the worker. */
  threads: number;
  /** Use the single-thread build even when the page is cross-origin isolated. */
  forceSingleThread: boolean;
  /** Load oxidize-*.relaxed.wasm where relaxed SIMD validates (wasm/relaxed_select.js decides). */
  relaxedSimd: boolean;
}

export interface RuntimeInfo {
  build: 'multi-thread' | 'single-thread';
  /**
   * Threads a session runs, the worker's own included (1 in the single-thread build): the requested
   * count after clamping to navigator.hardwareConcurrency (see EngineOptions.threads).
   */
  threads: number;
  /** Why this build was chosen (e.g. "the page is not cross-origin isolated: ..."). */
  reason: string;
  /**
   * Why the engine runs one thread although threads were not turned off (forceSingleThread): the
   * page is not cross-origin isolated, or the multi-thread build failed to start (its cause
   * included). null when the multi-thread build runs or forceSingleThread asked for one thread.
   * A fallback is also reported through EngineOptions.onLog as a warning.
   */
  fallback: string | null;
  crossOriginIsolated: boolean;
  /** Kernel table that runs: "simd128", or "simd128+relaxed" in the relaxed-SIMD module. */
  kernels: string;
  /** Upper bound of wasm memory in bytes (4 GiB for wasm32). */
  maxMemory: number;
}

/** The KV cache types (as llama.cpp spells them for -ctk / -ctv). */
export type KvCacheType = 'f32' | 'f16' | 'bf16' | 'q8_0' | 'q4_0' | 'q4_1' | 'iq4_nl' | 'q5_0' | 'q5_1';

export interface LoadParams {
  /**
   * Context length in tokens, up to the model's trained context (ModelInfo.n_ctx_train; above it
   * the load rejects with "invalid_argument"). The KV cache and buffers it needs are estimated
   * before anything is allocated: a context that does not fit in memory rejects with "too_large"
   * naming the bytes needed and available. 0 or absent: the trained context when its KV cache (in
   * cacheTypeK / cacheTypeV) and 256 MiB kept for buffers fit in what wasm memory can still grow
   * to (4 GiB less the model and what is allocated), else the largest power of two below it that
   * fits (at least 256); ModelInfo.n_ctx_source and n_ctx_reason say which and why. With
   * embeddings: true, absent means the trained context capped at 8192.
   */
  nCtx?: number;
  /** Prompt tokens evaluated per forward pass (default 512). */
  nBatch?: number;
  /** KV cache element types (llama.cpp's -ctk / -ctv); 'f16' when absent. */
  cacheTypeK?: KvCacheType;
  cacheTypeV?: KvCacheType;
  /**
   * Sliding-window layers (Gemma 2/3, gpt-oss, ...) keep the whole context instead of only their
   * window (llama.cpp's --swa-full): more memory, for nothing but parity checks. Default false.
   */
  swaFull?: boolean;
  /** File / Blob / ArrayBuffer sources: expected SHA-256 (hex), checked before parsing (URL sources: UrlLoadParams.sha256). */
  sha256?: string;
  /**
   * Chat template used instead of the model's: a built-in name (llama.cpp's: 'chatml', 'llama3',
   * 'mistral-v7', 'gemma', 'phi3', ...) or Jinja source. An unknown name rejects the load with
   * "invalid_argument" listing the built-in names.
   */
  chatTemplate?: string;
  /**
   * Open the model for embeddings (llama.cpp's --embeddings, wllama's `embeddings`): then only
   * embeddings.create() and rerank() work, not generation. Needs a pooling type, from the file's
   * pooling_type or `pooling`.
   */
  embeddings?: boolean;
  /** Pooling (llama.cpp's --pooling): absent: the file's; 'rank' makes a reranker. Needs embeddings. */
  pooling?: PoolingType;
}

export type PoolingType = 'none' | 'mean' | 'cls' | 'last' | 'rank';

/** engine.embeddings.create()'s request: OpenAI's, less `model` (the engine has one). */
export interface EmbeddingsParams {
  input: string | string[];
  /** 'base64': each embedding is the base64 of its little-endian float32 bytes (OpenAI's). */
  encoding_format?: 'float' | 'base64';
  /** Only the model's width: GGUF files do not say whether a model was trained for Matryoshka truncation. */
  dimensions?: number;
  /** Cut an input longer than the context instead of rejecting it. */
  truncate?: boolean;
}

export interface EmbeddingsUsage {
  prompt_tokens: number;
  total_tokens: number;
}

/** OpenAI's CreateEmbeddingResponse. */
export interface EmbeddingsResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: EmbeddingsUsage;
}

/** engine.rerank()'s request (llama-server's /v1/rerank). */
export interface RerankParams {
  query: string;
  documents: string[];
  /** The best top_n documents only (default: all). */
  top_n?: number;
  return_documents?: boolean;
  truncate?: boolean;
}

export interface RerankResponse {
  object: 'list';
  model: string;
  /** By descending relevance_score (the classifier's raw output, as llama-server's). */
  results: { index: number; relevance_score: number; document?: { text: string } }[];
  usage: EmbeddingsUsage;
}

/** Where the chat template came from: the GGUF's tokenizer.chat_template, a built-in guessed for a
 * file without one, or LoadParams.chatTemplate. */
export type ChatTemplateOrigin = 'file' | 'guessed' | 'override';

export interface ChatTemplateInfo {
  /** A built-in's name ('chatml', 'llama3', ...), the built-in format a Jinja template was
   * recognised as, or 'custom'. */
  name: string;
  origin: ChatTemplateOrigin;
}

/**
 * How ModelInfo.n_ctx was chosen: 'requested' (LoadParams.nCtx), 'trained' (the model's trained
 * context, which fits), 'memory' (the trained context does not fit in wasm memory: the largest
 * power of two below it that does) or 'default' (a fixed default: embeddings cap the trained
 * context at 8192; a file that does not give its trained context gets 4096).
 */
export type ContextSource = 'requested' | 'trained' | 'memory' | 'default';

export interface ModelInfo {
  name: string;
  arch: string;
  n_vocab: number;
  n_ctx_train: number;
  n_ctx: number;
  /** How n_ctx was chosen, and a sentence saying why with the sizes (KV cache, memory left). */
  n_ctx_source: ContextSource;
  n_ctx_reason: string;
  n_embd: number;
  n_layer: number;
  n_head: number;
  n_head_kv: number;
  n_threads: number;
  /** The KV cache's element types and its size in bytes for n_ctx positions. */
  cache_type_k: KvCacheType;
  cache_type_v: KvCacheType;
  kv_bytes: number;
  size_bytes: number;
  bos_id: number;
  eos_id: number;
  has_chat_template: boolean;
  /** The template chats are rendered with, and where it came from. */
  chatTemplate: ChatTemplateInfo;
  kernels: string;
  /** A model loaded with embeddings: true: its pooling and the floats per vector; else null. */
  embeddings: { pooling: PoolingType; n_embd_out: number } | null;
  /** Where the bytes came from this time. */
  source: 'network' | 'cache' | 'blob' | 'buffer';
}

/** A call the model made: arguments are JSON text, as in OpenAI's API. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A part of a message's content (OpenAI's content parts); only text parts are supported. */
export interface TextContentPart {
  type: 'text';
  text: string;
}

/** The roles a message may have (OpenAI's); any other role is an EngineError('invalid_argument'). */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  role: ChatRole;
  /**
   * A string or text parts (joined as the template joins them); null only for an assistant turn
   * that called tools. Empty content (and an empty parts array) is an EngineError naming the message.
   */
  content: string | TextContentPart[] | null;
  /** An assistant turn's calls (sent back so the template renders them). */
  tool_calls?: ToolCall[];
  /** role 'tool': the id of the call this message answers. */
  tool_call_id?: string;
}

/** A function the model may call (OpenAI's tools[]); parameters is a JSON Schema. */
export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/**
 * auto: the model may call tools (a call it starts is held to the tool's schema from the format's
 * marker on); none: no calls; required: at least one call, grammar-forced; a named function: a call
 * to it, grammar-forced.
 */
export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

/** The reply of a chat completion with tools, parsed as llama-server does. */
export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  /** A <think> block (and each format's equivalent), split off the content. */
  reasoning_content?: string;
  tool_calls?: ToolCall[];
}

/** What a streamed chunk's delta adds: text, reasoning, a new call (index, id, type, name) or more arguments. */
export interface MessageDelta {
  content?: string;
  reasoning_content?: string;
  tool_calls?: { index: number; id?: string; type?: 'function'; function: { name?: string; arguments?: string } }[];
}

/** Tool calls in a chat request (chat completions only; text completions refuse them). */
export interface ToolParams {
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  /** false: at most one call per reply. Default true. */
  parallel_tool_calls?: boolean;
}

/** JSON output: any JSON object, or JSON valid against a schema (OpenAI's response_format). */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object'; schema?: Record<string, unknown> }
  | { type: 'json_schema'; json_schema: { name?: string; description?: string; schema: Record<string, unknown>; strict?: boolean } };

/**
 * Sampling and stopping, named as in OpenAI's API plus llama-server's sampler fields. Every key is
 * checked by the engine: a value out of range is an EngineError('invalid_argument') naming the
 * parameter and its range, and a key not listed here (echo, ...; tools outside chat
 * completions, see ToolParams) is an EngineError('unsupported', '<key> is not supported'), never
 * silently ignored.
 */
export interface SamplingParams {
  /** Tokens to generate at most; absent or -1: until end of generation or a full context. */
  max_tokens?: number;
  /** OpenAI's newer name for max_tokens (give one; both must agree). */
  max_completion_tokens?: number;
  /** 0: greedy (argmax). Default 0.8. */
  temperature?: number;
  top_p?: number;
  /** 0: disabled. Default 40. */
  top_k?: number;
  min_p?: number;
  typical_p?: number;
  top_n_sigma?: number;
  xtc_probability?: number;
  xtc_threshold?: number;
  dynatemp_range?: number;
  dynatemp_exponent?: number;
  repeat_penalty?: number;
  /** -1: the whole history. */
  repeat_last_n?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  dry_multiplier?: number;
  dry_base?: number;
  dry_allowed_length?: number;
  dry_penalty_last_n?: number;
  dry_sequence_breakers?: string[];
  /** 0 (off), 1 or 2. */
  mirostat?: number;
  mirostat_tau?: number;
  mirostat_eta?: number;
  /** The sampler chain's order, as llama-server: "penalties;dry;top_k;..." or an array of names. */
  samplers?: string | string[];
  /** OpenAI's {"token id": bias} or llama-server's [[id, bias]]; a bias of false bans the token. */
  logit_bias?: Record<string, number | false> | [number, number | false][];
  /** Same seed, same parameters, same prompt: same tokens (here and in the native CLI). */
  seed?: number;
  stop?: string | string[];
  ignore_eos?: boolean;
  /**
   * When the context fills (or a prompt is longer than it): keep the prompt's first n_keep tokens
   * (after BOS; -1: all of it), drop half of the rest and go on, as llama.cpp's context shift.
   * context_shift: false stops with finish_reason "length" instead. Defaults: 0, true.
   */
  n_keep?: number;
  context_shift?: boolean;
  /**
   * Log probabilities (the log-softmax of the raw logits, before any sampler stage, as llama-server
   * by default). Chat: true, for choices[].logprobs.content; completions: the legacy count of
   * alternatives per token (0 to 20), for choices[].logprobs {tokens, token_logprobs, top_logprobs,
   * text_offset}.
   */
  logprobs?: boolean | number;
  /** With logprobs: true, the alternatives per token (0 to 20; default 0). */
  top_logprobs?: number;
  /** Structured output; one of response_format, grammar (llama.cpp's GBNF) and json_schema. */
  response_format?: ResponseFormat;
  grammar?: string;
  json_schema?: Record<string, unknown>;
}

export type PromptSpec =
  | { kind: 'chat'; messages: ChatMessage[] }
  | { kind: 'text'; text: string }
  | { kind: 'tokens'; tokens: number[] };

/** A likely token at a step (requests with logprobs): the softmax of the raw logits, as llama-server. */
export interface TokenAlternative {
  token: number;
  p: number;
  /** logit - logsumexp(logits): exact even where p underflows. */
  logprob: number;
  /** The token's bytes, and its text cut before an unfinished UTF-8 character. */
  bytes: number[];
  piece: string;
}

/**
 * One generated token and the text it completed (may be empty while a character is pending). With
 * logprobs, the token's own probability fields (as TokenAlternative) and `top`, most likely first.
 */
export interface TokenEvent extends Partial<Omit<TokenAlternative, 'token'>> {
  /** -1 for text released at the end (a held-back partial character or stop-string prefix). */
  token: number;
  text: string;
  top?: TokenAlternative[];
}

/** tool_calls: the reply holds tool calls and ended by itself. */
export type FinishReason = 'stop' | 'length' | 'abort' | 'tool_calls';

export interface GenerationResult {
  text: string;
  tokens: number[];
  finish_reason: FinishReason;
  n_prompt: number;
  n_prompt_cached: number;
  n_generated: number;
  prompt_ms: number;
  generate_ms: number;
  threads: number;
  /** Times the context was shifted while generating, and prompt tokens left out to fit it. */
  n_context_shifts: number;
  n_prompt_dropped: number;
  /** With tools: the reply parsed (content, reasoning_content, tool_calls). */
  message?: AssistantMessage;
  /** With logprobs: the events of the generated tokens, with their probabilities. */
  logprobs?: TokenEvent[];
}

/** What a benchmark runs (the engine's thread count; see Engine.bench in index.ts). */
export interface BenchParams {
  /** Prompt-processing tests: one eval of n fixed token ids each; 0 entries are skipped. */
  n_prompt: number[];
  /** Generation tests: n single-token evals each; 0 entries are skipped. */
  n_gen: number[];
  /** Tokens in the context before each test (`oxidize bench -d`); tests are named "tg64 @ d2048". */
  n_depth: number[];
  /** Timed repetitions of each test. */
  repetitions: number;
  /** One untimed run of each test first (V8 tiers up the wasm during the first run). */
  warmup: boolean;
  /** Must equal the runtime's thread count when set (the only count the worker can run). */
  threads: number | null;
}

/**
 * One row of `oxidize bench -o json`, field for field: the same C++ (core/tools/bench.cpp) makes it
 * natively, under node and here.
 */
export interface BenchRecord {
  /** Model file name. */
  model: string;
  model_bytes: number;
  n_params: number;
  /** Weight bytes one decoded token reads: dense tensors plus n_expert_used experts per MoE layer. */
  weight_bytes_per_token: number;
  /** The model's type as llama-bench reports it (general.file_type, e.g. "Q4_0"; "F32" for stories260K). */
  type: string;
  /** Kernel table ("simd128" or "simd128+relaxed" in wasm). */
  isa: string;
  n_threads: number;
  /** "pp512" or "tg128" (natively also "pp512 @ d4096", with `-d`). */
  test: string;
  n_prompt: number;
  n_gen: number;
  /** Tokens in the context before the test: always 0 here (`oxidize bench -d` sets it natively). */
  n_depth: number;
  /** KV cache element types, "f16", "q8_0", ... (llama-bench's names). */
  type_k: string;
  type_v: string;
  /** Bytes of the KV cache the test's session allocated (n_depth + n_prompt + n_gen positions). */
  kv_bytes: number;
  /** Tokens per second: mean and sample standard deviation over the repetitions. */
  avg_ts: number;
  stddev_ts: number;
  /** Tokens per second of each timed repetition. */
  samples_ts: number[];
}

export interface BenchReport {
  /** In test order: every pp test, then every tg test. */
  records: BenchRecord[];
  /** The table `oxidize bench` prints (markdown, llama-bench's columns). */
  markdown: string;
}

export type CacheOp = { op: 'list' } | { op: 'delete'; url: string } | { op: 'clear' };

/** engine.cache.verify(url): the stored copy of `url` hashed again. */
export interface StoredCheck {
  url: string;
  /** SHA-256 (hex) of the bytes stored now; null when they could not be read. */
  sha256: string | null;
  /** Whether it is the SHA-256 recorded at download. A copy that is not was deleted. */
  ok: boolean;
}

/** Main thread -> worker. */
export type Request =
  | { id: number; type: 'init'; options: InitOptions }
  | { id: number; type: 'load'; source: ModelSource; params: LoadParams }
  | { id: number; type: 'unload' }
  /** What is loaded (after a failed load: the previous model, or null if memory forced it out). */
  | { id: number; type: 'model' }
  | { id: number; type: 'tokenize'; text: string; add_special: boolean; parse_special: boolean }
  | { id: number; type: 'detokenize'; tokens: number[]; render_special: boolean }
  | { id: number; type: 'apply_chat_template'; messages: ChatMessage[]; add_generation_prompt: boolean }
  | { id: number; type: 'generate'; prompt: PromptSpec; params: SamplingParams & ToolParams }
  | { id: number; type: 'evaluate'; tokens: number[]; n_keep: number }
  | { id: number; type: 'logits' }
  | { id: number; type: 'save_state' }
  | { id: number; type: 'load_state'; bytes: Uint8Array }
  | { id: number; type: 'cache'; action: CacheOp }
  | { id: number; type: 'verify_stored'; url: string }
  | { id: number; type: 'bench'; params: BenchParams }
  | { id: number; type: 'embeddings'; params: EmbeddingsParams }
  | { id: number; type: 'rerank'; params: RerankParams }
  /** Stops request `target` (a load, a generation or a benchmark); answered at once with result null. */
  | { id: number; type: 'abort'; target: number };

export type RequestType = Request['type'];

/** What each request's `result` carries. */
export interface ResultMap {
  init: RuntimeInfo;
  load: ModelInfo;
  unload: null;
  model: ModelInfo | null;
  tokenize: number[];
  detokenize: string;
  apply_chat_template: string;
  generate: GenerationResult;
  evaluate: { n_past: number };
  logits: Float32Array | null;
  save_state: Uint8Array;
  load_state: { n_past: number };
  cache: StoredModel[];
  verify_stored: StoredCheck;
  bench: BenchReport;
  embeddings: EmbeddingsResponse;
  rerank: RerankResponse;
  abort: null;
}

/** Worker -> main thread. */
export type Response =
  | { id: number; type: 'result'; value: ResultMap[RequestType] }
  | { id: number; type: 'error'; error: WireError }
  | { id: number; type: 'progress'; loaded: number; total: number; source: ModelInfo['source'] }
  /** message_deltas: with tools, the parsed reply's OpenAI deltas instead of the raw text. */
  | { id: number; type: 'delta'; events: TokenEvent[]; message_deltas?: MessageDelta[] }
  /** A benchmark finished one test (`records`: its rows); `done` of `total` tests have run. */
  | { id: number; type: 'bench_progress'; records: BenchRecord[]; done: number; total: number }
  | { id: -1; type: 'log'; level: 'info' | 'warn'; message: string };

/** A request without its id, as the client builds it. */
export type RequestBody = Request extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
