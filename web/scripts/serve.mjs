#!/usr/bin/env node
// Local server for the demo, the bench page (demo/bench.html) and the browser tests: serves web/ at / and the shared models at
// /models/ on 127.0.0.1, once with COOP/COEP headers (cross-origin isolated: the threaded build)
// and once without (the single-thread fallback). Usage:
//   node web/scripts/serve.mjs [--port 8080] [--plain-port 8081 | --no-plain] [--test-routes]
// The models folder is ../shared/models beside the repository, or $OXIDIZE_SHARED/models.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(webDir, '..');

export function sharedDir() {
  return path.resolve(process.env.OXIDIZE_SHARED || path.join(repoRoot, '..', 'shared'));
}

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.gguf': 'application/octet-stream',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

// Maps a URL path under `root` to a file, refusing anything that escapes it.
function resolveUnder(root, urlPath) {
  const file = path.resolve(root, '.' + path.posix.normalize('/' + urlPath));
  return file === root || file.startsWith(root + path.sep) ? file : null;
}

// Validators of a file as it is now: a strong ETag from its size and mtime, and its Last-Modified.
function validators(st) {
  return { etag: `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`, lastModified: st.mtime.toUTCString() };
}

// Whether a conditional GET (If-None-Match, else If-Modified-Since) may be answered 304.
function notModified(req, v) {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) return inm.split(',').some((t) => t.trim() === v.etag || t.trim() === '*');
  const ims = Date.parse(req.headers['if-modified-since'] ?? '');
  return Number.isFinite(ims) && Math.floor(Date.parse(v.lastModified) / 1000) <= Math.floor(ims / 1000);
}

// The byte range a request asks for ("bytes=A-", "bytes=A-B", "bytes=-N"), honoured only when its
// If-Range (if any) names the current ETag or Last-Modified: null for the whole file, 'bad' for
// a range past the end (416).
function requestedRange(req, size, v) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  if (m === null || (m[1] === '' && m[2] === '')) return null;
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== v.etag && ifRange !== v.lastModified) return null;
  let start, end;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start > end || start >= size ? 'bad' : { start, end };
}

/**
 * Answers a GET of `bytes` (a Buffer, or {file, size} to stream from disk) with validators, 304s and
 * Range: 206 with Content-Range. `limit` (tests) sends only the first `limit` bytes of this answer
 * and then cuts the connection; `trickle` sends 16 KiB pieces every 20 ms.
 */
function sendBytes(req, res, body, headers, v, { contentType = 'application/octet-stream', limit = Infinity, trickle = false } = {}) {
  const size = Buffer.isBuffer(body) ? body.length : body.size;
  const common = { ...headers, 'accept-ranges': 'bytes', etag: v.etag, 'last-modified': v.lastModified };
  if (notModified(req, v)) {
    res.writeHead(304, common).end();
    return;
  }
  const range = requestedRange(req, size, v);
  if (range === 'bad') {
    res.writeHead(416, { ...common, 'content-range': `bytes */${size}` }).end();
    return;
  }
  const start = range?.start ?? 0, end = range?.end ?? size - 1;
  const length = end - start + 1;
  res.writeHead(range ? 206 : 200, {
    ...common,
    'content-type': contentType,
    'content-length': length,
    ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const send = Math.min(length, limit);
  if (!trickle && send === length && !Buffer.isBuffer(body)) {
    fs.createReadStream(body.file, { start, end }).pipe(res);
    return;
  }
  const bytes = Buffer.isBuffer(body) ? body.subarray(start, start + send) : readRange(body.file, start, send);
  if (!trickle) {
    if (send === length) res.end(bytes);
    else res.write(bytes, () => setTimeout(() => res.socket?.destroy(), 50));
    return;
  }
  let off = 0;
  const timer = setInterval(() => {
    if (off >= bytes.length) {
      clearInterval(timer);
      if (send === length) res.end();
      else res.socket?.destroy();
      return;
    }
    res.write(bytes.subarray(off, off + 16384));
    off += 16384;
  }, 20);
  req.on('close', () => clearInterval(timer));
}

function readRange(file, start, length) {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(length);
    fs.readSync(fd, b, 0, length, start);
    return b;
  } finally {
    fs.closeSync(fd);
  }
}

function sendFile(req, res, file, headers, options = {}) {
  fs.stat(file, (err, st) => {
    if (err || !st.isFile()) {
      res.writeHead(404, { ...headers, 'content-type': 'text/plain' });
      res.end('not found\n');
      return;
    }
    sendBytes(req, res, { file, size: st.size }, headers, validators(st),
      { contentType: MIME[path.extname(file)] || 'application/octet-stream', ...options });
  });
}

// Routes only the browser tests use: downloads that fail in the ways real networks do, and files
// the tests generate (/__test/generated/NAME from `generatedDir`).
function testRoute(req, res, urlPath, headers, state) {
  const models = path.join(sharedDir(), 'models');
  let m = urlPath.match(/^\/__test\/generated\/([\w.-]+)$/);
  if (m && state.generatedDir) {
    sendFile(req, res, path.join(state.generatedDir, m[1]), headers);
    return true;
  }
  m = urlPath.match(/^\/__test\/cut-after\/(\d+)\/(generated|models)\/([\w.-]+)$/);
  if (m) {
    // Every answer (200 or 206) stops after N bytes and the connection is cut, with validators and
    // Range support: a download only completes by resuming, N bytes at a time.
    const dir = m[2] === 'models' ? models : state.generatedDir;
    sendFile(req, res, path.join(dir, m[3]), headers, { limit: Number(m[1]) });
    return true;
  }
  m = urlPath.match(/^\/__test\/truncate-once\/([\w.-]+)$/);
  if (m) {
    // First request for a name: announce the full length, send half, then cut the connection.
    const file = path.join(models, m[1]);
    if (state.truncated.has(m[1]) || !fs.existsSync(file)) {
      sendFile(req, res, file, headers);
      return true;
    }
    state.truncated.add(m[1]);
    sendFile(req, res, file, headers, { limit: fs.statSync(file).size >> 1 });
    return true;
  }
  m = urlPath.match(/^\/__test\/inflate\/(\d+)\/([\w.-]+)$/);
  if (m && state.generatedDir) {
    // A generated file announced as N GiB (its real bytes first): Range requests within the real
    // bytes are answered 206 with that total, whole-file requests never finish.
    const bytes = fs.readFileSync(path.join(state.generatedDir, m[2]));
    const total = Number(m[1]) * 2 ** 30;
    const r = /^bytes=0-(\d+)$/.exec(req.headers.range ?? '');
    if (r) {
      const end = Math.min(Number(r[1]), bytes.length - 1);
      res.writeHead(206, { ...headers, 'content-type': 'application/octet-stream', 'content-length': end + 1,
        'content-range': `bytes 0-${end}/${total}` });
      res.end(bytes.subarray(0, end + 1));
      return true;
    }
    res.writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': total });
    res.write(bytes);
    req.on('close', () => res.destroy());
    return true;
  }
  if (urlPath === '/__test/huge.gguf') {
    // 5 GiB announced: the engine must refuse before downloading anything.
    res.writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': 5 * 2 ** 30 });
    res.write(Buffer.from('GGUF'));
    req.on('close', () => res.destroy());
    return true;
  }
  m = urlPath.match(/^\/__test\/head\/(\d+)\/([\w.-]+)$/);
  if (m) {
    // The first N bytes of a model: a well-formed header whose tensor data is missing.
    const bytes = fs.readFileSync(path.join(models, m[2])).subarray(0, Number(m[1]));
    res.writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': bytes.length });
    res.end(bytes);
    return true;
  }
  m = urlPath.match(/^\/__test\/slow\/([\w.-]+)$/);
  if (m) {
    // Trickles the file out in 16 KiB pieces (for aborting a download half-way).
    sendFile(req, res, path.join(models, m[1]), headers, { trickle: true });
    return true;
  }
  return false;
}

/**
 * Starts one server of `root` (web/ by default); resolves with {url, port, close()}. port 0 picks a
 * free port. `policy(urlPath, headers)` (tests) returns the headers a file is sent with, or null for 404.
 */
export function startServer({
  port = 8080, host = '127.0.0.1', isolated = true, testRoutes = false, quiet = true, generatedDir = null, root = webDir,
  policy = null,
} = {}) {
  const headers = { 'cache-control': 'no-cache' };
  if (isolated) {
    headers['cross-origin-opener-policy'] = 'same-origin';
    headers['cross-origin-embedder-policy'] = 'require-corp';
    headers['cross-origin-resource-policy'] = 'same-origin';
  }
  const state = { truncated: new Set(), generatedDir };
  const requests = [];  // every request's method, path and conditional / range headers (for tests)
  const server = http.createServer((req, res) => {
    let urlPath;
    try {
      urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (!quiet) console.log(`${req.method} ${urlPath}`);
    requests.push({
      method: req.method, path: urlPath, range: req.headers.range ?? null, ifRange: req.headers['if-range'] ?? null,
      ifNoneMatch: req.headers['if-none-match'] ?? null, ifModifiedSince: req.headers['if-modified-since'] ?? null,
    });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, headers).end();
      return;
    }
    if (urlPath === '/') {
      res.writeHead(302, { ...headers, location: '/demo/' }).end();
      return;
    }
    if (testRoutes && urlPath.startsWith('/__test/') && testRoute(req, res, urlPath, headers, state)) return;
    let file;
    if (urlPath.startsWith('/models/')) file = resolveUnder(path.join(sharedDir(), 'models'), urlPath.slice('/models'.length));
    else file = resolveUnder(root, urlPath);
    if (file !== null && urlPath.endsWith('/')) file = path.join(file, 'index.html');
    if (file === null) {
      res.writeHead(403, headers).end();
      return;
    }
    const fileHeaders = policy ? policy(urlPath, headers) : headers;
    if (fileHeaders === null) {
      res.writeHead(404, headers).end();
      return;
    }
    sendFile(req, res, file, fileHeaders);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      resolve({
        port: actual,
        url: `http://${host}:${actual}`,
        requests,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

async function main(argv) {
  const args = { port: 8080, plainPort: null, plain: true, testRoutes: false, host: '127.0.0.1', verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port') args.port = Number(argv[++i]);
    else if (a === '--plain-port') args.plainPort = Number(argv[++i]);
    else if (a === '--no-plain') args.plain = false;
    else if (a === '--no-isolation') args.isolatedOff = true;
    else if (a === '--test-routes') args.testRoutes = true;
    else if (a === '--verbose') args.verbose = true;
    else if (a === '--help' || a === '-h') {
      console.log('usage: serve.mjs [--port N] [--plain-port N | --no-plain] [--no-isolation] [--test-routes] [--verbose]');
      return;
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!fs.existsSync(path.join(webDir, 'dist', 'index.js'))) {
    console.warn('warning: web/dist is missing; run scripts/build-web first');
  }
  console.log(`models from ${path.join(sharedDir(), 'models')}`);
  const quiet = !args.verbose;
  if (!args.isolatedOff) {
    const s = await startServer({ port: args.port, isolated: true, testRoutes: args.testRoutes, quiet });
    console.log(`cross-origin isolated (threads):        ${s.url}/demo/  (bench: ${s.url}/demo/bench.html)`);
  }
  if (args.plain || args.isolatedOff) {
    const port = args.isolatedOff ? args.port : args.plainPort ?? (args.port === 0 ? 0 : args.port + 1);
    const s = await startServer({ port, isolated: false, testRoutes: args.testRoutes, quiet });
    console.log(`not isolated (single-thread fallback):  ${s.url}/demo/  (bench: ${s.url}/demo/bench.html)`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).catch((e) => {
    console.error(e.message);
    process.exit(1);
  });
}
