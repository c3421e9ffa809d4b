// The one table: per model, type, threads and test, each engine's t/s (mean ± sample standard
// deviation over the repetitions), the two ratios, oxidize's KV cache and the native peak memory.

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
const fmtMiB = (bytes, digits = 0) => (Number.isFinite(bytes) ? `${(bytes / 2 ** 20).toFixed(digits)}` : '–');

export const ENGINES = ['oxidize', 'llama.cpp', 'oxidize-wasm', 'wllama'];

// rows: [{model, type, threads, test, engines: {oxidize: stats, ...}, rss: {oxidize, 'llama.cpp'}, kvBytes}].
// A column shows when every engine it reads ran (`engines`: those of this run).
export function markdownTable(rows, { wasmLabel, engines = ENGINES }) {
  const columns = [
    ['model', [], (r) => r.model],
    ['type', [], (r) => r.type],
    ['threads', [], (r) => r.threads],
    ['test', [], (r) => r.test],
    ['oxidize t/s', ['oxidize'], (r) => fmtTs(r.engines.oxidize)],
    ['llama.cpp t/s', ['llama.cpp'], (r) => fmtTs(r.engines['llama.cpp'])],
    ['oxidize / llama.cpp', ['oxidize', 'llama.cpp'], (r) => fmtRatio(r.engines.oxidize, r.engines['llama.cpp'])],
    [`${wasmLabel} t/s`, ['oxidize-wasm'], (r) => fmtTs(r.engines['oxidize-wasm'])],
    ['wllama t/s', ['wllama'], (r) => fmtTs(r.engines.wllama)],
    ['oxidize wasm / wllama', ['oxidize-wasm', 'wllama'], (r) => fmtRatio(r.engines['oxidize-wasm'], r.engines.wllama)],
    ['oxidize KV MiB', ['oxidize'], (r) => fmtMiB(r.kvBytes, 1)],
    ['oxidize peak RSS MiB', ['oxidize'], (r) => fmtMiB(r.rss.oxidize)],
    ['llama.cpp peak RSS MiB', ['llama.cpp'], (r) => fmtMiB(r.rss['llama.cpp'])],
  ].filter(([, needs]) => needs.every((e) => engines.includes(e)));
  const lines = [
    `| ${columns.map(([head]) => head).join(' | ')} |`,
    `|${columns.map(([, needs]) => (needs.length ? '---:' : '---')).join('|')}|`,
  ];
  for (const r of rows) lines.push(`| ${columns.map(([, , cell]) => cell(r)).join(' | ')} |`);
  return lines.join('\n');
}
