// The model store over the Cache API, where OPFS is missing: per URL, its bytes in parts of PART
// bytes (Cache.put cannot append, so a download cut short keeps its whole parts and resumes after
// the last one) and a JSON meta entry, under synthetic keys https://oxidize.invalid/v2/KEY/....
import type { EntryMeta, ModelStore, StoreWriter } from './store.js';
import { entryKey } from './store.js';

const CACHE_NAME = 'oxidize-models-v2';
/** The cache of the first version of the package (one entry per URL): removed by clear(). */
const OLD_CACHE_NAME = 'oxidize-models-v1';
const PART = 16 << 20;

const keyUrl = (key: string, what: string) => `https://oxidize.invalid/v2/${key}/${what}`;

function jsonResponse(meta: EntryMeta): Response {
  return new Response(JSON.stringify(meta), { headers: { 'content-type': 'application/json' } });
}

class PartWriter implements StoreWriter {
  private readonly pending: Uint8Array[] = [];
  private pendingBytes = 0;
  stored: number;  // bytes in whole parts already put

  constructor(private readonly cache: Cache, private readonly key: string, keep: number, private readonly meta: EntryMeta) {
    this.stored = keep;
  }

  async append(bytes: Uint8Array): Promise<void> {
    this.pending.push(bytes.slice());
    this.pendingBytes += bytes.length;
    if (this.pendingBytes >= PART) await this.flush(false);
  }

  // Puts the whole parts held (and, at the end, the last short one); the meta then says how many.
  private async flush(last: boolean): Promise<void> {
    const all = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const p of this.pending) {
      all.set(p, at);
      at += p.length;
    }
    let used = 0;
    while (all.length - used >= PART || (last && used < all.length)) {
      const n = Math.min(PART, all.length - used);
      await this.cache.put(keyUrl(this.key, `part/${this.stored / PART}`), new Response(all.slice(used, used + n)));
      used += n;
      this.stored += n;
    }
    this.pending.length = 0;
    this.pendingBytes = 0;
    if (used < all.length) {
      this.pending.push(all.slice(used));
      this.pendingBytes = all.length - used;
    }
    await this.cache.put(keyUrl(this.key, 'meta'), jsonResponse({ ...this.meta, complete: false, stored: this.stored, backend: 'cache-api' }));
  }

  async close(meta: EntryMeta): Promise<void> {
    if (meta.complete || this.pendingBytes >= PART) await this.flush(meta.complete);
    await this.cache.put(keyUrl(this.key, 'meta'), jsonResponse({ ...meta, stored: this.stored, backend: 'cache-api' }));
  }
}

async function partsStored(cache: Cache, key: string, upTo: number): Promise<number> {
  let n = 0;
  while (n < upTo && (await cache.match(keyUrl(key, `part/${n / PART}`))) !== undefined) n += PART;
  return Math.min(n, upTo);
}

export async function openCacheApiStore(): Promise<ModelStore | null> {
  if (typeof caches === 'undefined') return null;
  const open = () => caches.open(CACHE_NAME);
  const metaOf = async (cache: Cache, key: string): Promise<EntryMeta | null> => {
    const r = await cache.match(keyUrl(key, 'meta'));
    return r === undefined ? null : ((await r.json()) as EntryMeta);
  };
  return {
    kind: 'cache-api',
    async get(url) {
      const cache = await open();
      const key = entryKey(url);
      const meta = await metaOf(cache, key);
      if (meta === null || meta.url !== url) return null;
      const stored = await partsStored(cache, key, meta.stored);
      if (meta.complete && stored !== meta.size) return { ...meta, complete: false, stored: 0 };
      return { ...meta, stored };
    },
    async *read(url, from, to) {
      const cache = await open();
      const key = entryKey(url);
      for (let part = Math.floor(from / PART); part * PART < to; part++) {
        const r = await cache.match(keyUrl(key, `part/${part}`));
        if (r === undefined) throw new Error(`part ${part} is missing`);
        const bytes = new Uint8Array(await r.arrayBuffer());
        const start = Math.max(from - part * PART, 0);
        const end = Math.min(to - part * PART, bytes.length);
        if (end < Math.min(to - part * PART, PART)) throw new Error(`part ${part} holds ${bytes.length} bytes`);
        yield bytes.subarray(start, end);
      }
    },
    async write(url, keep, meta) {
      const cache = await open();
      const key = entryKey(url);
      const whole = Math.floor(keep / PART) * PART;  // only whole parts are kept
      const m = { ...meta, complete: false, stored: whole, backend: 'cache-api' as const };
      await cache.put(keyUrl(key, 'meta'), jsonResponse(m));
      return new PartWriter(cache, key, whole, m);
    },
    async delete(url) {
      const cache = await open();
      const key = entryKey(url);
      let found = false;
      for (const req of await cache.keys()) {
        if (req.url.startsWith(keyUrl(key, ''))) found = (await cache.delete(req)) || found;
      }
      return found;
    },
    async list() {
      const cache = await open();
      const out: EntryMeta[] = [];
      for (const req of await cache.keys()) {
        if (!req.url.endsWith('/meta')) continue;
        const r = await cache.match(req);
        if (r !== undefined) out.push((await r.json()) as EntryMeta);
      }
      return out.sort((a, b) => a.url.localeCompare(b.url));
    },
    async clear() {
      await caches.delete(CACHE_NAME);
      await caches.delete(OLD_CACHE_NAME);
    },
  };
}
