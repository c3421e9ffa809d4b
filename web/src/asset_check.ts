// Finds out why a script or wasm file of the package did not load, by fetching it: browsers tell a
// page nothing about a worker that failed to start (an `error` Event without a message), yet the
// usual causes (HTTP errors, another origin, a missing COEP header on a cross-origin isolated page)
// show in the response.

/** The header values that let a worker start under a page's `Cross-Origin-Embedder-Policy: require-corp`. */
const COEP_OK = new Set(['require-corp', 'credentialless']);

export interface ScriptCheck {
  /** A worker script (workers must be same-origin; under COEP their own response needs COEP). */
  worker: boolean;
  /** The page is cross-origin isolated (COOP + COEP): subresources need CORP or CORS when cross-origin. */
  isolated: boolean;
}

/**
 * The reason `url` cannot load as `check` says, or null when the response looks fine (or the
 * cause is not visible from here). Never throws.
 */
export async function explainScriptFailure(url: string, check: ScriptCheck): Promise<string | null> {
  if (/^(data|blob):/.test(url)) return null;  // inlined by a bundler, or made here: nothing to fetch
  const here = typeof location !== 'undefined' ? location.origin : null;
  const crossOrigin = here !== null && new URL(url).origin !== here;
  if (check.worker && crossOrigin) {
    return `${url} is on another origin than the page (${here}): browsers start workers from the page's origin only`;
  }
  let response: Response;
  try {
    response = await fetch(url, { cache: 'no-store' });
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return crossOrigin
      ? `fetching ${url} failed (${why}): a file from another origin needs CORS ('Access-Control-Allow-Origin') ` +
          "and, on a cross-origin isolated page, 'Cross-Origin-Resource-Policy: cross-origin'"
      : `fetching ${url} failed (${why})`;
  }
  response.body?.cancel().catch(() => {});
  if (!response.ok) return `${url} answered HTTP ${response.status} ${response.statusText}`.trimEnd();
  if (check.isolated && check.worker) {
    const coep = (response.headers.get('cross-origin-embedder-policy') ?? '').split(';')[0].trim();
    if (!COEP_OK.has(coep)) {
      return (
        `${url} is served ${coep === '' ? 'without a' : `with '${coep}' as its`} Cross-Origin-Embedder-Policy header: ` +
        "on a cross-origin isolated page a worker starts only when its script's response carries " +
        "'Cross-Origin-Embedder-Policy: require-corp' too (send COOP/COEP on every response, not only the page's)"
      );
    }
  }
  const type = response.headers.get('content-type') ?? '';
  if (url.endsWith('.js') && !/javascript|ecmascript/i.test(type)) {
    return `${url} is served as '${type || 'no content-type'}', not as JavaScript ('text/javascript')`;
  }
  return null;
}
