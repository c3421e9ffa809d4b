// The engine worker: owns the wasm module and runs every engine call, so the page's thread only
// posts messages. Requests run one at a time in arrival order; `abort` is handled at once.
// Generation runs in short steps with a return to the event loop between them, which is how an
// abort message gets through without SharedArrayBuffer (the single-thread build has none).
import { EngineError, toWireError } from './errors.js';
import type {
  BenchParams,
  BenchRecord,
  BenchReport,
  ChatMessage,
  InitOptions,
  LoadParams,
  ModelInfo,
  ModelSource,
  PromptSpec,
  Request,
  RequestType,
  Response,
  ResultMap,
  RuntimeInfo,
  SamplingParams,
  TokenEvent,
  GenerationResult,
  MessageDelta,
  ToolParams,
} from './protocol.js';
import { fetchModel } from './storage/load_url.js';
import { openStore } from './storage/store.js';
import { verifyStored } from './storage/verify.js';
import type { ModuleArgs, ModuleFactory, OxidizeModule, WasmEngine, WasmResult } from './wasm_module.js';
import { explainScriptFailure } from './asset_check.js';
import { buildFiles, importFactory, locateArgs } from './wasm_files.js';

interface WorkerScope {
  postMessage(message: Response, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<Request>) => void) | null;
  crossOriginIsolated?: boolean;
}
const scope = globalThis as unknown as WorkerScope;

function post(message: Response, transfer: Transferable[] = []): void {
  scope.postMessage(message, transfer);
}

function log(level: 'info' | 'warn', message: string): void {
  post({ id: -1, type: 'log', level, message });
}

// ---- runtime: which build, how many threads -------------------------------------------------

let initOptions: InitOptions | null = null;
let runtime: RuntimeInfo | null = null;
let wasm: OxidizeModule | null = null;
let engine: WasmEngine | null = null;

// A module using one SIMD128 instruction (i8x16.splat): validates only where wasm SIMD is supported.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

/** No more threads than this whatever the hardware says (a session allows 256; more never pays here). */
const MAX_THREADS = 64;
/** `threads: 0` (the default) takes at most this many (see defaultThreads). */
const DEFAULT_MAX_THREADS = 8;
/** How long the pool's Web Workers get to load the module before the multi-thread build is given up. */
const POOL_START_TIMEOUT_MS = 30_000;

/**
 * The default thread count from navigator.hardwareConcurrency (logical CPUs; the page's own main
 * thread competes for them): all of them up to 4, half of them above that (SMT is then likely, and
 * a second hyperthread adds no bandwidth to decode), at least 4 and at most DEFAULT_MAX_THREADS.
 * The same rule as core/base/cpu_info.cpp's default_thread_count() under Emscripten.
 */
function defaultThreads(hardwareConcurrency: number): number {
  if (!(hardwareConcurrency > 0)) return 4;
  if (hardwareConcurrency <= 4) return hardwareConcurrency;
  return Math.min(Math.max(Math.floor(hardwareConcurrency / 2), 4), DEFAULT_MAX_THREADS);
}

/**
 * The multi-thread build's thread count (the worker's own thread included). 0: defaultThreads(). More than navigator.hardwareConcurrency is clamped to it: extra threads
 * would only take turns on the same cores, and the pool's spinning waits make that slower, not faster.
 */
function chooseThreads(requested: number, hardwareConcurrency: number): { threads: number; clamped: boolean; reason: string } {
  const known = hardwareConcurrency > 0;
  const count = (n: number) => `${n} thread${n === 1 ? '' : 's'}`;
  const hw = known ? `navigator.hardwareConcurrency = ${hardwareConcurrency}` : 'navigator.hardwareConcurrency unknown';
  if (!(requested > 0)) {
    const threads = defaultThreads(hardwareConcurrency);
    return { threads, clamped: false, reason: `cross-origin isolated: ${count(threads)} (the default; ${hw})` };
  }
  const cap = Math.min(known ? hardwareConcurrency : MAX_THREADS, MAX_THREADS);
  if (requested <= cap) {
    return { threads: requested, clamped: false, reason: `cross-origin isolated: ${count(requested)} as requested (${hw})` };
  }
  return {
    threads: cap,
    clamped: true,
    reason: `cross-origin isolated: ${count(requested)} requested, clamped to ${cap} (${known && cap === hardwareConcurrency ? hw : `at most ${MAX_THREADS}`})`,
  };
}

/**
 * Waits until the `size` pool workers made at instantiation have loaded the module. The build links
 * with PTHREAD_POOL_DELAY_LOAD (wasm/CMakeLists.txt), so the factory's promise does not wait for
 * them; a session must not start its threads before they are ready, or the threads would start only
 * once this thread returns to its event loop, which it does not do while it waits on them.
 */
async function waitForThreadPool(mod: OxidizeModule, size: number): Promise<void> {
  if (size === 0) return;
  const pool = mod.PThread;
  if (pool === undefined) throw new EngineError('internal', 'the multi-thread build has no pthread runtime (Module.PThread)');
  if (pool.unusedWorkers.length !== size) {
    throw new EngineError('internal', `asked for ${size} pool workers, the runtime made ${pool.unusedWorkers.length}`);
  }
  // A pool worker that fails is reported here at once (Emscripten's own handler would throw out of
  // this worker's event loop, which ends the engine worker).
  let failure: string | null = null;
  const handlers = pool.unusedWorkers.map((w) => w.onerror);
  pool.unusedWorkers.forEach((w) => {
    w.onerror = (e: Event) => {
      e.preventDefault();
      failure ??= e instanceof ErrorEvent && e.message ? e.message : 'its script did not load';
    };
  });
  const deadline = Date.now() + POOL_START_TIMEOUT_MS;
  try {
    for (;;) {
      const ready = pool.unusedWorkers.filter((w) => w.loaded === true).length;
      if (ready === size) return;
      if (failure !== null) throw new EngineError('internal', `a thread worker (oxidize-mt.worker.js) failed: ${failure}`);
      if (Date.now() > deadline) {
        throw new EngineError('internal', `only ${ready} of ${size} thread workers (oxidize-mt.worker.js) started within ${POOL_START_TIMEOUT_MS / 1000} s`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    pool.unusedWorkers.forEach((w, i) => { w.onerror = handlers[i] ?? null; });
  }
}

/**
 * Imports a build's glue and instantiates its module with `extra` arguments; a failure names the
 * file and the cause where its response shows it (an HTTP status, a wrong content type).
 */
async function instantiateBuild(build: 'mt' | 'st', options: InitOptions, isolated: boolean,
                                extra: Omit<ModuleArgs, 'locateFile' | 'mainScriptUrlOrBlob'>): Promise<OxidizeModule> {
  const files = buildFiles(build, options.wasmBaseUrl);
  if (build === 'mt') {
    // Pool workers whose script does not load fail without a word: check it first.
    const problem = await explainScriptFailure(files.byName['oxidize-mt.worker.js'], { worker: false, isolated });
    if (problem !== null) throw new EngineError('io', problem);
  }
  let factory: ModuleFactory;
  try {
    factory = await importFactory(files);
  } catch (e) {
    const cause = await explainScriptFailure(files.glue, { worker: false, isolated });
    throw new EngineError('io', `could not import ${files.glue}: ${cause ?? toWireError(e).message}`);
  }
  // The .wasm the glue asks for (NAME.wasm or NAME.relaxed.wasm): Emscripten's own error says
  // "Aborted(both async and sync fetching of the wasm failed)" without the URL or the status.
  const args = locateArgs(files);
  const located: string[] = [];
  const locate = args.locateFile!;
  args.locateFile = (path, prefix) => {
    const url = locate(path, prefix);
    if (path.endsWith('.wasm')) located.push(url);
    return url;
  };
  // The glue makes this object its Module: the pool workers it made before failing are on it.
  const moduleArgs: ModuleArgs = { ...args, ...extra };
  try {
    return await factory(moduleArgs);
  } catch (e) {
    (moduleArgs as Partial<OxidizeModule>).PThread?.terminateAllThreads();
    for (const url of located) {
      const cause = await explainScriptFailure(url, { worker: false, isolated });
      if (cause !== null) throw new EngineError('io', `could not instantiate ${url}: ${cause}`);
    }
    const where = located.length > 0 ? located.join(', ') : files.glue;
    throw new EngineError('internal', `could not instantiate ${where}: ${toWireError(e).message}`);
  }
}

// Module.oxidizeRelaxed for wasm/relaxed_select.js: false keeps the SIMD128 module; undefined lets it
// load the relaxed-SIMD copy where the browser validates relaxed SIMD.
function relaxedChoice(options: InitOptions): false | undefined {
  return options.relaxedSimd === false ? false : undefined;
}

/**
 * Why threads cannot run on this page, or null when they can: they need cross-origin isolation
 * (COOP + COEP), which gives workers SharedArrayBuffer.
 */
function threadsUnavailable(): string | null {
  if (scope.crossOriginIsolated !== true) {
    return (
      'the page is not cross-origin isolated, so SharedArrayBuffer and threads are unavailable; serve it (and the ' +
      "engine's worker script) with 'Cross-Origin-Opener-Policy: same-origin' and 'Cross-Origin-Embedder-Policy: " +
      "require-corp' to use threads"
    );
  }
  if (typeof SharedArrayBuffer !== 'function') {
    return 'the page is cross-origin isolated, but this browser gives its workers no SharedArrayBuffer, which threads need';
  }
  return null;
}

async function startRuntime(options: InitOptions): Promise<RuntimeInfo> {
  initOptions = options;
  if (!WebAssembly.validate(SIMD_PROBE)) {
    throw new EngineError('unsupported', 'this browser does not support WebAssembly SIMD128, which oxidize needs');
  }
  const noThreads = threadsUnavailable();
  const isolated = noThreads === null;
  let fallback: string | null = null;  // why one thread runs though threads were not turned off
  if (options.forceSingleThread) {
    // one thread as asked: not a fallback
  } else if (noThreads !== null) {
    fallback = noThreads;
  } else {
    const hardware = typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : 0;
    const choice = chooseThreads(options.threads, hardware);
    if (choice.clamped) log('warn', `oxidize: ${choice.reason}`);
    // Pool workers for two sessions' threads: a load opens the new session (or embedder) before it
    // closes the loaded one, so both hold threads for a moment. A thread the pool has no worker for
    // gets a new Worker, which cannot start while this thread is busy; a session refused for memory
    // is destroyed (its threads joined) at once, and joining such a thread never returned.
    const poolSize = 2 * (choice.threads - 1);
    let mod: OxidizeModule | null = null;
    try {
      mod = await instantiateBuild('mt', options, isolated, {
        oxidizePoolSize: poolSize, oxidizeRelaxed: relaxedChoice(options), printErr: (t) => log('warn', t),
      });
      await waitForThreadPool(mod, poolSize);
      wasm = mod;
      engine = new mod.Engine();
      const r = engine.runtime();
      return finishRuntime({
        build: 'multi-thread',
        threads: choice.threads,
        reason: choice.reason,
        fallback: null,
        crossOriginIsolated: true,
        kernels: r.kernels,
        maxMemory: r.max_memory,
      });
    } catch (e) {
      mod?.PThread?.terminateAllThreads();  // no pool workers left behind by a failed start
      wasm = null;
      engine = null;
      fallback = `the multi-thread build failed to start (${toWireError(e).message})`;
    }
  }
  try {
    wasm = await instantiateBuild('st', options, isolated, { oxidizeRelaxed: relaxedChoice(options), printErr: (t) => log('warn', t) });
    engine = new wasm.Engine();
  } catch (e) {
    wasm = null;
    engine = null;
    const w = toWireError(e);
    // Both causes: the single-thread build's, and what kept the multi-thread build from running.
    throw new EngineError(w.code, `the single-thread build failed to start: ${w.message}${fallback !== null ? `; before that, ${fallback}` : ''}`);
  }
  const r = engine.runtime();
  const reason = fallback ?? 'single-thread build requested (forceSingleThread)';
  if (fallback !== null) log('warn', `oxidize: falling back to the single-thread build (one thread): ${fallback}`);
  else log('info', `oxidize: using the single-thread build: ${reason}`);
  return finishRuntime({
    build: 'single-thread',
    threads: 1,
    reason,
    fallback,
    crossOriginIsolated: scope.crossOriginIsolated === true,
    kernels: r.kernels,
    maxMemory: r.max_memory,
  });
}

function finishRuntime(info: RuntimeInfo): RuntimeInfo {
  runtime = info;
  if (info.build === 'multi-thread') log('info', `oxidize: using the multi-thread build: ${info.reason}`);
  return info;
}

// A trap or abort inside wasm leaves the module unusable: drop it and start a fresh one next time.
async function ensureEngine(): Promise<WasmEngine> {
  if (engine !== null) return engine;
  if (initOptions === null) throw new EngineError('internal', 'the worker was not initialised');
  await startRuntime(initOptions);
  return engine!;
}

function call<T>(fn: (e: WasmEngine) => WasmResult<T>): { ok: true } & T {
  if (engine === null) throw new EngineError('internal', 'the engine is not running');
  let result: WasmResult<T>;
  try {
    result = fn(engine);
  } catch (e) {
    engine = null;
    wasm = null;
    currentModel = null;
    throw new EngineError(
      'internal',
      `the engine crashed (${toWireError(e).message}); it will restart on the next call and the model must be loaded again`,
    );
  }
  if (!result.ok) throw new EngineError(result.code, result.message);
  return result;
}

// ---- model loading --------------------------------------------------------------------------

let currentModel: ModelInfo | null = null;

function reportProgress(id: number, source: ModelInfo['source']) {
  let last = 0;
  return (loaded: number, total: number, force = false) => {
    const now = Date.now();
    if (force || now - last >= 50) {
      last = now;
      post({ id, type: 'progress', loaded, total, source });
    }
  };
}

/** Copies a byte stream into the reserved wasm buffer of `total` bytes (known in advance). */
async function writeStream(
  eng: WasmEngine,
  total: number,
  stream: ReadableStream<Uint8Array>,
  what: string,
  signal: AbortSignal,
  progress: (loaded: number, total: number, force?: boolean) => void,
): Promise<void> {
  call((e) => e.reserve(total));
  const reader = stream.getReader();
  let offset = 0;
  try {
    for (;;) {
      if (signal.aborted) throw new EngineError('aborted', `loading ${what} was aborted after ${offset} of ${total} bytes`);
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (signal.aborted) throw new EngineError('aborted', `loading ${what} was aborted after ${offset} of ${total} bytes`);
        throw new EngineError('io', `reading ${what} failed after ${offset} of ${total} bytes: ${toWireError(e).message}`);
      }
      if (chunk.done) break;
      const bytes = chunk.value;
      if (offset + bytes.length > total) {
        throw new EngineError('io', `${what} sent more than the announced ${total} bytes`);
      }
      const view = eng.bufferView(offset, bytes.length);
      if (view === null) throw new EngineError('internal', 'the model buffer is gone');
      view.set(bytes);
      offset += bytes.length;
      progress(offset, total);
    }
    if (offset !== total) {
      throw new EngineError('io', `${what} ended after ${offset} of ${total} bytes: the download is incomplete`);
    }
    progress(offset, total, true);
  } catch (e) {
    eng.release();
    reader.cancel().catch(() => {});
    throw e;
  }
}

function checkSha256(eng: WasmEngine, expected: string | undefined, what: string): string | null {
  if (expected === undefined || expected === '') return null;
  const want = expected.trim().toLowerCase();
  const got = eng.bufferSha256();
  if (got !== want) {
    eng.release();
    throw new EngineError('invalid_file', `${what}: sha256 mismatch (expected ${want}, got ${got}): the file is corrupt or incomplete`);
  }
  return got;
}

function openModel(eng: WasmEngine, name: string, params: LoadParams, source: ModelInfo['source']): ModelInfo {
  const info = call((e) =>
    e.load(name, {
      n_ctx: params.nCtx ?? 0,
      n_batch: params.nBatch ?? 512,
      n_threads: runtime?.threads ?? 1,
      cacheTypeK: params.cacheTypeK,
      cacheTypeV: params.cacheTypeV,
      swaFull: params.swaFull,
      chatTemplate: params.chatTemplate,
      embeddings: params.embeddings,
      pooling: params.pooling,
    }),
  );
  const { ok: _ok, ...fields } = info;
  checkThreadsRunning(eng, fields.n_threads);
  currentModel = { ...fields, source };
  return currentModel;
}

// The thread count reported (runtime.threads, ModelInfo.n_threads, timings) must be what runs: the
// session's pool took one pool worker per thread besides this one.
function checkThreadsRunning(eng: WasmEngine, sessionThreads: number): void {
  const pool = wasm?.PThread;
  if (runtime === null || runtime.build !== 'multi-thread' || pool === undefined) return;
  const running = pool.runningWorkers.length + 1;
  if (sessionThreads !== runtime.threads || running !== runtime.threads) {
    eng.unload();
    throw new EngineError(
      'internal',
      `the session should run ${runtime.threads} threads, but it has ${sessionThreads} and ${running} are running`,
    );
  }
}

// URL sources: storage/load_url.ts fetches into the wasm buffer (from the store or the network).
async function loadFromUrl(id: number, source: Extract<ModelSource, { kind: 'url' }>, params: LoadParams,
                           signal: AbortSignal): Promise<ModelInfo> {
  const eng = await ensureEngine();
  const store = source.cache ? await modelStore() : null;
  if (source.cache && store === null) log('warn', 'oxidize: neither OPFS nor the Cache API is available here (not a secure context?): models are not stored');
  const progress = { network: reportProgress(id, 'network'), cache: reportProgress(id, 'cache') };
  const fetched = await fetchModel(source.urls, source.store, store, {
    reserve: (size) => void call((e) => e.reserve(size)),
    view: (offset, length) => {
      const view = eng.bufferView(offset, length);
      if (view === null) throw new EngineError('internal', 'the model buffer is gone');
      return view;
    },
    release: () => eng.release(),
    maxMemory: runtime?.maxMemory ?? 2 ** 32,
  }, signal, (m) => log('warn', `oxidize: ${m}`), (loaded, total, from, force) => progress[from](loaded, total, force));
  try {
    return openModel(eng, fetched.name, params, fetched.source);
  } catch (e) {
    // A model that does not load is not kept.
    if (store !== null) for (const url of fetched.urls) await store.delete(url).catch(() => {});
    throw e;
  }
}

function modelStore() {
  return openStore(initOptions?.storage ?? 'auto', (m) => log('info', `oxidize: ${m}`));
}

// The loaded model stays loaded until the new one is ready (wasm/engine.h: Engine::load_model), so
// a failed load (a bad URL, a corrupt file, a context too large) leaves it usable. Only when memory
// cannot hold both files is it unloaded early; after an error, currentModel says what is loaded.
async function handleLoad(id: number, source: ModelSource, params: LoadParams, signal: AbortSignal): Promise<ModelInfo> {
  const previous = currentModel;
  try {
    return await loadSource(id, source, params, signal);
  } catch (e) {
    currentModel = previous !== null && engine !== null && engine.info().ok ? previous : null;
    throw e;
  }
}

async function loadSource(id: number, source: ModelSource, params: LoadParams, signal: AbortSignal): Promise<ModelInfo> {
  const eng = await ensureEngine();
  switch (source.kind) {
    case 'url':
      return loadFromUrl(id, source, params, signal);
    case 'blob':
      await writeStream(eng, source.blob.size, source.blob.stream(), source.name, signal, reportProgress(id, 'blob'));
      checkSha256(eng, params.sha256, source.name);
      return openModel(eng, source.name, params, 'blob');
    case 'buffer': {
      const bytes = new Uint8Array(source.buffer);
      call((e) => e.reserve(bytes.length));
      eng.bufferView(0, bytes.length)!.set(bytes);
      post({ id, type: 'progress', loaded: bytes.length, total: bytes.length, source: 'buffer' });
      checkSha256(eng, params.sha256, source.name);
      return openModel(eng, source.name, params, 'buffer');
    }
  }
}

// ---- generation -----------------------------------------------------------------------------

// Returning to the event loop through a MessageChannel costs microseconds (setTimeout clamps to 4 ms).
const yieldChannel = new MessageChannel();
let yieldResume: (() => void) | null = null;
yieldChannel.port1.onmessage = () => {
  const resume = yieldResume;
  yieldResume = null;
  resume?.();
};
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    yieldResume = resolve;
    yieldChannel.port2.postMessage(null);
  });
}

function requireModel(): WasmEngine {
  if (engine === null || currentModel === null) throw new EngineError('invalid_argument', 'no model is loaded: call load() first');
  return engine;
}

const TOOL_KEYS = ['tools', 'tool_choice', 'parallel_tool_calls'] as const;

// tools: the chat's tools (those keys taken out of `params`), or null when the request has none.
function promptTokens(eng: WasmEngine, prompt: PromptSpec, tools: ToolParams | null): Int32Array {
  switch (prompt.kind) {
    case 'chat': {
      // Rendered and tokenized in one call so that message text never becomes control tokens
      // (a user typing "<|im_end|>" gets text); templates write BOS themselves.
      if (tools !== null) return call((e) => e.chatPromptTools(JSON.stringify(prompt.messages), JSON.stringify(tools))).tokens;
      return call((e) => e.chatPrompt(JSON.stringify(prompt.messages), true)).tokens;
    }
    case 'text':
      return call((e) => e.tokenize(prompt.text, true, true)).tokens;
    case 'tokens':
      return Int32Array.from(prompt.tokens);
  }
}

async function handleGenerate(id: number, prompt: PromptSpec, params: SamplingParams & ToolParams,
                              signal: AbortSignal): Promise<GenerationResult> {
  const eng = requireModel();
  // Chat requests' tool keys go to the template and the reply parser; elsewhere they stay in the
  // options, which refuse them by name.
  const options: Record<string, unknown> = { ...params };
  let tools: ToolParams | null = null;
  if (prompt.kind === 'chat' && TOOL_KEYS.some((k) => options[k] !== undefined && options[k] !== null)) {
    tools = {};
    for (const k of TOOL_KEYS) {
      if (options[k] !== undefined && options[k] !== null) (tools as Record<string, unknown>)[k] = options[k];
      delete options[k];
    }
  }
  const tokens = promptTokens(eng, prompt, tools);
  call((e) => e.begin(tokens, options));
  let text = '';
  const generated: number[] = [];
  const logprobs: TokenEvent[] = [];  // events with probabilities (requests with logprobs)
  const emit = (events: TokenEvent[], deltas: MessageDelta[] | undefined) => {
    for (const ev of events) {
      text += ev.text;
      if (ev.token >= 0) generated.push(ev.token);
      if (ev.logprob !== undefined) logprobs.push(ev);
    }
    if (deltas !== undefined) {
      if (deltas.length > 0) post({ id, type: 'delta', events, message_deltas: deltas });
    } else if (events.length > 0) {
      post({ id, type: 'delta', events });
    }
  };
  for (;;) {
    // One token (or one prompt batch) per step, then back to the event loop: an abort message is
    // seen before the next token, so generation stops within one token of it.
    const step = signal.aborted ? call((e) => e.abort()) : call((e) => e.step(1, 0));
    emit(step.events, step.message_deltas);
    if (step.done) {
      const s = step.stats;
      return {
        text,
        tokens: generated,
        finish_reason: step.tool_finish_reason ?? s.finish_reason,
        ...(step.message !== undefined ? { message: step.message } : {}),
        ...(logprobs.length > 0 ? { logprobs } : {}),
        n_prompt: s.n_prompt,
        n_prompt_cached: s.n_prompt_cached,
        n_generated: s.n_generated,
        prompt_ms: s.prompt_ms,
        generate_ms: s.generate_ms,
        threads: currentModel?.n_threads ?? 1,
        n_context_shifts: s.n_context_shifts,
        n_prompt_dropped: s.n_prompt_dropped,
      };
    }
    await yieldToEventLoop();
  }
}

// ---- benchmark ------------------------------------------------------------------------------

/**
 * `oxidize bench` (core/tools/bench.cpp run_bench, the native CLI's code) on the loaded model with the
 * runtime's threads. One test per call into wasm, returning to the event loop between tests, so an
 * abort stops the run after the current test. The session is re-created (empty) at the end,
 * whatever happened.
 */
async function handleBench(id: number, params: BenchParams, signal: AbortSignal): Promise<BenchReport> {
  const eng = requireModel();
  const threads = runtime?.threads ?? 1;
  if (params.threads !== null && params.threads !== threads) {
    throw new EngineError(
      'invalid_argument',
      `bench: threads = ${params.threads}, but this engine runs ${threads} thread${threads === 1 ? '' : 's'} ` +
        `(engine.runtime.threads); create another engine with createEngine({ threads: ${params.threads} }) to bench that count`,
    );
  }
  const { n_tests: total } = call((e) =>
    e.benchBegin({
      n_prompt: params.n_prompt,
      n_gen: params.n_gen,
      n_depth: params.n_depth,
      repetitions: params.repetitions,
      warmup: params.warmup,
    }),
  );
  let done = 0;
  let failure: unknown = null;
  try {
    for (;;) {
      if (signal.aborted) throw new EngineError('aborted', `the benchmark was aborted after ${done} of ${total} tests`);
      const step = call((e) => e.benchStep());
      done += 1;
      post({ id, type: 'bench_progress', records: JSON.parse(step.records) as BenchRecord[], done, total });
      if (step.done) break;
      await yieldToEventLoop();
    }
  } catch (e) {
    failure = e;
  }
  // After a crash (call() dropped the module) there is no session to restore.
  if (engine !== eng) throw failure ?? new EngineError('internal', 'the engine restarted during the benchmark');
  let end: { markdown: string; records: string; n_threads: number };
  try {
    end = call((e) => e.benchEnd());
  } catch (e) {
    currentModel = null;  // the session could not be re-created: the engine unloaded the model
    const w = toWireError(e);
    throw failure ?? new EngineError(w.code, `${w.message} (re-creating the session after the benchmark; the model was unloaded)`);
  }
  if (failure !== null) throw failure;
  try {
    checkThreadsRunning(eng, end.n_threads);
  } catch (e) {
    currentModel = null;  // checkThreadsRunning unloaded it
    throw e;
  }
  return { records: JSON.parse(end.records) as BenchRecord[], markdown: end.markdown };
}

// ---- dispatch -------------------------------------------------------------------------------

const running = new Map<number, AbortController>();
let queue: Promise<void> = Promise.resolve();

async function handle(req: Request, signal: AbortSignal): Promise<[ResultMap[RequestType], Transferable[]]> {
  if (signal.aborted) throw new EngineError('aborted', `${req.type} was aborted before it started`);
  switch (req.type) {
    case 'init':
      return [await startRuntime(req.options), []];
    case 'load':
      return [await handleLoad(req.id, req.source, req.params, signal), []];
    case 'model':
      return [currentModel, []];
    case 'unload':
      engine?.unload();
      currentModel = null;
      return [null, []];
    case 'tokenize':
      requireModel();
      return [Array.from(call((e) => e.tokenize(req.text, req.add_special, req.parse_special)).tokens), []];
    case 'detokenize':
      requireModel();
      return [call((e) => e.detokenize(Int32Array.from(req.tokens), req.render_special)).text, []];
    case 'apply_chat_template': {
      requireModel();
      const messages: ChatMessage[] = req.messages;
      return [call((e) => e.applyChatTemplate(JSON.stringify(messages), req.add_generation_prompt)).text, []];
    }
    case 'generate':
      return [await handleGenerate(req.id, req.prompt, req.params, signal), []];
    case 'evaluate': {
      requireModel();
      const { n_past } = call((e) => e.evaluate(Int32Array.from(req.tokens), req.n_keep));
      return [{ n_past }, []];
    }
    case 'logits': {
      requireModel();
      const logits = engine!.logits();
      return [logits, logits ? [logits.buffer] : []];
    }
    case 'save_state': {
      requireModel();
      const { bytes } = call((e) => e.saveState());
      return [bytes, [bytes.buffer]];
    }
    case 'load_state': {
      requireModel();
      const { n_past } = call((e) => e.loadState(req.bytes));
      return [{ n_past }, []];
    }
    case 'bench':
      return [await handleBench(req.id, req.params, signal), []];
    case 'embeddings': {
      requireModel();
      const { ok: _ok, ...response } = call((e) => e.embeddings(req.params));
      return [response, []];
    }
    case 'rerank': {
      requireModel();
      const { ok: _ok, ...response } = call((e) => e.rerank(req.params));
      return [response, []];
    }
    case 'cache': {
      const a = req.action;
      const store = await modelStore();
      if (store === null) return [[], []];
      if (a.op === 'delete') await store.delete(a.url);
      if (a.op === 'clear') await store.clear();
      return [await store.list(), []];
    }
    case 'verify_stored': {
      const store = await modelStore();
      if (store === null) throw new EngineError('invalid_argument', `cache.verify(): nothing is stored for ${req.url} (no model store here: neither OPFS nor the Cache API)`);
      return [await verifyStored(store, req.url), []];
    }
    case 'abort':
      return [null, []];
  }
}

scope.onmessage = (event: MessageEvent<Request>) => {
  const req = event.data;
  if (req.type === 'abort') {
    running.get(req.target)?.abort();
    post({ id: req.id, type: 'result', value: null });
    return;
  }
  const controller = new AbortController();
  running.set(req.id, controller);
  queue = queue.then(async () => {
    try {
      const [value, transfer] = await handle(req, controller.signal);
      post({ id: req.id, type: 'result', value }, transfer);
    } catch (e) {
      post({ id: req.id, type: 'error', error: toWireError(e) });
    } finally {
      running.delete(req.id);
    }
  });
};
