// navigator.storage.persist() from the page (StorageManager.persist is not exposed in workers): asked
// once per page, the first time a model is to be stored, so the browser does not evict models
// under storage pressure.
let asked: Promise<boolean> | null = null;

/** Whether storage is persistent for this origin, asking for it the first time. */
export function requestPersistence(): Promise<boolean> {
  asked ??= (async () => {
    try {
      const storage = typeof navigator === 'undefined' ? undefined : navigator.storage;
      if (storage?.persist === undefined) return false;
      if (await storage.persisted?.()) return true;
      return await storage.persist();
    } catch {
      return false;
    }
  })();
  return asked;
}
