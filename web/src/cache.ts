// Model cache over the Cache API (runs in the worker). An entry is written only after a download
// was complete (length checked, sha256 when the caller gave one) and parsed; every read checks the
// stored length again, so an interrupted download or write is never taken for a complete file.

/** Bump when the entry format changes: old entries are then simply not found. */
export const CACHE_NAME = 'oxidize-models-v1';
const LENGTH_HEADER = 'x-oxidize-length';
const SHA256_HEADER = 'x-oxidize-sha256';

export interface CachedModel {
  blob: Blob;
  length: number;
  /** Present when the file's hash was checked when it was stored. */
  sha256: string | null;
}

function cacheStorage(): CacheStorage | null {
  return typeof caches === 'undefined' ? null : caches;
}

export function cacheAvailable(): boolean {
  return cacheStorage() !== null;
}

/**
 * The cached copy of `url`, or null. An entry whose recorded length does not match its body is
 * deleted and reported through `log`.
 */
export async function lookupModel(url: string, log: (message: string) => void): Promise<CachedModel | null> {
  const storage = cacheStorage();
  if (storage === null) return null;
  const cache = await storage.open(CACHE_NAME);
  const response = await cache.match(url);
  if (response === undefined) return null;
  const length = Number(response.headers.get(LENGTH_HEADER));
  const blob = await response.blob();
  if (!Number.isSafeInteger(length) || length <= 0 || blob.size !== length) {
    log(`discarding the cached copy of ${url}: it holds ${blob.size} bytes, ${length} expected`);
    await cache.delete(url);
    return null;
  }
  return { blob, length, sha256: response.headers.get(SHA256_HEADER) };
}

/**
 * Stores `length` bytes, produced by `chunk(offset, size)` (copies), under `url`. Cache.put commits
 * only once the whole body was read, so a write cut short leaves no entry.
 */
export async function storeModel(
  url: string,
  length: number,
  sha256: string | null,
  chunk: (offset: number, size: number) => Uint8Array,
): Promise<void> {
  const storage = cacheStorage();
  if (storage === null) return;
  const chunkSize = 4 << 20;
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= length) {
        controller.close();
        return;
      }
      const size = Math.min(chunkSize, length - offset);
      controller.enqueue(chunk(offset, size));
      offset += size;
    },
  });
  const headers = new Headers({ 'content-type': 'application/octet-stream', [LENGTH_HEADER]: String(length) });
  if (sha256 !== null) headers.set(SHA256_HEADER, sha256);
  const cache = await storage.open(CACHE_NAME);
  await cache.put(url, new Response(body, { headers }));
}

export async function listModels(): Promise<string[]> {
  const storage = cacheStorage();
  if (storage === null) return [];
  const cache = await storage.open(CACHE_NAME);
  return (await cache.keys()).map((r) => r.url);
}

export async function deleteModel(url: string): Promise<boolean> {
  const storage = cacheStorage();
  if (storage === null) return false;
  return (await storage.open(CACHE_NAME)).delete(url);
}

export async function clearModels(): Promise<void> {
  const storage = cacheStorage();
  if (storage !== null) await storage.delete(CACHE_NAME);
}
