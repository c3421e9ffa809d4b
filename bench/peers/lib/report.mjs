// The one table: per model, type, threads and test, each engine's t/s (mean ± sample standard
// deviation over the repetitions), the two ratios, and the native memory of oxidize and llama.cpp.

export function stats(samples) {
  const xs = (samples ?? []).filter((x) => Number.isFinite(x));
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1)) : 0;
  return { mean, sd, n: xs.length };
}

const digits = (x) => (x >= 100 ? 1 : x >= 10 ? 2 : 3);
const fmtTs = (s) => (s ? `${s.mean.toFixed(digits(s.mean))} ± ${s.sd.toFixed(digits(s.mean))}` : '–');
const fmtRatio = (a, b) => (a && b && b.mean > 0 ? `${(a.mean / b.mean).toFixed(2)}×` : '–');
const fmtMiB = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 2 ** 20).toFixed(0)}` : '–');

export const ENGINES = ['oxidize', 'llama.cpp', 'oxidize-wasm', 'wllama'];

// rows: [{model, type, threads, test, engines: {oxidize: stats, ...}, rss: {oxidize, 'llama.cpp'}}]
export function markdownTable(rows, { wasmLabel }) {
  const head = [
    'model', 'type', 'threads', 'test', 'oxidize t/s', 'llama.cpp t/s', 'oxidize / llama.cpp',
    `${wasmLabel} t/s`, 'wllama t/s', 'oxidize wasm / wllama', 'oxidize peak RSS MiB', 'llama.cpp RSS MiB',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i < 4 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) {
    const e = r.engines;
    lines.push(`| ${[
      r.model, r.type, r.threads, r.test,
      fmtTs(e.oxidize), fmtTs(e['llama.cpp']), fmtRatio(e.oxidize, e['llama.cpp']),
      fmtTs(e['oxidize-wasm']), fmtTs(e.wllama), fmtRatio(e['oxidize-wasm'], e.wllama),
      fmtMiB(r.rss.oxidize), fmtMiB(r.rss['llama.cpp']),
    ].join(' | ')} |`);
  }
  return lines.join('\n');
}
