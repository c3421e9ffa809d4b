// A model from its URL(s) into the engine's wasm buffer: one file copied as it streams, or the
// shards of a split GGUF joined as they stream (gguf_split.ts). The size is checked against wasm
// memory before any tensor data is downloaded; a stored copy found damaged is downloaded again.
import { EngineError } from '../errors.js';
import type { UrlLoadParams } from '../protocol.js';
import type { Source, SourceOptions } from './download.js';
import { DamagedCopy, openSource, readPrefix } from './download.js';
import type { GgufHeader } from './gguf_split.js';
import { mergeLayout, parseGgufHeader, shardUrls } from './gguf_split.js';
import type { ModelStore } from './store.js';

export interface ModelBuffer {
  /** Reserves the wasm buffer (throws EngineError "too_large" when it cannot). */
  reserve(size: number): void;
  view(offset: number, length: number): Uint8Array;
  release(): void;
  /** Bytes wasm memory can hold at most (runtime.maxMemory). */
  maxMemory: number;
}

export interface FetchedModel {
  name: string;
  source: 'cache' | 'network';
  urls: string[];
}

type Progress = (loaded: number, total: number, source: 'cache' | 'network', force?: boolean) => void;

const gib = (n: number) => `${(n / 2 ** 30).toFixed(2)} GiB`;

function checkFits(name: string, size: number, buffer: ModelBuffer): void {
  if (size > buffer.maxMemory) {
    throw new EngineError(
      'too_large',
      `${name} is ${gib(size)} (${size} bytes), larger than wasm memory can hold: wasm32 is limited to ` +
        `${gib(buffer.maxMemory)} (${buffer.maxMemory} bytes), which must also fit the KV cache and working buffers; ` +
        'use a smaller quantization of the model',
    );
  }
}

// Opens url's source, pumps it, and opens it once more from the network when the stored copy
// turned out damaged (DamagedCopy): a bad stored copy is never final.
async function pumpWithRetry(url: string, o: SourceOptions, first: Source, run: (s: Source) => Promise<string | null>): Promise<Source> {
  try {
    await run(first);
    return first;
  } catch (e) {
    if (!(e instanceof DamagedCopy) || o.store === null) throw e;
    o.log(`${e.message}; downloading it again`);
    await o.store.delete(url).catch(() => {});
    const again = await openSource(url, o);
    await run(again);
    return again;
  }
}

function fileName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.split('/').pop() || url);
}

async function loadOne(url: string, o: SourceOptions, buffer: ModelBuffer, progress: Progress): Promise<FetchedModel> {
  const name = fileName(url);
  const src = await openSource(url, o);
  if (src.size >= 0) {
    try {
      checkFits(name, src.size, buffer);
    } catch (e) {
      src.cancel();
      throw e;
    }
  }
  let chunks: Uint8Array[] | null = null;  // a length the server did not give: gathered, then copied in
  let loaded = 0;
  const used = await pumpWithRetry(url, o, src, async (s) => {
    if (s.size >= 0) {
      try {
        buffer.reserve(s.size);
      } catch (e) {
        s.cancel();
        throw e;
      }
      try {
        const sink = { put: (b: Uint8Array, at: number) => buffer.view(at, b.length).set(b), place: (at: number, n: number) => buffer.view(at, n) };
        return await s.pump(sink, (n) => progress(n, s.size, s.origin));
      } catch (e) {
        buffer.release();
        throw e;
      }
    }
    chunks = [];
    let n = 0;
    const sha = await s.pump({ put: (b) => { chunks!.push(b.slice()); n += b.length; } }, (k) => progress(k, 0, s.origin));
    checkFits(name, n, buffer);
    buffer.reserve(n);
    let at = 0;
    for (const c of chunks) {
      buffer.view(at, c.length).set(c);
      at += c.length;
    }
    chunks = null;
    loaded = n;
    return sha;
  });
  const size = used.size >= 0 ? used.size : loaded;
  progress(size, size, used.origin, true);
  return { name, source: used.origin, urls: [url] };
}

// Every shard's header, read before any tensor data (from the store, or with a Range request).
async function shardHeader(url: string, o: SourceOptions): Promise<{ header: GgufHeader; size: number; prefix: Uint8Array }> {
  for (let want = 1 << 20; ; want *= 4) {
    const { bytes, size } = await readPrefix(url, want, o);
    const header = parseGgufHeader(bytes, url);
    if (header !== null) return { header, size, prefix: bytes.subarray(0, Math.min(header.dataStart, bytes.length)) };
    if (bytes.length >= size) throw new EngineError('invalid_file', `${url} ends (${size} bytes) inside its GGUF header`);
  }
}

async function loadSplit(urls: string[], params: UrlLoadParams, o: SourceOptions, buffer: ModelBuffer,
                         progress: Progress): Promise<FetchedModel> {
  const name = fileName(urls[0]);
  const shards = [];
  for (const url of urls) shards.push(await shardHeader(url, { ...o, sha256: null }));
  const layout = mergeLayout(shards.map((s) => s.header), shards.map((s) => s.size), urls);
  checkFits(`${name} (${urls.length} shards)`, layout.size, buffer);
  const total = shards.reduce((s, x) => s + x.size, 0);
  buffer.reserve(layout.size);
  let done = 0;
  let fromStore = true;
  try {
    buffer.view(0, layout.header.length).set(layout.header);
    for (let i = 0; i < urls.length; i++) {
      const so = { ...o, sha256: params.sha256[i] ?? null };
      const { header, size, prefix } = shards[i];
      const src = await openSource(urls[i], so);
      const used = await pumpWithRetry(urls[i], so, src, (s) => {
        if (s.size !== size) throw new EngineError('io', `${urls[i]} changed while it was loading (${s.size} bytes, ${size} before)`);
        // Shard bytes past its header go to its place in the merged file; its header must be the
        // one the layout was made from (a file replaced since would be joined wrongly).
        return s.pump({ put: (b, at) => {
          const end = at + b.length;
          for (let k = at; k < Math.min(end, prefix.length); k++) {
            if (b[k - at] !== prefix[k]) throw new EngineError('io', `${urls[i]} changed while it was loading: load it again`);
          }
          if (end <= header.dataStart) return;
          const skip = Math.max(0, header.dataStart - at);
          buffer.view(layout.shardBase[i] + at + skip - header.dataStart, b.length - skip).set(skip > 0 ? b.subarray(skip) : b);
        } }, (n) => progress(done + n, total, s.origin));
      });
      if (used.origin === 'network') fromStore = false;
      done += size;
    }
  } catch (e) {
    buffer.release();
    throw e;
  }
  progress(total, total, fromStore ? 'cache' : 'network', true);
  return { name, source: fromStore ? 'cache' : 'network', urls };
}

/**
 * Fetches the model at `urls` (one file, or a split model's shards in order; a first shard's URL
 * alone stands for all of them) into `buffer`.
 */
export async function fetchModel(urls: string[], params: UrlLoadParams, store: ModelStore | null, buffer: ModelBuffer,
                                 signal: AbortSignal, log: (m: string) => void, progress: Progress): Promise<FetchedModel> {
  if (urls.length === 0) throw new EngineError('invalid_argument', 'load() was given an empty list of URLs');
  const all = urls.length === 1 ? shardUrls(urls[0]) ?? urls : urls;
  if (params.sha256.length > 0 && params.sha256.length !== all.length) {
    throw new EngineError('invalid_argument', `${params.sha256.length} sha256 values for ${all.length} files: give one per file`);
  }
  const o: SourceOptions = { store, version: params.version, sha256: params.sha256[0] ?? null, verify: params.verify, signal, log };
  return all.length === 1 ? loadOne(all[0], o, buffer, progress) : loadSplit(all, params, o, buffer, progress);
}
