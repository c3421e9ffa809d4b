// The model store's contract, shared by its two backends (OPFS: opfs.ts; the Cache API: cache_api.ts),
// and the choice between them. An entry is one file of one URL: its bytes so far (a download cut
// short keeps them, to be resumed with an HTTP Range request) and what was recorded about it.
import { EngineError } from '../errors.js';
import type { StorageBackend, StoredModel } from '../protocol.js';
import { openCacheApiStore } from './cache_api.js';
import { openOpfsStore } from './opfs.js';
import { Sha256 } from './sha256.js';

/** What is recorded about an entry (StoredModel is its public face). */
export type EntryMeta = StoredModel;

export interface StoreWriter {
  /** Appends bytes at the end of what is stored. */
  append(bytes: Uint8Array): Promise<void>;
  /** Bytes stored so far (what a resumed download starts from). */
  readonly stored: number;
  /** Records `meta` (with `stored` set by the writer) and releases the entry. */
  close(meta: EntryMeta): Promise<void>;
}

export interface ModelStore {
  readonly kind: StorageBackend;
  /** The entry of `url`, or null. `stored` is what the backend really holds. */
  get(url: string): Promise<EntryMeta | null>;
  /** Stored bytes of `url` in order, from `from`, as chunks the caller may keep only until the next. */
  read(url: string, from: number, to: number): AsyncIterable<Uint8Array>;
  /**
   * Stored bytes of `url` from `from` to `to` read straight into their place: `place(at, length)`
   * gives the view that file offset `at` goes to, and each view is yielded once filled. Only where
   * the backend reads into a caller's memory (OPFS sync handles); a load then copies nothing in JS.
   */
  readInto?(url: string, from: number, to: number, place: (at: number, length: number) => Uint8Array): AsyncIterable<Uint8Array>;
  /** A writer that keeps the first `keep` stored bytes of `url` (0: starts the entry over). */
  write(url: string, keep: number, meta: EntryMeta): Promise<StoreWriter>;
  delete(url: string): Promise<boolean>;
  list(): Promise<EntryMeta[]>;
  clear(): Promise<void>;
}

/** The entry's name inside a backend: the URL's SHA-256 (URLs hold characters file names cannot). */
export function entryKey(url: string): string {
  const h = new Sha256();
  h.update(new TextEncoder().encode(url));
  return h.hex();
}

export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

export function isQuotaError(e: unknown): boolean {
  return e instanceof DOMException && (e.name === 'QuotaExceededError' || e.code === 22 || /no space|quota/i.test(e.message));
}

/** The origin's storage figures (navigator.storage.estimate()), or null where there are none. */
export async function storageEstimate(): Promise<{ usage: number; quota: number } | null> {
  try {
    const e = await navigator.storage?.estimate?.();
    return e && typeof e.quota === 'number' ? { usage: e.usage ?? 0, quota: e.quota } : null;
  } catch {
    return null;
  }
}

/** A quota failure told with the sizes: what the file needs, what the origin uses and may use. */
export async function quotaMessage(url: string, needed: number): Promise<string> {
  const est = await storageEstimate();
  const figures = est === null ? 'the browser gives no storage estimate'
    : `this origin uses ${mib(est.usage)} of its ${mib(est.quota)} quota, ${mib(Math.max(0, est.quota - est.usage))} free`;
  return `not enough storage to keep ${url}: it needs ${mib(needed)} more, and ${figures} ` +
    '(free space in the browser\'s storage, or delete stored models with engine.cache.delete())';
}

let chosen: Promise<ModelStore | null> | null = null;
let chosenFor: StorageBackend | 'auto' | null = null;

/**
 * The store for `want`: 'auto' is OPFS where the browser has it (navigator.storage.getDirectory)
 * and the Cache API otherwise; null where neither works (e.g. not a secure context).
 */
export function openStore(want: StorageBackend | 'auto', log: (m: string) => void): Promise<ModelStore | null> {
  if (chosen !== null && chosenFor === want) return chosen;
  chosenFor = want;
  chosen = (async () => {
    if (want !== 'cache-api') {
      const s = await openOpfsStore().catch((e: unknown) => {
        log(`OPFS is unavailable (${e instanceof Error ? e.message : String(e)})`);
        return null;
      });
      if (s !== null || want === 'opfs') return s;
    }
    return openCacheApiStore();
  })();
  return chosen;
}

export function storeFailure(url: string, e: unknown): EngineError {
  return new EngineError('io', `the stored copy of ${url} could not be read: ${e instanceof Error ? e.message : String(e)}`);
}
