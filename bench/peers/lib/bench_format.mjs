// What `oxidize bench` and llama-bench both speak: llama-bench's flags (-p -n -t -r -d -ctk -ctv
// -o jsonl) and its JSONL rows (n_prompt, n_gen, n_depth, samples_ts, ...), keyed by llama-bench's
// test names ("pp512", "tg64 @ d4096").

export function testName({ n_prompt, n_gen, n_depth }) {
  const name = n_prompt > 0 ? `pp${n_prompt}` : `tg${n_gen}`;
  return n_depth > 0 ? `${name} @ d${n_depth}` : name;
}

export function benchFlags({ threads, nPrompt, nGen, depths = [0], cacheType = 'f16', reps, warmup = 1 }) {
  return [
    '-p', String(nPrompt), '-n', String(nGen), '-t', String(threads), '-r', String(reps), '-d', depths.join(','),
    '-ctk', cacheType, '-ctv', cacheType, ...(warmup > 0 ? [] : ['--no-warmup']), '-o', 'jsonl',
  ];
}

// stdout of `-o jsonl` -> {rows, tests: {name: {samples, mean, sd, kv_bytes}}}; lines that are not
// JSON objects (logs) are skipped, and no row at all is an error.
export function parseJsonl(stdout) {
  const rows = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  if (rows.length === 0) throw new Error(`no JSONL rows in the output:\n${stdout.trim().split('\n').slice(-4).join('\n')}`);
  const tests = {};
  for (const r of rows) {
    tests[testName(r)] = { samples: r.samples_ts, mean: r.avg_ts, sd: r.stddev_ts, kv_bytes: r.kv_bytes ?? null };
  }
  return { rows, tests };
}
