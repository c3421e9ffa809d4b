// Headless Chromium for the in-browser engines: a tiny static server on 127.0.0.1 with COOP/COEP
// headers (crossOriginIsolated, so the multi-thread wasm builds can use SharedArrayBuffer) and a
// playwright-core driver for Debian's /usr/bin/chromium (never a downloaded browser).
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.gguf': 'application/octet-stream',
};

const ISOLATION = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

// mounts: { '/prefix/': '/abs/dir' }; files: { '/models/x.gguf': '/abs/file' } (exact paths).
export async function startServer({ mounts, files, log = null }) {
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = files[urlPath] ?? null;
    if (!file) {
      for (const [prefix, dir] of Object.entries(mounts)) {
        if (!urlPath.startsWith(prefix)) continue;
        const candidate = path.resolve(dir, '.' + path.posix.normalize('/' + urlPath.slice(prefix.length)));
        // Refuse anything that escapes the mounted folder.
        if (candidate.startsWith(path.resolve(dir) + path.sep)) file = candidate;
        break;
      }
    }
    fs.stat(file ?? '', (err, st) => {
      if (!file || err || !st.isFile()) {
        log?.(`[server] 404 ${urlPath}`);
        res.writeHead(404, { ...ISOLATION, 'content-type': 'text/plain' });
        res.end('not found\n');
        return;
      }
      res.writeHead(200, {
        ...ISOLATION,
        'content-type': MIME[path.extname(file)] || 'application/octet-stream',
        'content-length': st.size,
      });
      fs.createReadStream(file).pipe(res);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

// Flags from shared/TOOLCHAIN.md: without the background-networking ones Chromium floods the closed
// network with refused connections. A fresh profile per launch keeps caches out of the timings.
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];

export async function launchBrowser({ log }) {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    throw new Error('playwright-core is missing: run `npm install --omit=optional` in bench/peers');
  }
  const executablePath = process.env.OXIDIZE_CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath} (apt-get install chromium)`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'oxidize-peers-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    // OXIDIZE_CHROMIUM_ARGS adds flags, e.g. "--js-flags=--perf-prof,--perf-prof-annotate-wasm" to
    // profile the SIMD128 kernels as Chromium's V8 compiles them (perf record -k mono, perf inject --jit).
    args: [...CHROMIUM_ARGS, ...(process.env.OXIDIZE_CHROMIUM_ARGS || '').split(' ').filter(Boolean)],
  });
  return {
    // Opens a page at `url`, forwarding its console to `log`.
    async open(url) {
      const page = await context.newPage();
      page.on('console', (m) => log(`[browser ${m.type()}] ${m.text()}`));
      page.on('pageerror', (e) => log(`[browser pageerror] ${e.message}`));
      await page.goto(url);
      return page;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

// Runs a wasm program's page (a main() that ends with "done (exit N)" on its console, or
// emscripten's onAbort reporting "done (abort: WHAT)") in a fresh Chromium: prints its lines,
// resolves to N, or 1 on an abort, a page error or `timeoutMs`. Page errors that are emscripten's
// exit unwinding (ExitStatus, "unwind") are not failures.
export async function runProgramPage(url, timeoutMs = 600_000) {
  let finish;
  const finished = new Promise((resolve) => { finish = resolve; });
  const browser = await launchBrowser({
    log: (line) => {
      const text = line.replace(/^\[browser (log|error)\] /, '');
      const done = text.match(/^done \((exit (\d+)|abort: .*)\)$/);
      if (done) {
        if (done[2] === undefined) console.error(text);
        finish(done[2] === undefined ? 1 : Number(done[2]));
      } else if (line.startsWith('[browser pageerror]')) {
        if (!/ExitStatus|unwind/.test(line)) {
          console.error(line);
          finish(1);
        }
      } else {
        console.log(text);
      }
    },
  });
  try {
    await browser.open(url);
    const timeout = new Promise((resolve) => setTimeout(() => {
      console.error(`timed out after ${timeoutMs / 1000} s`);
      resolve(1);
    }, timeoutMs));
    return await Promise.race([finished, timeout]);
  } finally {
    await browser.close();
  }
}
