// engine.cache.verify(url): a stored copy hashed again and compared with the SHA-256 recorded when it
// was downloaded. Loads trust the record (download.ts); this is the explicit check, and a copy that
// fails it is deleted, so the next load downloads the file again.
import { EngineError } from '../errors.js';
import type { StoredCheck } from '../protocol.js';
import { Sha256 } from './sha256.js';
import type { ModelStore } from './store.js';

export async function verifyStored(store: ModelStore, url: string): Promise<StoredCheck> {
  const meta = await store.get(url);
  if (meta === null) throw new EngineError('invalid_argument', `cache.verify(): nothing is stored for ${url}`);
  if (!meta.complete) {
    // ModelStore.get reports a complete copy whose size is not the recorded one as 0 bytes stored.
    throw new EngineError('invalid_argument', `cache.verify(): the stored copy of ${url} is incomplete (${meta.stored} of ` +
      `${meta.size} bytes: a download cut short, which the next load resumes, or a copy of the wrong size, which it downloads again)`);
  }
  const hash = new Sha256();
  let sha256: string | null = null;
  try {
    for await (const chunk of store.read(url, 0, meta.size)) hash.update(chunk);
    sha256 = hash.hex();
  } catch {
    sha256 = null;  // unreadable: damaged
  }
  const ok = sha256 !== null && sha256 === meta.sha256;
  if (!ok) await store.delete(url);
  return { url, sha256, ok };
}
