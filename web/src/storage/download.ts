// One file of a model from the store or the network, as a Source whose pump() hands its bytes in
// order to a sink (wasm memory). What comes from the network is hashed (SHA-256) and stored with its
// hash; a stored copy is used on its record (complete, its size the stored file's) without being
// read twice, and hashed again only when asked (LoadOptions.verify, engine.cache.verify). Stored
// copies are revalidated with a conditional request (ETag / Last-Modified) unless the caller named a
// version; a download cut short continues with an HTTP Range request, at once (a few times) and on
// the next load (from the bytes the store kept).
import { EngineError, toWireError } from '../errors.js';
import { Sha256 } from './sha256.js';
import type { EntryMeta, ModelStore, StoreWriter } from './store.js';
import { isQuotaError, quotaMessage, storageEstimate, storeFailure } from './store.js';

/** Reconnections within one load after the connection drops mid-file. */
const RETRIES = 3;
/** Bytes a response body is read in (into one reused buffer). */
const READ_SIZE = 1 << 20;

/**
 * Reads a body into one reused buffer where the browser has byte streams (a BYOB reader), so a
 * download leaves no garbage of chunks behind it (they would raise the page's peak memory by a good
 * part of the model before the collector ran); chunks the browser allocates otherwise. A chunk is
 * valid until the next read.
 */
function bodyReader(body: ReadableStream<Uint8Array>): { read(): Promise<Uint8Array | null>; cancel(): void } {
  let byob: ReadableStreamBYOBReader | null = null;
  try {
    byob = body.getReader({ mode: 'byob' });
  } catch {
    byob = null;
  }
  if (byob !== null) {
    const r = byob;
    let buffer = new ArrayBuffer(READ_SIZE);
    return {
      async read() {
        const c = await r.read(new Uint8Array(buffer, 0, READ_SIZE));
        if (c.done || c.value === undefined) return null;
        buffer = c.value.buffer as ArrayBuffer;  // the same memory, handed back
        return c.value;
      },
      cancel: () => void r.cancel().catch(() => {}),
    };
  }
  const r = body.getReader();
  return {
    async read() {
      const c = await r.read();
      return c.done ? null : c.value;
    },
    cancel: () => void r.cancel().catch(() => {}),
  };
}

export interface SourceOptions {
  store: ModelStore | null;
  version: string | null;
  sha256: string | null;
  /** Hash a stored copy again before using it (and download it again when it is damaged). */
  verify: boolean;
  signal: AbortSignal;
  log: (message: string) => void;
}

/** Where a file's bytes go. */
export interface Sink {
  /** Copies `bytes`, the file's bytes from `offset` on, to their place. */
  put(bytes: Uint8Array, offset: number): void;
  /** The place of the file's bytes [offset, offset + length) as one view, for a store to read into directly. */
  place?(offset: number, length: number): Uint8Array;
}

export interface Source {
  url: string;
  /** The file's length; -1 when the server did not say (no Content-Length, or compressed). */
  size: number;
  origin: 'cache' | 'network';
  /**
   * Hands every byte to `sink` in order; resolves once all were checked and stored, with the file's
   * SHA-256 (for a stored copy not verified: the one recorded at download, null if none was).
   */
  pump(sink: Sink, progress: (loaded: number) => void): Promise<string | null>;
  cancel(): void;
}

/** Thrown by a stored source whose bytes no longer match their record: the caller downloads again. */
export class DamagedCopy extends EngineError {}

function aborted(url: string, at: number): EngineError {
  return new EngineError('aborted', `loading ${url} was aborted after ${at} bytes`);
}

async function get(url: string, o: SourceOptions, headers: Record<string, string> = {}): Promise<Response> {
  try {
    // no-store: the store is the copy; the HTTP cache would be a second one (and answer our conditional requests).
    return await fetch(url, { signal: o.signal, headers, cache: 'no-store' });
  } catch (e) {
    if (o.signal.aborted) throw aborted(url, 0);
    throw new EngineError('io', `could not fetch ${url}: ${toWireError(e).message}`);
  }
}

function bodyLength(r: Response): number {
  const encoding = r.headers.get('content-encoding');
  const n = Number(r.headers.get('content-length') ?? NaN);
  return (encoding === null || encoding === 'identity') && Number.isSafeInteger(n) && n >= 0 ? n : -1;
}

/** "bytes A-B/TOTAL" -> {start, total}. */
function contentRange(r: Response): { start: number; total: number } | null {
  const m = /^bytes (\d+)-\d+\/(\d+)$/.exec(r.headers.get('content-range') ?? '');
  return m === null ? null : { start: Number(m[1]), total: Number(m[2]) };
}

function validator(meta: { etag: string | null; lastModified: string | null }): string | null {
  return meta.etag ?? meta.lastModified;
}

function freshMeta(url: string, r: Response, size: number, o: SourceOptions): EntryMeta {
  return {
    url, size, stored: 0, complete: false, etag: r.headers.get('etag'), lastModified: r.headers.get('last-modified'),
    version: o.version, sha256: null, storedAt: 0, backend: o.store?.kind ?? 'opfs',
  };
}

// The record is trusted (ModelStore.get reports a complete entry of another size than the file's as
// incomplete, and openSource compared a sha256 option with the recorded hash): the bytes are read
// once, into their place where the store can, and hashed only for `verify` (or a sha256 option
// with no recorded hash to compare it with). Hashing every load cost 9.5 s of a 1B model's 10.6 s.
function storedSource(url: string, meta: EntryMeta, o: SourceOptions): Source {
  return {
    url, size: meta.size, origin: 'cache',
    cancel() {},
    async pump(sink, progress) {
      const hash = o.verify || (o.sha256 !== null && meta.sha256 === null) ? new Sha256() : null;
      const store = o.store!;
      const direct = sink.place !== undefined && store.readInto !== undefined;
      let at = 0;
      try {
        const chunks = direct ? store.readInto!(url, 0, meta.size, sink.place!.bind(sink)) : store.read(url, 0, meta.size);
        for await (const chunk of chunks) {
          if (o.signal.aborted) throw aborted(url, at);
          hash?.update(chunk);
          if (!direct) sink.put(chunk, at);
          at += chunk.length;
          progress(at);
        }
      } catch (e) {
        if (e instanceof EngineError) throw e;
        throw new DamagedCopy('io', storeFailure(url, e).message);
      }
      if (hash === null) return meta.sha256;
      const sha = hash.hex();
      if (meta.sha256 !== null && sha !== meta.sha256) {
        throw new DamagedCopy('invalid_file', `the stored copy of ${url} is damaged: its sha256 is ${sha}, ${meta.sha256} was recorded at download`);
      }
      if (o.sha256 !== null && sha !== o.sha256) {
        throw new DamagedCopy('invalid_file', `the stored copy of ${url}: sha256 mismatch (expected ${o.sha256}, got ${sha})`);
      }
      return sha;
    },
  };
}

// The store's writer, dropped (with a note saying why) when storing fails: the load goes on.
class Keeper {
  constructor(private writer: StoreWriter | null, private readonly o: SourceOptions, private readonly url: string,
              private readonly meta: EntryMeta) {}
  get stored(): number {
    return this.writer?.stored ?? 0;
  }
  async append(bytes: Uint8Array): Promise<void> {
    if (this.writer === null) return;
    try {
      await this.writer.append(bytes);
    } catch (e) {
      const w = this.writer;
      this.writer = null;
      this.o.log(isQuotaError(e) ? await quotaMessage(this.url, this.meta.size - w.stored)
        : `could not store ${this.url}: ${toWireError(e).message}`);
      await w.close({ ...this.meta, complete: false }).catch(() => {});
    }
  }
  async close(complete: boolean, sha256: string | null): Promise<void> {
    const w = this.writer;
    this.writer = null;
    if (w === null) return;
    try {
      await w.close({ ...this.meta, complete, sha256, storedAt: complete ? Date.now() : 0 });
    } catch (e) {
      this.o.log(isQuotaError(e) ? await quotaMessage(this.url, this.meta.size - w.stored)
        : `could not store ${this.url}: ${toWireError(e).message}`);
      await this.o.store?.delete(this.url).catch(() => {});
    }
  }
}

/** `response` carries the file from byte `from` (a 206 to a Range request, or a 200 from 0). */
function networkSource(url: string, response: Response, from: number, size: number, meta: EntryMeta, o: SourceOptions): Source {
  let body = response.body;
  return {
    url, size, origin: 'network',
    cancel() {
      body?.cancel().catch(() => {});
    },
    async pump(sink, progress) {
      const hash = new Sha256();
      let at = 0;
      // The bytes a resumed download already has come from the store first (before its writer
      // opens: an OPFS file being written cannot be read).
      if (from > 0) {
        try {
          for await (const chunk of o.store!.read(url, 0, from)) {
            hash.update(chunk);
            sink.put(chunk, at);
            at += chunk.length;
            progress(at);
          }
        } catch (e) {
          body?.cancel().catch(() => {});
          throw new DamagedCopy('io', storeFailure(url, e).message);
        }
      }
      let keeper = new Keeper(null, o, url, meta);
      const est = o.store === null ? null : await storageEstimate();
      if (est !== null && est.quota - est.usage < size - from) {
        // Not even tried: writing most of a model and then failing would only evict other data.
        o.log(await quotaMessage(url, size - from));
      } else if (o.store !== null) {
        try {
          keeper = new Keeper(await o.store.write(url, from, meta), o, url, meta);
        } catch (e) {
          o.log(isQuotaError(e) ? await quotaMessage(url, size - from) : `could not store ${url}: ${toWireError(e).message}`);
          await o.store.delete(url).catch(() => {});
        }
      }
      try {
        let retries = 0;
        for (;;) {
          if (body === null) throw new EngineError('io', `${url}: the response has no body`);
          const reader = bodyReader(body);
          let failure: unknown = null;
          for (;;) {
            if (o.signal.aborted) throw aborted(url, at);
            let bytes: Uint8Array | null;
            try {
              bytes = await reader.read();
            } catch (e) {
              failure = e;
              break;
            }
            if (bytes === null) break;
            if (size >= 0 && at + bytes.length > size) throw new EngineError('io', `${url} sent more than the announced ${size} bytes`);
            hash.update(bytes);
            sink.put(bytes, at);
            await keeper.append(bytes);
            at += bytes.length;
            progress(at);
          }
          if (o.signal.aborted) throw aborted(url, at);
          if (failure === null && (size < 0 || at === size)) break;
          // Cut short: continue from `at` where the server can say it is the same file.
          const why = failure === null ? 'the connection closed early' : toWireError(failure).message;
          const v = validator(meta);
          if (size < 0 || v === null || retries >= RETRIES) {
            throw new EngineError('io', `${url} ended after ${at} of ${size} bytes (${why}): the download is incomplete`);
          }
          retries += 1;
          o.log(`${url}: ${why} after ${at} of ${size} bytes; resuming with a Range request (try ${retries} of ${RETRIES})`);
          const r = await get(url, o, { range: `bytes=${at}-`, 'if-range': v });
          const cr = contentRange(r);
          if (r.status !== 206 || cr === null || cr.start !== at || cr.total !== size) {
            r.body?.cancel().catch(() => {});
            throw new EngineError('io', `${url} ended after ${at} of ${size} bytes (${why}), and the server did not resume it (HTTP ${r.status})`);
          }
          body = r.body;
        }
      } catch (e) {
        // What arrived stays stored (incomplete) for the next load to resume.
        await keeper.close(false, null);
        body?.cancel().catch(() => {});
        throw e;
      }
      const sha = hash.hex();
      if (o.sha256 !== null && sha !== o.sha256) {
        await keeper.close(false, null);
        await o.store?.delete(url).catch(() => {});
        throw new EngineError('invalid_file', `${url}: sha256 mismatch (expected ${o.sha256}, got ${sha}): the file is corrupt or incomplete`);
      }
      await keeper.close(size >= 0, sha);
      return sha;
    },
  };
}

function conditional(meta: EntryMeta): Record<string, string> | null {
  const h: Record<string, string> = {};
  if (meta.etag !== null) h['if-none-match'] = meta.etag;
  if (meta.lastModified !== null) h['if-modified-since'] = meta.lastModified;
  return Object.keys(h).length > 0 ? h : null;
}

async function fromNetwork(url: string, r: Response, o: SourceOptions): Promise<Source> {
  if (!r.ok || r.status === 206) {
    r.body?.cancel().catch(() => {});
    throw new EngineError('io', `could not fetch ${url}: HTTP ${r.status} ${r.statusText}`);
  }
  if (r.status !== 200 && r.status !== 203) throw new EngineError('io', `could not fetch ${url}: HTTP ${r.status}`);
  const size = bodyLength(r);
  await o.store?.delete(url).catch(() => {});
  return networkSource(url, r, 0, size, freshMeta(url, r, size, o), { ...o, store: size >= 0 ? o.store : null });
}

/** The file at `url`: the stored copy when it is still current, else (the rest of) a download. */
export async function openSource(url: string, o: SourceOptions): Promise<Source> {
  const store = o.store;
  let meta = store === null ? null : await store.get(url).catch(() => null);
  if (meta !== null && o.version !== null && meta.version !== o.version) {
    o.log(`the stored copy of ${url} is version ${meta.version ?? '(none)'}, ${o.version} was asked for: downloading it again`);
    await store!.delete(url);
    meta = null;
  }
  if (meta !== null && meta.complete && o.sha256 !== null && meta.sha256 !== null && meta.sha256 !== o.sha256) {
    // Compared with the record, not the bytes: the copy is another file than the one asked for.
    o.log(`the stored copy of ${url} has sha256 ${meta.sha256} (recorded at download), ${o.sha256} was asked for: downloading it again`);
    await store!.delete(url);
    meta = null;
  }
  if (meta !== null && meta.complete) {
    const headers = o.version === null ? conditional(meta) : null;
    if (headers === null) return storedSource(url, meta, o);
    let r: Response;
    try {
      r = await fetch(url, { signal: o.signal, headers, cache: 'no-store' });
    } catch (e) {
      if (o.signal.aborted) throw aborted(url, 0);
      o.log(`could not revalidate ${url} (${toWireError(e).message}): using the stored copy`);
      return storedSource(url, meta, o);
    }
    if (r.status === 304) return storedSource(url, meta, o);
    if (r.status === 200) {
      o.log(`${url} changed on the server (ETag ${r.headers.get('etag') ?? '-'}, was ${meta.etag ?? '-'}): downloading it again`);
      return fromNetwork(url, r, o);
    }
    r.body?.cancel().catch(() => {});
    o.log(`revalidating ${url} answered HTTP ${r.status}: using the stored copy`);
    return storedSource(url, meta, o);
  }
  if (meta !== null && meta.stored > 0 && validator(meta) !== null) {
    const r = await get(url, o, { range: `bytes=${meta.stored}-`, 'if-range': validator(meta)! });
    const cr = contentRange(r);
    if (r.status === 206 && cr !== null && cr.start === meta.stored && cr.total === meta.size) {
      o.log(`resuming ${url} from byte ${meta.stored} of ${meta.size}`);
      return networkSource(url, r, meta.stored, meta.size, meta, o);
    }
    if (r.status !== 206) return fromNetwork(url, r, o);
    r.body?.cancel().catch(() => {});  // a range of something else: start over
    return fromNetwork(url, await get(url, o), o);
  }
  return fromNetwork(url, await get(url, o), o);
}

/**
 * The first bytes of `url` up to `length` (fewer at the file's end), and the file's size: from the
 * store when it holds them, else with a Range request (a server that ignores Range sends the whole
 * file, of which only the first bytes are read).
 */
export async function readPrefix(url: string, length: number, o: SourceOptions): Promise<{ bytes: Uint8Array; size: number }> {
  const meta = o.store === null ? null : await o.store.get(url).catch(() => null);
  if (meta !== null && (meta.complete ? meta.size : meta.stored) >= Math.min(length, meta.size)) {
    const parts: Uint8Array[] = [];
    for await (const c of o.store!.read(url, 0, Math.min(length, meta.size))) parts.push(c.slice());
    return { bytes: concat(parts), size: meta.size };
  }
  const r = await get(url, o, { range: `bytes=0-${length - 1}` });
  if (!r.ok || r.body === null) throw new EngineError('io', `could not fetch ${url}: HTTP ${r.status} ${r.statusText}`);
  const size = r.status === 206 ? contentRange(r)?.total ?? -1 : bodyLength(r);
  if (size < 0) throw new EngineError('io', `${url}: the server gives no length (Content-Length or Content-Range), which a split model needs`);
  const reader = r.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  while (n < length) {
    const c = await reader.read();
    if (c.done) break;
    parts.push(c.value);
    n += c.value.length;
  }
  reader.cancel().catch(() => {});
  const bytes = concat(parts);
  return { bytes: bytes.subarray(0, Math.min(length, bytes.length)), size };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
