// `oxidize serve` driven by real clients: the official openai package (chat and text completions,
// streaming and not, models), curl -N reading the event stream, and raw fetch for what a client
// library would refuse to send (bad keys, oversized or broken bodies, aborts). Every server is
// started here on 127.0.0.1 with --port 0 (the port is read from its ready line) and stopped here.
// Usage: node tests/server/test.mjs [BUILD/bin/oxidize] [MODEL.gguf]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const shared = process.env.OXIDIZE_SHARED ?? resolve(root, '../shared');
const oxidize = resolve(process.argv[2] ?? `${root}/build/native/bin/oxidize`);
const model = resolve(process.argv[3] ?? `${shared}/models/stories260K.gguf`);
const KEY = 'test-key-0123456789';

let failures = 0;
const results = [];
async function test(name, fn) {
  const start = Date.now();
  try {
    await fn();
    results.push(`ok    ${name} (${Date.now() - start} ms)`);
  } catch (e) {
    failures++;
    results.push(`FAIL  ${name}: ${e?.stack ?? e}`);
  }
  console.log(results[results.length - 1]);
}
function check(cond, what) {
  if (!cond) throw new Error(what);
}
function eq(a, b, what) {
  if (JSON.stringify(a) !== JSON.stringify(b)) {
    throw new Error(`${what}: ${JSON.stringify(a)} != ${JSON.stringify(b)}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Starts a server; resolves once it printed its URL line.
function startServer(args, serverModel = model) {
  return new Promise((resolveStart, rejectStart) => {
    const proc = spawn(oxidize, ['serve', '-m', serverModel, '--host', '127.0.0.1', '--port', '0', '-t', '1', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => rejectStart(new Error(`server did not start in 60 s: ${err}`)), 60000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/[0-9.:]+/);
      if (m) {
        clearTimeout(timer);
        resolveStart({ proc, url: m[0], stderr: () => err });
      }
    });
    proc.stderr.on('data', (d) => (err += d));
    proc.on('exit', (code) => {
      clearTimeout(timer);
      rejectStart(new Error(`server exited (${code}) before it was ready: ${err}`));
    });
  });
}

// Stops a server with a signal; resolves with its exit code (fails past 15 s: it hung).
function stopServer(server, signal = 'SIGTERM') {
  return new Promise((res, rej) => {
    if (server.proc.exitCode !== null) return res(server.proc.exitCode);
    const timer = setTimeout(() => {
      server.proc.kill('SIGKILL');
      rej(new Error(`server did not exit within 15 s of ${signal}`));
    }, 15000);
    server.proc.on('exit', (code) => {
      clearTimeout(timer);
      res(code);
    });
    server.proc.kill(signal);
  });
}

function rssKiB(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
  return Number(m[1]);
}

async function metric(url, name, headers = {}) {
  const text = await (await fetch(`${url}/metrics`, { headers })).text();
  const m = text.match(new RegExp(`^oxidize_${name} (\\S+)$`, 'm'));
  return m ? Number(m[1]) : NaN;
}

async function post(url, path, body, headers = {}) {
  const r = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: r.status, headers: r.headers, text, json };
}

const PROMPTS = [
  'Once upon a time', 'The little dog', 'Lily and Tom went to the park', 'One day, a bird',
  'There was a big tree', 'The sun was shining', 'Sam had a red ball', 'A cat sat',
  'Mom said', 'The boy ran', 'In the forest', 'She liked to play',
  'The fish swam', 'It was a rainy day', 'Ben saw a car', 'The girl smiled',
];

// ---- server A: 4 slots, an API key, CORS for one origin, a small body limit
const A = await startServer(['-np', '4', '-c', '1024', '--api-key', KEY, '--cors', 'http://allowed.example',
  '--max-body', '65536']);
const auth = { Authorization: `Bearer ${KEY}` };
const client = new OpenAI({ baseURL: `${A.url}/v1`, apiKey: KEY, maxRetries: 0, timeout: 120000 });

await test('GET /health is 200 without a key', async () => {
  const r = await fetch(`${A.url}/health`);
  eq(r.status, 200, 'status');
  eq(await r.json(), { status: 'ok' }, 'body');
});

await test('openai: models.list', async () => {
  const list = await client.models.list();
  eq(list.data.map((m) => m.id), ['stories260K.gguf'], 'model ids');
});

let chatText;
await test('openai: chat completion (not streamed), greedy', async () => {
  const r = await client.chat.completions.create({
    model: 'stories260K', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 32, temperature: 0,
  });
  chatText = r.choices[0].message.content;
  eq(r.object, 'chat.completion', 'object');
  eq(r.choices[0].message.role, 'assistant', 'role');
  check(typeof chatText === 'string' && chatText.length > 0, 'empty content');
  check(['stop', 'length'].includes(r.choices[0].finish_reason), 'finish_reason');
  check(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0, 'usage');
  eq(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens, 'total_tokens');
});

await test('openai: chat completion streamed with include_usage gives the same text', async () => {
  const stream = await client.chat.completions.create({
    model: 'stories260K', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 32, temperature: 0,
    stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    eq(chunk.object, 'chat.completion.chunk', 'object');
    if (chunk.choices.length > 0) {
      text += chunk.choices[0].delta.content ?? '';
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  eq(text, chatText, 'streamed text');
  check(finish === 'stop' || finish === 'length', `finish_reason ${finish}`);
  check(usage && usage.completion_tokens > 0, 'usage chunk');
});

await test('a follow-up chat turn reuses the slot cache (prompt_tokens_details.cached_tokens)', async () => {
  const messages = [{ role: 'user', content: 'Once upon a time' }, { role: 'assistant', content: chatText },
    { role: 'user', content: 'And then?' }];
  const r = await client.chat.completions.create({ model: 'x', messages, max_tokens: 8, temperature: 0 });
  const cached = r.usage.prompt_tokens_details?.cached_tokens ?? 0;
  check(cached > 5, `cached_tokens ${cached} of ${r.usage.prompt_tokens}`);
});

await test('openai: text completion, greedy, equals `oxidize run --temp 0`', async () => {
  const r = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 40, temperature: 0 });
  eq(r.object, 'text_completion', 'object');
  const cli = spawnSync(oxidize, ['run', '-m', model, '-p', 'Once upon a time', '-n', '40', '--temp', '0', '-t', '1',
    '-c', '256'], { encoding: 'utf8' });
  eq(cli.status, 0, 'oxidize run');
  eq(r.choices[0].text, cli.stdout.replace(/\n$/, ''), 'text vs CLI');
  const s = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 40, temperature: 0,
    stream: true });
  let text = '';
  for await (const chunk of s) text += chunk.choices[0]?.text ?? '';
  eq(text, r.choices[0].text, 'streamed text');
});

await test('curl -N reads the event stream to data: [DONE]', async () => {
  const r = spawnSync('curl', ['-sN', '-X', 'POST', `${A.url}/v1/completions`, '-H', `Authorization: Bearer ${KEY}`,
    '-H', 'Content-Type: application/json', '-d', '{"prompt":"Once upon a time","max_tokens":12,"stream":true,' +
    '"temperature":0,"stream_options":{"include_usage":true}}'], { encoding: 'utf8', timeout: 60000 });
  eq(r.status, 0, 'curl exit');
  const events = r.stdout.split('\n\n').filter((e) => e.startsWith('data: '));
  eq(events[events.length - 1], 'data: [DONE]', 'last event');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
  check(chunks.every((c) => c.object === 'text_completion'), 'chunk objects');
  check(chunks[chunks.length - 1].usage.completion_tokens === 12, 'usage of 12 tokens');
});

await test('structured output and the whole sampler chain: response_format json_schema parses, penalties accepted', async () => {
  const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 12 }, n: { type: 'integer' } },
    required: ['name', 'n'], additionalProperties: false };
  const r = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 120,
    temperature: 0.9, seed: 5, frequency_penalty: 0.5, presence_penalty: 0.2, logit_bias: { 13: -100 },
    response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
  eq(r.choices[0].finish_reason, 'stop', r.choices[0].message.content);
  const parsed = JSON.parse(r.choices[0].message.content);
  eq(Object.keys(parsed).sort().join(','), 'n,name', 'keys');
  check(Number.isInteger(parsed.n) && typeof parsed.name === 'string' && parsed.name.length <= 12, r.choices[0].message.content);
  const g = await client.completions.create({ model: 'x', prompt: 'Once', max_tokens: 40, temperature: 0.8, seed: 3,
    grammar: 'root ::= ("yes" | "no") " " [a-z]+ "."', dry_multiplier: 0.8, mirostat: 2 });
  check(/^(yes|no) [a-z]+\.$/.test(g.choices[0].text), JSON.stringify(g.choices[0].text));
});

await test('logprobs: chat content[] and legacy completions, streamed the same; greedy picks the top entry', async () => {
  const messages = [{ role: 'user', content: 'Once upon a time' }];
  const r = await client.chat.completions.create({ model: 'x', messages, max_tokens: 10, temperature: 0,
    logprobs: true, top_logprobs: 3 });
  const content = r.choices[0].logprobs.content;
  eq(content.length, r.usage.completion_tokens, 'one entry per generated token');
  eq(content.map((e) => e.token).join(''), r.choices[0].message.content, 'tokens spell the reply');
  for (const e of content) {
    eq(Buffer.from(e.bytes).toString('utf8'), e.token, 'bytes are the token');
    eq(e.top_logprobs.length, 3, 'top_logprobs count');
    check(e.logprob <= 0 && e.top_logprobs.every((t, i) => i === 0 || t.logprob <= e.top_logprobs[i - 1].logprob), 'ordered');
    // temperature 0 picks the most likely token of the raw softmax
    eq([e.top_logprobs[0].token, e.top_logprobs[0].logprob], [e.token, e.logprob], 'greedy = top entry');
    const mass = e.top_logprobs.reduce((a, t) => a + Math.exp(t.logprob), 0);
    check(mass <= 1 + 1e-5, `top probabilities sum to ${mass}`);
  }
  const noTop = await client.chat.completions.create({ model: 'x', messages, max_tokens: 4, temperature: 0, logprobs: true });
  check(noTop.choices[0].logprobs.content.every((e) => e.top_logprobs.length === 0), 'top_logprobs defaults to 0');
  eq(noTop.choices[0].logprobs.content.map((e) => e.logprob), content.slice(0, 4).map((e) => e.logprob), 'same logprobs');
  const s = await client.chat.completions.create({ model: 'x', messages, max_tokens: 10, temperature: 0,
    logprobs: true, top_logprobs: 3, stream: true });
  const streamed = [];
  for await (const chunk of s) streamed.push(...(chunk.choices[0]?.logprobs?.content ?? []));
  eq(streamed, content, 'streamed logprobs');
  const c = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 10, temperature: 0, logprobs: 2 });
  const lp = c.choices[0].logprobs;
  eq(lp.tokens.join(''), c.choices[0].text, 'legacy tokens spell the text');
  eq(lp.text_offset, lp.tokens.map((_, i) => Buffer.byteLength(lp.tokens.slice(0, i).join(''))), 'text_offset');
  check(lp.top_logprobs.every((t, i) => Object.keys(t).length <= 2 && t[lp.tokens[i]] === lp.token_logprobs[i]), 'top dicts');
  const cs = await client.completions.create({ model: 'x', prompt: 'Once upon a time', max_tokens: 10, temperature: 0,
    logprobs: 2, stream: true });
  const st = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  for await (const chunk of cs) {
    const l = chunk.choices[0]?.logprobs;
    if (l) for (const k of Object.keys(st)) st[k].push(...l[k]);
  }
  eq(st, lp, 'streamed legacy logprobs');
  const bad = await post(A.url, '/v1/chat/completions', { messages, top_logprobs: 2 }, { Authorization: `Bearer ${KEY}` });
  check(bad.status === 400 && bad.json.error.param === 'top_logprobs', bad.text);
  const big = await post(A.url, '/v1/chat/completions', { messages, logprobs: true, top_logprobs: 21 }, { Authorization: `Bearer ${KEY}` });
  check(big.status === 400 && big.json.error.param === 'top_logprobs', big.text);
});

await test('dry_sequence_breakers are applied: breakers in every token switch strong DRY off, "none" leaves it on', async () => {
  const base = { model: 'x', prompt: 'Once upon a time', max_tokens: 48, temperature: 0 };
  const plain = (await client.completions.create(base)).choices[0].text;
  const dry = { ...base, dry_multiplier: 5, dry_base: 2, dry_allowed_length: 1 };
  const none = (await client.completions.create({ ...dry, dry_sequence_breakers: ['none'] })).choices[0].text;
  check(none !== plain, 'strong DRY without breakers changes greedy text');
  // every piece of stories260K holds one of these, so no repeat is ever longer than a token
  const all = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,!?\'"-:;\n'];
  const broken = (await client.completions.create({ ...dry, dry_sequence_breakers: all })).choices[0].text;
  eq(broken, plain, 'DRY with a breaker in every token');
});

// Tool calls. stories260K has no tool template: its replies are read in the generic JSON form
// ({"tool_calls": [...]}, llama.cpp's fallback), and with tool_choice required / named a grammar
// forces a call whatever the weights. Bounded arguments (enums, maxLength) keep replies short.
const TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'Current weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string', enum: ['Paris', 'Tokyo'] },
      unit: { type: 'string', enum: ['c', 'f'] } }, required: ['location'], additionalProperties: false } } },
  { type: 'function', function: { name: 'get_time',
    parameters: { type: 'object', properties: { tz: { type: 'string', maxLength: 8 } }, required: ['tz'],
      additionalProperties: false } } },
];
function checkCall(c, names, what) {
  eq(c.type, 'function', `${what}: type`);
  check(typeof c.id === 'string' && c.id.length > 0, `${what}: id ${c.id}`);
  check(names.includes(c.function.name), `${what}: name ${c.function.name}`);
  const args = JSON.parse(c.function.arguments);  // a JSON string, as OpenAI's
  if (c.function.name === 'get_weather') check(['Paris', 'Tokyo'].includes(args.location), `${what}: ${c.function.arguments}`);
  else check(typeof args.tz === 'string' && args.tz.length <= 8, `${what}: ${c.function.arguments}`);
  return args;
}
const weatherAsk = [{ role: 'user', content: 'What is the weather in Paris?' }];

await test('tools: tool_choice required gives a parseable call (openai client), over several seeds', async () => {
  for (const seed of [1, 2, 3, 4]) {
    const r = await client.chat.completions.create({ model: 'x', messages: weatherAsk, tools: TOOLS,
      tool_choice: 'required', parallel_tool_calls: false, max_tokens: 200, temperature: 1, seed });
    const m = r.choices[0].message;
    eq(r.choices[0].finish_reason, 'tool_calls', `finish_reason (seed ${seed})`);
    eq(m.content, null, 'content');
    eq(m.tool_calls.length, 1, 'one call (parallel_tool_calls false)');
    checkCall(m.tool_calls[0], ['get_weather', 'get_time'], `seed ${seed}`);
  }
});

await test('tools: a named tool_choice streamed gives OpenAI delta.tool_calls chunks equal to the whole answer', async () => {
  const body = { model: 'x', messages: weatherAsk, tools: TOOLS, max_tokens: 200, temperature: 0,
    tool_choice: { type: 'function', function: { name: 'get_time' } }, parallel_tool_calls: false };
  const whole = await client.chat.completions.create(body);
  eq(whole.choices[0].finish_reason, 'tool_calls', 'finish_reason');
  const calls = whole.choices[0].message.tool_calls;
  check(calls.length === 1 && calls[0].function.name === 'get_time', JSON.stringify(calls));
  calls.forEach((c, i) => checkCall(c, ['get_time'], `call ${i}`));
  const stream = await client.chat.completions.create({ ...body, stream: true });
  const got = [];
  let finish = null;
  let content = '';
  for await (const chunk of stream) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    content += ch.delta.content ?? '';
    finish = ch.finish_reason ?? finish;
    for (const d of ch.delta.tool_calls ?? []) {
      if (!got[d.index]) {  // a call's first delta: id, type, name
        eq(d.type, 'function', 'first delta type');
        check(typeof d.id === 'string' && d.id.length > 0 && d.function.name, JSON.stringify(d));
        got[d.index] = { id: d.id, name: d.function.name, arguments: '' };
      } else {
        check(d.id === undefined && d.function.name === undefined, `later delta repeats id/name: ${JSON.stringify(d)}`);
      }
      got[d.index].arguments += d.function.arguments ?? '';
    }
  }
  eq(finish, 'tool_calls', 'streamed finish_reason');
  eq(content, '', 'no content beside the calls');
  eq(got.map((c) => [c.name, c.arguments]), calls.map((c) => [c.function.name, c.function.arguments]), 'streamed calls');
  check(new Set(got.map((c) => c.id)).size === got.length, 'distinct ids');
});

await test('tools: tool_choice none and auto answer; tool results and past calls render', async () => {
  const none = await client.chat.completions.create({ model: 'x', messages: weatherAsk, tools: TOOLS, tool_choice: 'none',
    max_tokens: 8, temperature: 0 });
  check(typeof none.choices[0].message.content === 'string' && !none.choices[0].message.tool_calls, 'none: text');
  const auto = await client.chat.completions.create({ model: 'x', messages: weatherAsk, tools: TOOLS, max_tokens: 8,
    temperature: 0 });
  check(['stop', 'length', 'tool_calls'].includes(auto.choices[0].finish_reason), 'auto: finish_reason');
  const history = [...weatherAsk,
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function',
      function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 21}' }];
  const r = await client.chat.completions.create({ model: 'x', messages: history, tools: TOOLS, max_tokens: 8, temperature: 0 });
  check(r.choices.length === 1, 'a reply after a tool result');
});

await test('tools: bad tools, tool_choice and tool messages are 400 naming the field; functions refused', async () => {
  const user = [{ role: 'user', content: 'x' }];
  const cases = [
    [{ messages: user, tool_choice: 'required' }, 'tool_choice'],
    [{ messages: user, tools: TOOLS, tool_choice: 'always' }, 'tool_choice'],
    [{ messages: user, tools: TOOLS, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
    [{ messages: user, tools: [{ type: 'function', function: { description: 'x' } }] }, 'tools[0].function.name'],
    [{ messages: user, tools: [{ type: 'retrieval' }] }, 'tools[0].type'],
    [{ messages: user, tools: TOOLS, parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
    [{ messages: user, tools: TOOLS, response_format: { type: 'json_object' } }, 'tools'],
    [{ messages: user, functions: [] }, 'functions'],
    [{ messages: user, function_call: 'auto' }, 'function_call'],
    [{ messages: [{ role: 'tool', content: '1' }] }, 'messages[0].tool_call_id'],
    [{ messages: [{ role: 'user', content: 'x', tool_call_id: 'a' }] }, 'messages[0].tool_call_id'],
    [{ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function',
      function: { name: 'f', arguments: '{bad' } }] }] }, 'messages[0].tool_calls[0].function.arguments'],
    [{ messages: [{ role: 'user', content: 'x', tool_calls: [] }] }, 'messages[0].tool_calls'],
  ];
  for (const [body, param] of cases) {
    const r = await post(A.url, '/v1/chat/completions', body, auth);
    eq([r.status, r.json?.error?.param], [400, param], JSON.stringify(body));
  }
});

await test('sampling with a seed repeats; top_k/top_p/min_p/repeat_penalty/stop accepted', async () => {
  const body = { model: 'x', prompt: 'Once upon a time', max_tokens: 24, temperature: 1.0, seed: 42, top_k: 20,
    top_p: 0.9, min_p: 0.02, repeat_penalty: 1.1, stop: ['zzz'] };
  const a = await client.completions.create(body);
  const b = await client.completions.create(body);
  eq(a.choices[0].text, b.choices[0].text, 'same seed');
  const stopped = await client.completions.create({ ...body, temperature: 0, stop: [' '] });
  check(!stopped.choices[0].text.includes(' '), 'stop string in output');
  eq(stopped.choices[0].finish_reason, 'stop', 'finish on stop string');
});

await test('n choices, greedy: each is the n = 1 text; usage counts every choice; the prompt is evaluated once', async () => {
  const body = { model: 'x', prompt: 'Lily and Ben went to the big park to play', max_tokens: 24, temperature: 0 };
  const before = await metric(A.url, 'prompt_tokens_total', auth);
  const three = await client.completions.create({ ...body, n: 3, logprobs: 1 });
  const evaluated = (await metric(A.url, 'prompt_tokens_total', auth)) - before;
  eq(evaluated, three.usage.prompt_tokens - three.usage.prompt_tokens_details.cached_tokens,
    'prompt tokens evaluated (once, not once per choice)');
  const one = await client.completions.create(body);
  eq(three.choices.map((c) => c.index), [0, 1, 2], 'indexes');
  for (const c of three.choices) {
    eq(c.text, one.choices[0].text, `choice ${c.index}`);
    eq(c.finish_reason, one.choices[0].finish_reason, `choice ${c.index} finish_reason`);
    eq(c.logprobs.tokens.length, one.usage.completion_tokens, `choice ${c.index} logprobs`);
  }
  eq(three.usage.completion_tokens, 3 * one.usage.completion_tokens, 'completion_tokens of all choices');
  eq(three.usage.prompt_tokens, one.usage.prompt_tokens, 'prompt_tokens once');
  const chat = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Once upon a time' }],
    max_tokens: 32, temperature: 0, n: 2 });
  eq(chat.choices.map((c) => [c.index, c.message.content]), [[0, chatText], [1, chatText]], 'chat choices');
});

await test('n choices with a seed: each choice repeats, choice i draws from seed + i, the choices differ', async () => {
  const body = { model: 'x', prompt: 'Once upon a time', max_tokens: 24, temperature: 1.0, seed: 7 };
  const a = await client.completions.create({ ...body, n: 4 });
  const b = await client.completions.create({ ...body, n: 4 });
  eq(a.choices.map((c) => c.text), b.choices.map((c) => c.text), 'same seed, same choices');
  eq(a.choices[0].text, (await client.completions.create(body)).choices[0].text, 'choice 0 is the n = 1 answer');
  eq(a.choices[2].text, (await client.completions.create({ ...body, seed: 9 })).choices[0].text, 'choice 2: seed + 2');
  check(new Set(a.choices.map((c) => c.text)).size > 1, `independent draws: ${JSON.stringify(a.choices)}`);
  const g = await client.completions.create({ model: 'x', prompt: 'Once', max_tokens: 40, temperature: 0.8, seed: 3, n: 3,
    grammar: 'root ::= ("yes" | "no") " " [a-z]+ "."' });
  for (const c of g.choices) check(/^(yes|no) [a-z]+\.$/.test(c.text), JSON.stringify(c.text));  // a grammar each
});

await test('n choices streamed: each chunk names its choice, each choice closes, usage counts all', async () => {
  const body = { model: 'x', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 16, temperature: 0.9,
    seed: 11, n: 3 };
  const whole = await client.chat.completions.create(body);
  const texts = ['', '', ''];
  const finish = [null, null, null];
  let usage = null;
  const s = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
  for await (const chunk of s) {
    if (chunk.usage) usage = chunk.usage;
    check(chunk.choices.length <= 1, 'one choice per chunk');
    for (const c of chunk.choices) {
      texts[c.index] += c.delta.content ?? '';
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  eq(texts, whole.choices.map((c) => c.message.content), 'streamed choices');
  eq(finish, whole.choices.map((c) => c.finish_reason), 'finish reasons');
  eq(usage.completion_tokens, whole.usage.completion_tokens, 'usage');
  const over = await post(A.url, '/v1/chat/completions', { ...body, n: 5 }, auth);
  eq([over.status, over.json.error.param], [400, 'n'], over.text);
  check(/at most 4/.test(over.json.error.message), over.json.error.message);
});

await test('without --context-shift a reply that fills its slot ends with finish_reason length', async () => {
  const r = await client.completions.create({ model: 'x', prompt: 'Once upon a time', temperature: 0, ignore_eos: true });
  eq(r.choices[0].finish_reason, 'length', 'finish_reason');
  // 256 positions per slot, 5 prompt tokens: 251, as llama-completion --no-context-shift (tests/cli/cli.sh)
  eq(r.usage.completion_tokens, 251, 'completion_tokens');
  eq(await metric(A.url, 'context_shifts_total', auth), 0, 'no shift');
});

await test('/tokenize, /detokenize, /apply-template, /metrics', async () => {
  const t = await post(A.url, '/tokenize', { content: 'Once upon a time', add_special: true }, auth);
  eq(t.status, 200, 'tokenize');
  check(t.json.tokens.length > 2 && t.json.tokens[0] === 1, 'BOS then ids');
  const d = await post(A.url, '/detokenize', { tokens: t.json.tokens.slice(1) }, auth);
  eq(d.json.content.trim(), 'Once upon a time', 'detokenize');
  const p = await post(A.url, '/apply-template', { messages: [{ role: 'user', content: 'hi' }] }, auth);
  check(p.status === 200 && p.json.prompt.includes('hi'), `apply-template ${p.text}`);
  const m = await (await fetch(`${A.url}/metrics`, { headers: auth })).text();
  check(/^oxidize_tokens_predicted_total \d+/m.test(m) && /^oxidize_requests_deferred 0/m.test(m), m);
});

await test('message text spelling control tokens stays text', async () => {
  const plain = await post(A.url, '/tokenize', { content: '</s>', parse_special: true }, auth);
  eq(plain.json.tokens, [2], '</s> is EOS when parsed');
  const r = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: '</s></s></s>' }],
    max_tokens: 4, temperature: 0 });
  const base = await client.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: '' }],
    max_tokens: 4, temperature: 0 });
  check(r.usage.prompt_tokens > base.usage.prompt_tokens + 3, 'each </s> became several text tokens');
});

await test('API key: missing or wrong is 401 with an error object; compared per route', async () => {
  const none = await post(A.url, '/v1/completions', { prompt: 'x' });
  eq(none.status, 401, 'no key');
  eq(none.json.error.code, 'invalid_api_key', 'code');
  const wrong = await post(A.url, '/v1/completions', { prompt: 'x' }, { Authorization: `Bearer ${KEY}x` });
  eq(wrong.status, 401, 'wrong key');
  const short = await post(A.url, '/v1/completions', { prompt: 'x' }, { Authorization: 'Bearer ' });
  eq(short.status, 401, 'empty key');
  eq((await fetch(`${A.url}/metrics`)).status, 401, '/metrics needs the key');
  eq((await fetch(`${A.url}/v1/models`)).status, 401, '/v1/models needs the key');
  const bad = new OpenAI({ baseURL: `${A.url}/v1`, apiKey: 'nope', maxRetries: 0 });
  let status = 0;
  try {
    await bad.models.list();
  } catch (e) {
    status = e.status;
  }
  eq(status, 401, 'openai client sees 401');
});

await test('oversized body is 413; invalid JSON, invalid UTF-8 and wrong types are 400 naming the field', async () => {
  const big = await post(A.url, '/v1/completions', { prompt: 'x'.repeat(100000) }, auth);
  eq(big.status, 413, 'oversized');
  eq(big.json?.error?.type, 'invalid_request_error', '413 error object');
  const broken = await post(A.url, '/v1/completions', '{"prompt": "x",', auth);
  eq([broken.status, broken.json.error.code], [400, 'invalid_json'], 'invalid JSON');
  const utf8 = await post(A.url, '/v1/completions',
    new Uint8Array([...Buffer.from('{"prompt": "'), 0xff, 0xfe, 0xc3, ...Buffer.from('"}')]), auth);
  eq(utf8.status, 400, 'invalid UTF-8');
  const surrogate = await post(A.url, '/v1/completions', '{"prompt": "\\ud800"}', auth);
  eq(surrogate.status, 400, 'lone surrogate');
  const cases = [
    [{ prompt: 'x', max_tokens: -1 }, 'max_tokens'],
    [{ prompt: 'x', max_tokens: '10' }, 'max_tokens'],
    [{ prompt: 'x', max_tokens: 1.5 }, 'max_tokens'],
    [{ prompt: 'x', temperature: 'hot' }, 'temperature'],
    [{ prompt: 'x', top_p: 2 }, 'top_p'],
    [{ prompt: 'x', frequency_penalty: 'high' }, 'frequency_penalty'],
    [{ prompt: 'x', grammar: 'root ::= "a' }, 'grammar'],
    [{ prompt: 'x', stream: 'yes' }, 'stream'],
    [{ prompt: 'x', stop: [1] }, 'stop'],
    [{ prompt: 'x', foo: 1 }, 'foo'],
    [{ prompt: 'x', tools: [] }, 'tools'],
    [{ prompt: 'x', response_format: { type: 'xml' } }, 'response_format.type'],
    [{ prompt: 'x', logprobs: 21 }, 'logprobs'],
    [{ prompt: 'x', logprobs: true }, 'logprobs'],
    [{ prompt: 'x', top_logprobs: 2 }, 'top_logprobs'],
    [{ prompt: 'x', n: 0 }, 'n'],
    [{ prompt: 'x', n: 5 }, 'n'],
    [{ prompt: 'x', n_keep: -2 }, 'n_keep'],
    [{ prompt: 'x', stream_options: { include_usage: true } }, 'stream_options'],
    [{ prompt: 12 }, 'prompt'],
    [{ prompt: [5, 999999] }, 'prompt'],
    [{ max_tokens: 3 }, 'prompt'],
  ];
  for (const [body, param] of cases) {
    const r = await post(A.url, '/v1/completions', body, auth);
    eq([r.status, r.json?.error?.param], [400, param], JSON.stringify(body));
    check(r.json.error.message.includes(param), `message names ${param}: ${r.json.error.message}`);
  }
  const chatCases = [
    [{ messages: 'hi' }, 'messages'],
    [{ messages: [] }, 'messages'],
    [{ messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
    [{ messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    [{ messages: [{ role: 'user', content: 'x' }], tools: [] }, 'tools'],
    [{ messages: [{ role: 'user', content: 'x' }], logprobs: 2 }, 'logprobs'],
    [{ messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 0 }, 'max_completion_tokens'],
  ];
  for (const [body, param] of chatCases) {
    const r = await post(A.url, '/v1/chat/completions', body, auth);
    eq([r.status, r.json?.error?.param], [400, param], JSON.stringify(body));
  }
  eq((await post(A.url, '/v1/chat/completions', '[1,2]', auth)).status, 400, 'array body');
  eq((await fetch(`${A.url}/nope`, { headers: auth })).status, 404, 'unknown route');
  eq((await fetch(`${A.url}/health`)).status, 200, 'still serving');
});

await test('max_tokens beyond a slot context, and a prompt longer than it, are 400', async () => {
  const r = await post(A.url, '/v1/completions', { prompt: 'Once upon a time', max_tokens: 100000 }, auth);
  eq([r.status, r.json.error.param, r.json.error.code], [400, 'max_tokens', 'context_length_exceeded'], r.text);
  const long = await post(A.url, '/v1/completions', { prompt: 'Once upon a time '.repeat(200) }, auth);
  eq([long.status, long.json.error.param], [400, 'prompt'], long.text);
});

await test('CORS headers only for the origin given', async () => {
  const ok = await fetch(`${A.url}/health`, { headers: { Origin: 'http://allowed.example' } });
  eq(ok.headers.get('access-control-allow-origin'), 'http://allowed.example', 'allowed origin');
  const no = await fetch(`${A.url}/health`, { headers: { Origin: 'http://evil.example' } });
  eq(no.headers.get('access-control-allow-origin'), null, 'other origin');
  const pre = await fetch(`${A.url}/v1/completions`, { method: 'OPTIONS', headers: { Origin: 'http://allowed.example',
    'Access-Control-Request-Method': 'POST' } });
  eq(pre.status, 204, 'preflight');
  const preBad = await fetch(`${A.url}/v1/completions`, { method: 'OPTIONS', headers: { Origin: 'http://evil.example' } });
  eq(preBad.status, 403, 'preflight from another origin');
});

// Prompt i, greedy, 48 tokens: a text completion for even i, a chat completion for odd i; streamed
// or not (the text must not depend on it).
async function generate(c, i, stream = false) {
  const common = { model: 'x', max_tokens: 48, temperature: 0, stream };
  let text = '';
  if (i % 2 === 0) {
    const r = await c.completions.create({ ...common, prompt: PROMPTS[i] });
    if (!stream) return r.choices[0].text;
    for await (const chunk of r) text += chunk.choices[0]?.text ?? '';
  } else {
    const r = await c.chat.completions.create({ ...common, messages: [{ role: 'user', content: PROMPTS[i] }] });
    if (!stream) return r.choices[0].message.content;
    for await (const chunk of r) text += chunk.choices[0]?.delta?.content ?? '';
  }
  return text;
}

await test('a second server on the same port is refused (no SO_REUSEPORT sharing)', async () => {
  const port = new URL(A.url).port;
  const r = spawnSync(oxidize, ['serve', '-m', model, '--port', port, '-t', '1'], { encoding: 'utf8', timeout: 20000 });
  eq(r.status, 1, `exit status (stderr: ${r.stderr})`);
  check(/cannot listen on 127\.0\.0\.1:\d+/.test(r.stderr), r.stderr);
});

// Solo references for the burst: each prompt alone, greedy.
const solo = [];
await test('solo references (greedy, one request at a time)', async () => {
  for (let i = 0; i < PROMPTS.length; i++) solo.push(await generate(client, i));
});
eq(await stopServer(A), 0, 'server A exit code');

// ---- server H: Qwen 2.5's tool template (--chat-template): Hermes <tool_call> syntax
const H = await startServer(['-np', '2', '-c', '6144', '--chat-template',
  `${shared}/templates/Qwen-Qwen2.5-7B-Instruct.jinja`]);
const clientH = new OpenAI({ baseURL: `${H.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120000 });
await test('hermes template: tools, past calls and tool results render; a forced call parses, streamed and not', async () => {
  const history = [...weatherAsk,
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function',
      function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 21}' }];
  const p = await post(H.url, '/apply-template', { messages: history, tools: TOOLS });
  eq(p.status, 200, p.text);
  for (const want of ['<tools>', 'Current weather for a city', '<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}',
    '<tool_response>\n{"temperature": 21}\n</tool_response>']) {
    check(p.json.prompt.includes(want), `rendered prompt lacks ${JSON.stringify(want)}:\n${p.json.prompt}`);
  }
  const body = { model: 'x', messages: weatherAsk, tools: TOOLS, tool_choice: 'required', parallel_tool_calls: false,
    max_tokens: 300, temperature: 0 };
  const r = await clientH.chat.completions.create(body);
  eq(r.choices[0].finish_reason, 'tool_calls', JSON.stringify(r.choices[0].message));
  eq(r.choices[0].message.tool_calls.length, 1, 'one call');
  checkCall(r.choices[0].message.tool_calls[0], ['get_weather', 'get_time'], 'hermes call');
  let args = '';
  let name = null;
  for await (const chunk of await clientH.chat.completions.create({ ...body, stream: true })) {
    for (const d of chunk.choices[0]?.delta.tool_calls ?? []) {
      name ??= d.function.name;
      args += d.function.arguments ?? '';
    }
  }
  eq([name, args], [r.choices[0].message.tool_calls[0].function.name, r.choices[0].message.tool_calls[0].function.arguments],
    'streamed call');
  // n = 2, sampled: each choice has its own tool-call grammar and parser
  const two = await clientH.chat.completions.create({ ...body, temperature: 1, seed: 5, n: 2 });
  eq(two.choices.map((c) => [c.index, c.finish_reason, c.message.tool_calls.length]), [[0, 'tool_calls', 1], [1, 'tool_calls', 1]],
    JSON.stringify(two.choices));
  two.choices.forEach((c, i) => checkCall(c.message.tool_calls[0], ['get_weather', 'get_time'], `choice ${i}`));
});
eq(await stopServer(H), 0, 'server H exit code');

// ---- server B: 16 slots, all 16 clients in one batch
const B = await startServer(['-np', '16', '-c', '4096']);
const clientB = new OpenAI({ baseURL: `${B.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 300000 });
const burst = () => Promise.all(PROMPTS.map((p, i) => generate(clientB, i, i % 2 === 1)));
await test('16 concurrent clients (chat and completions, half streaming) get the tokens they get alone', async () => {
  const texts = await burst();
  for (let i = 0; i < PROMPTS.length; i++) eq(texts[i], solo[i], `prompt ${i} '${PROMPTS[i]}'`);
  check((await metric(B.url, 'batch_tokens_total')) > (await metric(B.url, 'batch_steps_total')) * 4,
    'steps batched several sequences');
});
await test('RSS returns to its idle level after bursts', async () => {
  await sleep(200);
  const idle = rssKiB(B.proc.pid);
  for (let k = 0; k < 3; k++) await burst();
  await sleep(500);
  const after = rssKiB(B.proc.pid);
  check(after <= idle * 1.1 + 4096, `idle ${idle} KiB, after 3 bursts ${after} KiB`);
  eq(await metric(B.url, 'requests_processing'), 0, 'no slot busy');
});
eq(await stopServer(B, 'SIGINT'), 0, 'server B exit code');

// ---- servers Q: a Q4_K_M model, whose tile kernels sum a batch in another order than one token's
// path: each prompt alone on a fresh server (no cached prefix), then all 16 at once on another.
// Decode steps give every slot its solo bits and prompts are evaluated in steps of their own.
const qdir = mkdtempSync(`${tmpdir()}/oxidize-server-q-`);
const qmodel = `${qdir}/tiny-q4km.gguf`;
const synth = spawnSync(oxidize, ['synth', '--shape', 'tiny-15M', '--type', 'Q4_K_M', '--vocab', model,
  '--weight-std', '0.05', '-o', qmodel], { encoding: 'utf8' });
await test('a Q4_K_M model: 16 concurrent clients get the tokens each gets alone on a fresh server', async () => {
  eq(synth.status, 0, `synth: ${synth.stderr}`);
  const alone = [];
  for (let i = 0; i < PROMPTS.length; i++) {
    const S = await startServer(['-np', '1', '-c', '256'], qmodel);
    alone.push(await generate(new OpenAI({ baseURL: `${S.url}/v1`, apiKey: 'unused', maxRetries: 0 }), i));
    eq(await stopServer(S), 0, 'solo server exit code');
  }
  const Q = await startServer(['-np', '16', '-c', '4096', '-t', '2'], qmodel);
  const clientQ = new OpenAI({ baseURL: `${Q.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 300000 });
  const texts = await Promise.all(PROMPTS.map((p, i) => generate(clientQ, i, i % 2 === 1)));
  const decodeSteps = await metric(Q.url, 'batch_steps_total');
  eq(await stopServer(Q), 0, 'server Q exit code');
  for (let i = 0; i < PROMPTS.length; i++) eq(texts[i], alone[i], `prompt ${i} '${PROMPTS[i]}'`);
  check(decodeSteps < PROMPTS.length * 48, `${decodeSteps} steps: the sequences were not batched`);
});
rmSync(qdir, { recursive: true, force: true });

// ---- server C: 1 slot, a queue of 1: aborts, a full queue, shutdown mid-stream
const C = await startServer(['-np', '1', '-c', '2048', '--queue', '1']);
const longBody = { prompt: 'Once upon a time', max_tokens: 1500, ignore_eos: true, temperature: 0 };
await test('a client that aborts mid-stream frees its slot', async () => {
  const ctl = new AbortController();
  const r = await fetch(`${C.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ ...longBody, stream: true }),
    headers: { 'Content-Type': 'application/json' }, signal: ctl.signal });
  const reader = r.body.getReader();
  await reader.read();
  await reader.read();
  ctl.abort();
  let busy = 1;
  for (let i = 0; i < 50 && busy !== 0; i++) {
    await sleep(100);
    busy = await metric(C.url, 'requests_processing');
  }
  eq(busy, 0, 'slot freed');
  check((await metric(C.url, 'tokens_predicted_total')) < 1500, 'generation stopped early');
});
await test('a non-streaming client that goes away frees its slot', async () => {
  const before = await metric(C.url, 'tokens_predicted_total');
  const ctl = new AbortController();
  const pending = fetch(`${C.url}/v1/completions`, { method: 'POST', body: JSON.stringify(longBody),
    headers: { 'Content-Type': 'application/json' }, signal: ctl.signal }).catch(() => null);
  let busy = 0;
  for (let i = 0; i < 50 && busy !== 1; i++) {
    await sleep(20);
    busy = await metric(C.url, 'requests_processing');
  }
  eq(busy, 1, 'running');
  ctl.abort();
  await pending;
  for (let i = 0; i < 50 && busy !== 0; i++) {
    await sleep(100);
    busy = await metric(C.url, 'requests_processing');
  }
  eq(busy, 0, 'slot freed');
  check((await metric(C.url, 'tokens_predicted_total')) - before < 1500, 'generation stopped early');
});
await test('a full queue answers 503 with Retry-After', async () => {
  const ctl = new AbortController();
  const streamBody = JSON.stringify({ ...longBody, stream: true });
  const running = fetch(`${C.url}/v1/completions`, { method: 'POST', body: streamBody,
    headers: { 'Content-Type': 'application/json' }, signal: ctl.signal }).catch(() => null);
  await sleep(300);
  const queued = fetch(`${C.url}/v1/completions`, { method: 'POST', body: streamBody,
    headers: { 'Content-Type': 'application/json' }, signal: ctl.signal }).catch(() => null);
  await sleep(300);
  const r = await post(C.url, '/v1/completions', longBody);
  eq(r.status, 503, 'third request');
  eq(r.headers.get('retry-after'), '1', 'Retry-After');
  eq(r.json.error.code, 'server_busy', 'code');
  ctl.abort();
  await Promise.all([running, queued]);
  for (let i = 0; i < 100 && (await metric(C.url, 'requests_processing')) !== 0; i++) await sleep(100);
});
await test('SIGTERM mid-stream: the stream ends with an error event and the server exits 0', async () => {
  const r = await fetch(`${C.url}/v1/chat/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 1500, ignore_eos: true,
      stream: true }) });
  const reader = r.body.getReader();
  await reader.read();
  const code = stopServer(C, 'SIGTERM');
  let text = '';
  const dec = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += dec.decode(value);
  }
  const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
  const last = JSON.parse(events[events.length - 1].slice(6));
  check(last.error && /shutting down/.test(last.error.message), `last event ${events[events.length - 1]}`);
  eq(await code, 0, `exit code; stderr: ${C.stderr()}`);
  if (process.env.SERVER_TEST_VERBOSE) console.log(C.stderr());
});

// ---- server D: --context-shift, 2 slots of 256 positions: llama-completion's shifted text
const D = await startServer(['-np', '2', '-c', '512', '--context-shift']);
await test('--context-shift: 700 greedy tokens in a 256-token slot are llama-completion --context-shift\'s (--keep 0 and 3, side by side; and n = 2)', async () => {
  const want = (k) => readFileSync(`${root}/tests/data/context_shift/stories260K.keep${k}.txt`, 'utf8').trim();
  const body = { prompt: 'Once upon a time', max_tokens: 700, temperature: 0 };
  const [k0, k3] = await Promise.all([post(D.url, '/v1/completions', { ...body, n_keep: 0 }),
    post(D.url, '/v1/completions', { ...body, n_keep: 3 })]);
  for (const [r, k] of [[k0, 0], [k3, 3]]) {
    eq(r.status, 200, r.text);
    eq((body.prompt + r.json.choices[0].text).trim(), want(k), `n_keep ${k}`);
  }
  check((await metric(D.url, 'context_shifts_total')) >= 6, 'each shifted 3 times or more');
  const two = await post(D.url, '/v1/completions', { ...body, n: 2 });  // the server's --keep: 0
  eq(two.json.choices.map((c) => (body.prompt + c.text).trim()), [want(0), want(0)], 'both choices shift alike');
});
eq(await stopServer(D), 0, 'server D exit code');

// ---- embeddings and reranking (#24): synth bert models as the parity test makes them, with
// llama-embedding's vectors (tests/data/embeddings, recorded by make_reference.sh) as the expected values.
const embDir = mkdtempSync(`${tmpdir()}/oxidize-emb-`);
function readReference(name) {
  const vectors = [];
  let synth = '';
  for (const line of readFileSync(`${root}/tests/data/embeddings/${name}.txt`, 'utf8').split('\n')) {
    if (line.startsWith('synth: ')) synth = line.slice(7);
    const m = line.match(/^vector (\d+): (.*)$/);
    if (m) vectors[Number(m[1])] = m[2].trim().split(/\s+/).map(Number);
  }
  return { synth, vectors };
}
function synthModel(name, synthFlags) {
  const flags = synthFlags.replace(/--vocab (\S+)/, `--vocab ${shared}/$1`).split(/\s+/);
  const out = `${embDir}/${name}.gguf`;
  const r = spawnSync(oxidize, ['synth', ...flags, '--type', 'F32', '-o', out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`synth ${name}: ${r.stderr}`);
  return out;
}
// The parity test's bound: cosine >= 0.99999 and largest absolute difference <= 1e-4 per vector.
function closeToReference(got, want, what) {
  eq(got.length, want.length, `${what}: length`);
  let dot = 0, na = 0, nb = 0, maxAbs = 0;
  for (let i = 0; i < got.length; i++) {
    dot += got[i] * want[i];
    na += got[i] * got[i];
    nb += want[i] * want[i];
    maxAbs = Math.max(maxAbs, Math.abs(got[i] - want[i]));
  }
  const cos = na === 0 && nb === 0 ? 1 : dot / Math.sqrt(na * nb);
  check(cos >= 0.99999 && maxAbs <= 1e-4, `${what}: cosine ${cos}, max abs difference ${maxAbs}`);
}
const EMB_PROMPTS = readFileSync(`${root}/tests/data/embeddings/prompts.txt`, 'utf8').split('\n').filter((l) => l);
const cls = readReference('bert-cls');  // pooling cls, euclidean normalisation: what /v1/embeddings returns
const E = await startServer(['--embeddings', '--pooling', 'cls', '-c', '512', '-m', synthModel('bert-cls', cls.synth)]);
const embClient = new OpenAI({ baseURL: `${E.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 120000 });

await test('openai: embeddings.create (the client asks for base64) equals llama-embedding', async () => {
  const r = await embClient.embeddings.create({ model: 'bert', input: EMB_PROMPTS });
  eq(r.object, 'list', 'object');
  eq(r.data.length, EMB_PROMPTS.length, 'one vector per input');
  r.data.forEach((d, i) => {
    eq([d.object, d.index], ['embedding', i], `data[${i}]`);
    closeToReference(d.embedding, cls.vectors[i], `vector ${i}`);
  });
  let tokens = 0;
  for (const p of EMB_PROMPTS) tokens += (await post(E.url, '/tokenize', { content: p, add_special: true })).json.tokens.length;
  eq(r.usage, { prompt_tokens: tokens, total_tokens: tokens }, 'usage');
});

await test('embeddings: base64 decodes to the float response exactly; one input alone equals it in a batch', async () => {
  const floats = await post(E.url, '/v1/embeddings', { input: EMB_PROMPTS, encoding_format: 'float' });
  const b64 = await post(E.url, '/v1/embeddings', { input: EMB_PROMPTS, encoding_format: 'base64' });
  eq([floats.status, b64.status], [200, 200], `statuses ${floats.text.slice(0, 200)} ${b64.text.slice(0, 200)}`);
  for (let i = 0; i < EMB_PROMPTS.length; i++) {
    const bytes = Buffer.from(b64.json.data[i].embedding, 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    eq(decoded, floats.json.data[i].embedding.map((x) => Math.fround(x)), `base64 vector ${i}`);
    const one = await post(E.url, '/v1/embeddings', { input: EMB_PROMPTS[i], encoding_format: 'float' });
    const diff = Math.max(...one.json.data[0].embedding.map((x, k) => Math.abs(x - floats.json.data[i].embedding[k])));
    check(diff <= 1e-6, `input ${i} alone vs in the batch: max abs difference ${diff}`);
  }
});

await test('embeddings: token-id input equals the text; user accepted; dimensions only the model width', async () => {
  const ids = (await post(E.url, '/tokenize', { content: EMB_PROMPTS[1], add_special: true })).json.tokens;
  const text = await post(E.url, '/v1/embeddings', { input: EMB_PROMPTS[1], encoding_format: 'float', user: 'u1' });
  const tok = await post(E.url, '/v1/embeddings', { input: ids, encoding_format: 'float' });
  const toks = await post(E.url, '/v1/embeddings', { input: [ids, ids], encoding_format: 'float' });
  eq(tok.json.data[0].embedding, text.json.data[0].embedding, 'token ids vs text');
  eq(toks.json.data.length, 2, 'array of token-id arrays');
  const width = text.json.data[0].embedding.length;
  eq((await post(E.url, '/v1/embeddings', { input: 'a', dimensions: width })).status, 200, 'dimensions = width');
  const half = await post(E.url, '/v1/embeddings', { input: 'a', dimensions: width / 2 });
  check(half.status === 400 && half.json.error.param === 'dimensions' && half.json.error.message.includes(String(width)),
    `dimensions ${width / 2}: ${half.text}`);
});

await test('embeddings errors: empty, too long (and truncate), bad fields; completions and rerank refused', async () => {
  const cases = [
    [{ input: [] }, 400, 'input', /empty/],
    [{ input: '' }, 400, 'input', /input 0 is empty/],
    [{ input: ['a', ''] }, 400, 'input', /input 1 is empty/],
    [{ input: 'x '.repeat(600) }, 400, 'input', /input 0 is \d+ tokens, longer than the context of 512/],
    [{ input: ['a', 3] }, 400, 'input[1]', /string/],
    [{ input: [1, 999999999] }, 400, 'input', /token id/],
    [{ input: 'a', encoding_format: 'int8' }, 400, 'encoding_format', /float/],
    [{ input: 'a', dimensions: 0 }, 400, 'dimensions', /integer/],
    [{ input: 'a', temperature: 1 }, 400, 'temperature', /unknown parameter/],
    [{ model: 'bert' }, 400, 'input', /required/],
  ];
  for (const [body, status, param, message] of cases) {
    const r = await post(E.url, '/v1/embeddings', body);
    check(r.status === status && r.json?.error?.param === param && message.test(r.json.error.message),
      `${JSON.stringify(body).slice(0, 80)}: ${r.status} ${r.text}`);
  }
  const cut = await post(E.url, '/v1/embeddings', { input: 'x '.repeat(600), truncate: true });
  check(cut.status === 200 && cut.json.usage.prompt_tokens === 512, `truncate: ${cut.text.slice(0, 200)}`);
  const chat = await post(E.url, '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
  check(chat.status === 501 && /--embeddings/.test(chat.json.error.message), `chat: ${chat.text}`);
  const rr = await post(E.url, '/v1/rerank', { query: 'q', documents: ['d'] });
  check(rr.status === 501 && /--reranking/.test(rr.json.error.message), `rerank: ${rr.text}`);
  check((await metric(E.url, 'embedding_requests_total')) >= 3, 'oxidize_embedding_requests_total');
});
await stopServer(E);

await test('serve --embeddings refuses at start a model that cannot embed (no pooling, no classifier head)', async () => {
  const run = (args) => spawnSync(oxidize, ['serve', '-m', model, '--port', '0', '-t', '1', ...args],
    { encoding: 'utf8', timeout: 30000 });
  const noPool = run(['--embeddings']);
  check(noPool.status === 1 && /--pooling/.test(noPool.stderr), `no pooling: ${noPool.status} ${noPool.stderr}`);
  const noHead = run(['--rerank']);
  check(noHead.status === 1 && /cls|classif/.test(noHead.stderr), `no head: ${noHead.status} ${noHead.stderr}`);
  const N = await startServer(['--embeddings', '--pooling', 'none']);
  const r = await post(N.url, '/v1/embeddings', { input: 'Once upon a time' });
  check(r.status === 400 && /pooling 'none'/.test(r.json.error.message), `pooling none: ${r.text}`);
  const ok = await post(N.url, '/tokenize', { content: 'a' });
  eq(ok.status, 200, '/tokenize still answers');
  await stopServer(N);
  const G = await startServer([]);  // a generative server: no embeddings unless started for them
  const noEmb = await post(G.url, '/v1/embeddings', { input: 'a' });
  check(noEmb.status === 501 && /--embeddings/.test(noEmb.json.error.message), `generative server: ${noEmb.text}`);
  await stopServer(G);
});

const rerank = readReference('bert-rerank');  // 14 pairs, 2 queries: llama-embedding's scores, most well apart
const R = await startServer(['--rerank', '-c', '512', '-m', synthModel('bert-rerank', rerank.synth)]);
await test('/v1/rerank: each query\'s scores equal llama-embedding\'s, ordered by relevance; aliases, top_n, return_documents', async () => {
  const pairs = readFileSync(`${root}/tests/data/embeddings/rerank_docs.txt`, 'utf8').split('\n').filter((l) => l)
    .map((l, i) => ({ query: l.split('\t')[0], document: l.split('\t')[1], score: rerank.vectors[i][0] }));
  const queries = [...new Set(pairs.map((p) => p.query))];
  check(queries.length === 2 && pairs.length === 14, 'the reference case: 14 pairs, 2 queries');
  let r;
  for (const q of queries) {
    const rows = pairs.filter((p) => p.query === q);
    r = await post(R.url, '/v1/rerank', { model: 'm', query: q, documents: rows.map((p) => p.document) });
    eq(r.status, 200, r.text);
    eq(r.json.results.map((x) => x.index).sort((a, b) => a - b), rows.map((_, i) => i), `${q}: every document once`);
    for (const x of r.json.results) closeToReference([x.relevance_score], [rows[x.index].score], `${q}: score ${x.index}`);
    for (let i = 1; i < r.json.results.length; i++) {
      check(r.json.results[i - 1].relevance_score >= r.json.results[i].relevance_score, `${q}: descending scores`);
    }
    // Where llama.cpp's scores are further apart than twice the score tolerance, the order is theirs.
    const place = new Map(r.json.results.map((x, k) => [x.index, k]));
    for (let i = 0; i < rows.length; i++) {
      for (let j = 0; j < rows.length; j++) {
        if (rows[i].score - rows[j].score > 5e-4) check(place.get(i) < place.get(j), `${q}: document ${i} before ${j}`);
      }
    }
  }
  const query = queries[1];
  const documents = pairs.filter((p) => p.query === query).map((p) => p.document);
  let tokens = 0;
  for (const x of r.json.results) check(!('document' in x), 'no document unless asked');
  tokens = r.json.usage.prompt_tokens;
  check(tokens > 0 && r.json.usage.total_tokens === tokens, 'usage');
  for (const path of ['/rerank', '/v1/reranking', '/reranking']) {
    eq((await post(R.url, path, { query, documents })).json.results, r.json.results, path);
  }
  const top = await post(R.url, '/v1/rerank', { query, documents, top_n: 1, return_documents: true });
  eq(top.json.results, [{ ...r.json.results[0], document: { text: documents[r.json.results[0].index] } }], 'top_n 1');
  for (const [body, param] of [[{ query, documents: [] }, 'documents'], [{ documents }, 'query'],
    [{ query, documents: ['a', ''] }, 'documents'], [{ query, documents, top_n: 0 }, 'top_n'],
    [{ query, documents, texts: documents }, 'texts']]) {
    const e = await post(R.url, '/v1/rerank', body);
    check(e.status === 400 && e.json.error.param === param, `${JSON.stringify(body).slice(0, 60)}: ${e.text}`);
  }
  const emb = await post(R.url, '/v1/embeddings', { input: 'a' });
  check(emb.status === 400 && /rerank/.test(emb.json.error.message), `embeddings on a reranker: ${emb.text}`);
});
await stopServer(R);
rmSync(embDir, { recursive: true, force: true });

console.log(`\n${results.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
