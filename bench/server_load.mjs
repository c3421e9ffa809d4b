// Load generator for bench/server.sh: N concurrent streamed /v1/completions requests (distinct short
// prompts, greedy, ignore_eos, max_tokens N_GEN each) against an OpenAI-compatible server; prints
// one JSON line: streams, generated tokens (from each stream's usage), wall seconds, aggregate t/s,
// and each request's time to first token (ms from sending it to the first chunk with text).
// Usage: node bench/server_load.mjs URL STREAMS N_GEN
const [url, streamsArg, nGenArg] = process.argv.slice(2);
const streams = Number(streamsArg);
const nGen = Number(nGenArg);
const prompts = ['Once upon a time', 'The little dog', 'In the forest', 'One day, a bird', 'The sun was shining',
  'Sam had a red ball', 'A cat sat', 'It was a rainy day', 'The boy ran', 'She liked to play', 'The fish swam',
  'Ben saw a car', 'The girl smiled', 'Mom said', 'There was a big tree', 'Lily and Tom went to the park'];

// One streamed request: its completion tokens (usage) and time to first token.
async function one(i) {
  const start = performance.now();
  const r = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: prompts[i % prompts.length], max_tokens: nGen, temperature: 0, ignore_eos: true,
      stream: true, stream_options: { include_usage: true } }),
  });
  if (r.status !== 200) throw new Error(`${r.status}: ${await r.text()}`);
  let ttft = null;
  let tokens = null;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const bytes of r.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const chunk = JSON.parse(event.slice(6));
      if (chunk.error) throw new Error(JSON.stringify(chunk.error));
      if (ttft === null && chunk.choices?.some((c) => (c.text ?? '').length > 0)) ttft = performance.now() - start;
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
    }
  }
  if (tokens === null) throw new Error('no usage in the stream');
  return { tokens, ttft: ttft ?? performance.now() - start };
}

const start = performance.now();
const runs = await Promise.all(Array.from({ length: streams }, (_, i) => one(i)));
const seconds = (performance.now() - start) / 1000;
const tokens = runs.reduce((a, b) => a + b.tokens, 0);
console.log(JSON.stringify({ streams, tokens, seconds: Number(seconds.toFixed(3)), tps: Number((tokens / seconds).toFixed(2)),
  ttft_ms: runs.map((r) => Number(r.ttft.toFixed(1))) }));
