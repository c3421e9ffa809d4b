// Starts the engine worker with the literal `new Worker(new URL('./worker.js', import.meta.url), ...)`
// that bundlers (Vite, webpack 5, esbuild, Parcel) detect, bundle and rewrite; and, when it does not
// start, finds out why (a Worker's error event says nothing) so createEngine can reject with the cause.
import { explainScriptFailure } from './asset_check.js';

export interface StartedWorker {
  worker: Worker;
  /** The script's URL where it is known: given by the caller, or this file unbundled. */
  url: string | null;
}

/** `workerUrl`: the caller's; absent, the package's own worker.js (as bundled, if it was). */
export function startWorker(workerUrl?: string | URL): StartedWorker {
  if (workerUrl !== undefined) {
    const url = new URL(workerUrl, location.href).href;
    return { worker: new Worker(url, { type: 'module', name: 'oxidize' }), url };
  }
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'oxidize' });
  // Unbundled (this module is still dist/assets.js) worker.js is beside it; a bundler renames both.
  const own = new URL(import.meta.url);
  const url = own.pathname.endsWith('/assets.js') ? new URL('worker.js', own).href : null;
  return { worker, url };
}

/** Why the engine worker (at `url`, when known) did not start, as a sentence for EngineError. */
export async function explainWorkerFailure(url: string | null): Promise<string> {
  const isolated = globalThis.crossOriginIsolated === true;
  const cause = url !== null ? await explainScriptFailure(url, { worker: true, isolated }) : null;
  if (cause !== null) return `the engine worker could not start: ${cause}`;
  const where = url ?? 'the bundled worker.js';
  return (
    `the engine worker could not start: its script (${where}) or a module it imports failed to load or to run ` +
    `(the browser's console names it)` +
    (isolated
      ? '; on a cross-origin isolated page every worker script must be served with ' +
        "'Cross-Origin-Embedder-Policy: require-corp', as the page is"
      : '')
  );
}
