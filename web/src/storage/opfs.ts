// The model store in the Origin Private File System: per URL, KEY.bin (the bytes so far) and
// KEY.json (its EntryMeta), KEY = the URL's SHA-256. Runs in the engine worker, where sync access
// handles write without a copy through a stream; what is stored is the file's size, so a download
// cut short is resumed from exactly the bytes that reached the disk.
import type { EntryMeta, ModelStore, StoreWriter } from './store.js';
import { entryKey } from './store.js';

const DIR = 'oxidize-models-v2';
const READ_CHUNK = 8 << 20;
/** Sync reads go through one buffer of this size (small: it adds to the page's peak memory). */
const SYNC_READ_CHUNK = 1 << 20;
/** Sync reads straight into their place (readInto) go in parts of this size (one progress event each). */
const PLACE_CHUNK = 16 << 20;

interface SyncHandle {
  read(buffer: Uint8Array, options: { at: number }): number;
  write(buffer: Uint8Array, options: { at: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}
type SyncCapableHandle = FileSystemFileHandle & {
  createSyncAccessHandle?: (options?: { mode: 'read-only' | 'readwrite' }) => Promise<SyncHandle>;
};

// A sync handle for reading: shared ('read-only', Chromium 121+) where the browser knows the mode.
async function openForReading(handle: SyncCapableHandle): Promise<SyncHandle | null> {
  if (handle.createSyncAccessHandle === undefined) return null;
  try {
    return await handle.createSyncAccessHandle({ mode: 'read-only' });
  } catch {
    return handle.createSyncAccessHandle().catch(() => null);  // another reader or a writer holds it
  }
}

async function readMeta(dir: FileSystemDirectoryHandle, key: string): Promise<EntryMeta | null> {
  try {
    const file = await (await dir.getFileHandle(`${key}.json`)).getFile();
    return JSON.parse(await file.text()) as EntryMeta;
  } catch {
    return null;
  }
}

async function writeMeta(dir: FileSystemDirectoryHandle, key: string, meta: EntryMeta): Promise<void> {
  const handle = (await dir.getFileHandle(`${key}.json`, { create: true })) as SyncCapableHandle;
  const bytes = new TextEncoder().encode(JSON.stringify(meta));
  if (handle.createSyncAccessHandle !== undefined) {
    const h = await handle.createSyncAccessHandle();
    try {
      h.truncate(0);
      h.write(bytes, { at: 0 });
      h.flush();
    } finally {
      h.close();
    }
    return;
  }
  const w = await handle.createWritable();
  await w.write(bytes);
  await w.close();
}

async function dataSize(dir: FileSystemDirectoryHandle, key: string): Promise<number> {
  try {
    return (await (await dir.getFileHandle(`${key}.bin`)).getFile()).size;
  } catch {
    return 0;
  }
}

class OpfsWriter implements StoreWriter {
  stored: number;
  constructor(
    private readonly dir: FileSystemDirectoryHandle,
    private readonly key: string,
    private readonly sync: SyncHandle | null,
    private readonly stream: FileSystemWritableFileStream | null,
    keep: number,
  ) {
    this.stored = keep;
  }

  async append(bytes: Uint8Array): Promise<void> {
    if (this.sync !== null) {
      let done = 0;
      while (done < bytes.length) done += this.sync.write(bytes.subarray(done), { at: this.stored + done });
    } else {
      await this.stream!.write({ type: 'write', position: this.stored, data: bytes as Uint8Array<ArrayBuffer> });
    }
    this.stored += bytes.length;
  }

  async close(meta: EntryMeta): Promise<void> {
    if (this.sync !== null) {
      this.sync.flush();
      this.sync.close();
    } else {
      await this.stream!.close();
    }
    await writeMeta(this.dir, this.key, { ...meta, stored: this.stored, backend: 'opfs' });
  }
}

/**
 * Stored bytes [from, to) of `url`: into `place`'s views (ModelStore.readInto) when given, else
 * through one small reused buffer (ModelStore.read).
 */
async function* readStored(dir: FileSystemDirectoryHandle, url: string, from: number, to: number,
                           place: ((at: number, length: number) => Uint8Array) | null): AsyncIterable<Uint8Array> {
  const handle = (await dir.getFileHandle(`${entryKey(url)}.bin`)) as SyncCapableHandle;
  const sync = await openForReading(handle);
  if (sync === null) {
    // Without a sync handle: a new buffer per chunk.
    const file = await handle.getFile();
    if (file.size < to) throw new Error(`it holds ${file.size} bytes, ${to} expected`);
    for (let at = from; at < to; at += READ_CHUNK) {
      const chunk = new Uint8Array(await file.slice(at, Math.min(to, at + READ_CHUNK)).arrayBuffer());
      if (place === null) {
        yield chunk;
      } else {
        const view = place(at, chunk.length);
        view.set(chunk);
        yield view;
      }
    }
    return;
  }
  try {
    if (sync.getSize() < to) throw new Error(`it holds ${sync.getSize()} bytes, ${to} expected`);
    // One buffer, reused: reading a model leaves no garbage the size of the model.
    const buffer = place === null ? new Uint8Array(Math.min(SYNC_READ_CHUNK, to - from)) : null;
    for (let at = from; at < to;) {
      const want = Math.min(buffer?.length ?? PLACE_CHUNK, to - at);
      const view = buffer === null ? place!(at, want) : buffer.subarray(0, want);
      const n = sync.read(view, { at });
      if (n <= 0) throw new Error(`reading at ${at} returned ${n}`);
      yield view.subarray(0, n);
      at += n;
    }
  } finally {
    sync.close();
  }
}

export async function openOpfsStore(): Promise<ModelStore> {
  if (typeof navigator === 'undefined' || navigator.storage?.getDirectory === undefined) {
    throw new Error('navigator.storage.getDirectory is missing');
  }
  const root = await navigator.storage.getDirectory();
  let dir = await root.getDirectoryHandle(DIR, { create: true });

  const store: ModelStore = {
    kind: 'opfs',
    async get(url) {
      const key = entryKey(url);
      const meta = await readMeta(dir, key);
      if (meta === null || meta.url !== url) return null;
      const stored = await dataSize(dir, key);
      // A complete entry with another size than recorded is damaged: reported as partial of 0.
      if (meta.complete && stored !== meta.size) return { ...meta, complete: false, stored: 0 };
      return { ...meta, stored: Math.min(stored, meta.stored) };
    },
    read(url, from, to) {
      return readStored(dir, url, from, to, null);
    },
    readInto(url, from, to, place) {
      return readStored(dir, url, from, to, place);
    },
    async write(url, keep, meta) {
      const key = entryKey(url);
      // Recorded as incomplete first: a write cut short never passes for a whole file.
      await writeMeta(dir, key, { ...meta, complete: false, stored: keep, backend: 'opfs' });
      const handle = (await dir.getFileHandle(`${key}.bin`, { create: true })) as SyncCapableHandle;
      if (handle.createSyncAccessHandle !== undefined) {
        const sync = await handle.createSyncAccessHandle();
        sync.truncate(keep);
        return new OpfsWriter(dir, key, sync, null, keep);
      }
      const stream = await handle.createWritable({ keepExistingData: keep > 0 });
      await stream.truncate(keep);
      return new OpfsWriter(dir, key, null, stream, keep);
    },
    async delete(url) {
      const key = entryKey(url);
      let found = false;
      for (const name of [`${key}.json`, `${key}.bin`]) {
        try {
          await dir.removeEntry(name);
          found = true;
        } catch {
          // absent
        }
      }
      return found;
    },
    async list() {
      const out: EntryMeta[] = [];
      for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) {
        if (!name.endsWith('.json')) continue;
        const meta = await readMeta(dir, name.slice(0, -5));
        if (meta !== null) out.push({ ...meta, stored: Math.min(meta.stored, await dataSize(dir, name.slice(0, -5))) });
      }
      return out.sort((a, b) => a.url.localeCompare(b.url));
    },
    async clear() {
      await root.removeEntry(DIR, { recursive: true }).catch(() => {});
      dir = await root.getDirectoryHandle(DIR, { create: true });
    },
  };
  return store;
}
