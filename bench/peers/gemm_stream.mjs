// Runs oxidize_gemm_stream (bench/gemm_stream.cpp: one decode matmul on streamed weights, one
// thread, best kernel table) from the wasm build in headless Chromium, where the SIMD128 kernels
// are timed under the V8 that users run; the same arguments as the program:
//   node bench/peers/gemm_stream.mjs [--reps N] TYPE:ROWSxCOLS ...   e.g. q4_k:8192x2048 q6_k:2048x8192
// Under node instead: node build/wasm/bin/oxidize_gemm_stream.js ...; natively:
// build/native/bin/oxidize_gemm_stream ... (OXIDIZE_ISA picks another table).
// OXIDIZE_WASM_BIN names another build's bin folder (default build/wasm/bin). Chromium loads the
// relaxed-SIMD module (oxidize_gemm_stream.relaxed.wasm); OXIDIZE_WASM_RELAXED=0 keeps the SIMD128 one.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProgramPage, startServer } from './lib/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, '../..', process.env.OXIDIZE_WASM_BIN || 'build/wasm/bin');
const args = process.argv.slice(2);
if (args.length === 0 || args.includes('--help')) {
  console.log('usage: node bench/peers/gemm_stream.mjs [--reps N] [--stream-mb M] [--weight-std S] [--tokens T] TYPE:ROWSxCOLS ...');
  process.exit(args.length === 0 ? 2 : 0);
}
if (!fs.existsSync(path.join(bin, 'oxidize_gemm_stream.js'))) {
  console.error(`no ${path.join(bin, 'oxidize_gemm_stream.js')}: build it with ` +
    '`cmake --build build/wasm --target oxidize_gemm_stream`');
  process.exit(2);
}

const server = await startServer({ mounts: { '/bin/': bin }, files: { '/gemm_stream.html': path.join(here, 'page/gemm_stream.html') } });
let status = 1;
try {
  // The program prints one line per shape, then "done (exit N)" (bench/gemm_stream.cpp).
  let query = args.map((a) => 'arg=' + encodeURIComponent(a)).join('&');
  if (process.env.OXIDIZE_WASM_RELAXED === '0') query += '&relaxed=0';
  status = await runProgramPage(`${server.url}/gemm_stream.html?${query}`);
} finally {
  await server.close();
}
process.exit(status);
