// Load generator for bench/server.sh: N concurrent /v1/completions requests (distinct short
// prompts, greedy, ignore_eos, max_tokens N_GEN each) against an OpenAI-compatible server; prints
// one JSON line: streams, generated tokens (from usage), wall seconds, aggregate t/s.
// Usage: node bench/server_load.mjs URL STREAMS N_GEN
const [url, streamsArg, nGenArg] = process.argv.slice(2);
const streams = Number(streamsArg);
const nGen = Number(nGenArg);
const prompts = ['Once upon a time', 'The little dog', 'In the forest', 'One day, a bird', 'The sun was shining',
  'Sam had a red ball', 'A cat sat', 'It was a rainy day', 'The boy ran', 'She liked to play', 'The fish swam',
  'Ben saw a car', 'The girl smiled', 'Mom said', 'There was a big tree', 'Lily and Tom went to the park'];

async function one(i) {
  const r = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: prompts[i % prompts.length], max_tokens: nGen, temperature: 0, ignore_eos: true }),
  });
  const body = await r.json();
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`);
  return body.usage.completion_tokens;
}

const start = performance.now();
const counts = await Promise.all(Array.from({ length: streams }, (_, i) => one(i)));
const seconds = (performance.now() - start) / 1000;
const tokens = counts.reduce((a, b) => a + b, 0);
console.log(JSON.stringify({ streams, tokens, seconds: Number(seconds.toFixed(3)), tps: Number((tokens / seconds).toFixed(2)) }));
