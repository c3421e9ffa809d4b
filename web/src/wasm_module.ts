// Types of the embind module built from wasm/bindings.cpp (oxidize-mt.js / oxidize-st.js).
import type {
  AssistantMessage, ChatTemplateInfo, ContextSource, EmbeddingsParams, EmbeddingsResponse, ErrorCode, FinishReason, KvCacheType, MessageDelta,
  PoolingType, RerankParams, RerankResponse,
} from './protocol.js';

export interface WasmError {
  ok: false;
  code: ErrorCode;
  message: string;
}
export type WasmResult<T> = ({ ok: true } & T) | WasmError;

export interface WasmModelInfo {
  name: string;
  arch: string;
  n_vocab: number;
  n_ctx_train: number;
  n_ctx: number;
  n_ctx_source: ContextSource;
  n_ctx_reason: string;
  n_embd: number;
  n_layer: number;
  n_head: number;
  n_head_kv: number;
  n_threads: number;
  cache_type_k: KvCacheType;
  cache_type_v: KvCacheType;
  kv_bytes: number;
  size_bytes: number;
  bos_id: number;
  eos_id: number;
  has_chat_template: boolean;
  chatTemplate: ChatTemplateInfo;
  kernels: string;
  embeddings: { pooling: PoolingType; n_embd_out: number } | null;
}

export interface WasmStats {
  n_prompt: number;
  n_prompt_cached: number;
  n_context_shifts: number;
  n_prompt_dropped: number;
  n_generated: number;
  prompt_ms: number;
  generate_ms: number;
  finish_reason: 'stop' | 'length' | 'abort';
}

export interface WasmStep {
  events: { token: number; text: string }[];
  done: boolean;
  stats: WasmStats;
  /** After chatPromptTools: the parsed reply's deltas of this step; when done, the whole message. */
  message_deltas?: MessageDelta[];
  message?: AssistantMessage;
  tool_finish_reason?: FinishReason;
}

export interface WasmEngine {
  runtime(): { ok: true; threaded: boolean; kernels: string; max_memory: number };
  reserve(size: number): WasmResult<{ ptr: number }>;
  release(): void;
  bufferView(offset: number, length: number): Uint8Array | null;
  bufferSha256(): string;
  load(
    name: string,
    options: {
      n_ctx: number;
      n_batch: number;
      n_threads: number;
      cacheTypeK?: string;
      cacheTypeV?: string;
      swaFull?: boolean;
      chatTemplate?: string;
      embeddings?: boolean;
      pooling?: string;
    },
  ): WasmResult<WasmModelInfo>;
  unload(): void;
  info(): WasmResult<WasmModelInfo>;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): WasmResult<{ tokens: Int32Array }>;
  detokenize(tokens: Int32Array, renderSpecial: boolean): WasmResult<{ text: string }>;
  applyChatTemplate(messagesJson: string, addGenerationPrompt: boolean): WasmResult<{ text: string }>;
  /** Rendered and tokenized so that message text never becomes control tokens. */
  chatPrompt(messagesJson: string, addGenerationPrompt: boolean): WasmResult<{ tokens: Int32Array }>;
  /** The same with tools ({tools, tool_choice, parallel_tool_calls} as JSON): the next begin() constrains and parses its reply. */
  chatPromptTools(messagesJson: string, toolsJson: string): WasmResult<{ tokens: Int32Array }>;
  begin(prompt: Int32Array, options: Record<string, unknown>): WasmResult<{ stats: WasmStats }>;
  step(maxEvents: number, budgetMs: number): WasmResult<WasmStep>;
  abort(): WasmResult<WasmStep>;
  evaluate(tokens: Int32Array, nKeep: number): WasmResult<{ n_past: number }>;
  logits(): Float32Array | null;
  /** The session's state (core/session/state_file.h), a copy. */
  saveState(): WasmResult<{ bytes: Uint8Array }>;
  /** engine.embeddings.create / engine.rerank (wasm/embeddings.h). */
  embeddings(options: EmbeddingsParams): WasmResult<EmbeddingsResponse>;
  rerank(options: RerankParams): WasmResult<RerankResponse>;
  /** Checks everything before the session changes; the error names what is wrong. */
  loadState(bytes: Uint8Array): WasmResult<{ n_past: number }>;
  /** The session is dropped until benchEnd(), which must follow a successful benchBegin(). */
  benchBegin(options: {
    n_prompt: number[];
    n_gen: number[];
    n_depth: number[];
    repetitions: number;
    warmup: boolean;
  }): WasmResult<{ n_tests: number }>;
  /** `records`: `oxidize bench -o json` (a JSON array) of the test just run. */
  benchStep(): WasmResult<{ done: boolean; n_done: number; records: string }>;
  /** Re-creates the session; markdown and JSON of every test that ran. */
  benchEnd(): WasmResult<{ markdown: string; records: string; n_threads: number }>;
  delete(): void;
}

/** A pool Web Worker as Emscripten 3.1.6 tracks it: `loaded` is set once it has instantiated the module. */
export type PoolWorker = Worker & { loaded?: boolean };

/**
 * The part of Emscripten's pthread runtime (3.1.6, exported as Module.PThread by -pthread builds)
 * the worker reads to wait for the pool and to check how many threads a session runs.
 */
export interface PThreadRuntime {
  /** Workers idle in the pool (the pool after start-up; a session's threads take them out). */
  unusedWorkers: PoolWorker[];
  /** Workers hosting a running pthread. */
  runningWorkers: PoolWorker[];
  terminateAllThreads(): void;
}

export interface OxidizeModule {
  Engine: new () => WasmEngine;
  /** Present in the multi-thread build only. */
  PThread?: PThreadRuntime;
}

export interface ModuleArgs {
  /** Read by the threaded build's PTHREAD_POOL_SIZE expression (wasm/CMakeLists.txt): 2 x (threads - 1), see worker.ts. */
  oxidizePoolSize?: number;
  /** wasm/relaxed_select.js: false loads NAME.wasm; undefined NAME.relaxed.wasm where relaxed SIMD validates. */
  oxidizeRelaxed?: false;
  /** Emscripten's: the URL of each file the glue loads by name (wasm_files.ts). */
  locateFile?: (path: string, prefix: string) => string;
  /** Emscripten's: what the pthread workers import (the glue's own URL). */
  mainScriptUrlOrBlob?: string;
  print?: (text: string) => void;
  printErr?: (text: string) => void;
}

export type ModuleFactory = (args: ModuleArgs) => Promise<OxidizeModule>;
