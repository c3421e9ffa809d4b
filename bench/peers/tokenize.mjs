#!/usr/bin/env node
// Tokenization throughput (issue #6 item 7): MB/s of oxidize's tokenizer (native CLI, `oxidize
// tokenize --bench R`) next to llama.cpp's (node-llama-cpp, vocab-only model, `model.tokenize`) on
// the same ~1 MB English + code + CJK + emoji text, for every vocabulary in ../shared/vocab. Checks
// that both produce the same token count (and ids). Writes results/tokenize.{md,json}. See README.md.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exec } from './lib/oxidize.mjs';
import { stats } from './lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

const USAGE = `usage: node bench/peers/tokenize.mjs [options]
  --vocab LIST     vocabulary names (llama-spm,qwen2) or .gguf paths (default: every
                   ggml-vocab-*.gguf in the shared vocab folder)
  --text FILE      tokenize this UTF-8 file instead of the generated text
  --bytes N        size of the generated text (default 1000000)
  --seed N         seed of the generated text (default 1)
  --reps N         timed repetitions per engine and vocabulary (default 5; one untimed warm-up first)
  --no-ids         only compare token counts (default: also compare every id)
  --oxidize PATH   native CLI (default build/native/bin/oxidize, or $OXIDIZE_BIN)
  --shared DIR     shared data (default ../shared, or $OXIDIZE_SHARED)
  --timeout S      give up on one engine run after S seconds (default 600)
  --out DIR        results folder (default bench/peers/results)`;

function parseArgs(argv) {
  const a = {
    vocab: null, text: null, bytes: 1000000, seed: 1, reps: 5, ids: true, timeout: 600,
    oxidize: process.env.OXIDIZE_BIN || path.join(repo, 'build/native/bin/oxidize'),
    shared: process.env.OXIDIZE_SHARED || path.join(repo, '..', 'shared'),
    out: path.join(here, 'results'),
  };
  const int = (s, flag, min) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < min) throw new Error(`${flag}: '${s}' is not an integer >= ${min}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--vocab') a.vocab = next().split(',').map((x) => x.trim()).filter(Boolean);
    else if (flag === '--text') a.text = path.resolve(next());
    else if (flag === '--bytes') a.bytes = int(next(), flag, 1);
    else if (flag === '--seed') a.seed = int(next(), flag, 0);
    else if (flag === '--reps') a.reps = int(next(), flag, 1);
    else if (flag === '--no-ids') a.ids = false;
    else if (flag === '--oxidize') a.oxidize = path.resolve(next());
    else if (flag === '--shared') a.shared = path.resolve(next());
    else if (flag === '--timeout') a.timeout = int(next(), flag, 0);
    else if (flag === '--out') a.out = path.resolve(next());
    else if (flag === '-h' || flag === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown option '${flag}'\n${USAGE}`);
  }
  return a;
}

// ---------------------------------------------------------------------------------------------
// The text: deterministic (mulberry32 from --seed), no downloads. Blocks of English prose, source
// code in four languages, Chinese, Japanese and Korean, with emoji (ZWJ sequences, skin tones,
// flags) sprinkled in; whitespace runs, digits and punctuation exercise the pre-tokenizers.

function rng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (xs) => xs[int(xs.length)], chance: (p) => next() < p };
}

const WORDS = (
  'the of and to in is that it was for on are as with his they at be this from have or by one had not but ' +
  'what all were when we there can an your which their said if do will each about how up out them then she ' +
  'many some so these would other into has more her two like him see time could no make than first been ' +
  'people water long down day did get come made may part over new sound take only little work know place ' +
  'year live me back give most very after thing our just name good sentence man think say great where help ' +
  'through much before line right too mean old any same tell boy follow came want show also around form ' +
  'three small set put end does another well large must big even such because turn here why ask went men ' +
  'read need land different home us move try kind hand picture again change off play spell air away animal ' +
  'house point page letter mother answer found study still learn should world high every near add food ' +
  'between own below country plant last school father keep tree never start city earth eye light thought ' +
  'head under story saw left few while along might close something seem next hard open example begin life ' +
  'always those both paper together got group often run important until children side feet car mile night ' +
  'walk white sea began grow took river four carry state once book hear stop without second later miss idea ' +
  'enough eat face watch far really almost let above girl sometimes mountain cut young talk soon list song ' +
  'being leave family model memory kernel tokenizer vocabulary benchmark throughput latency compiler'
).split(' ');
const CONTRACTIONS = ["don't", "it's", "we'll", "they're", "I've", "can't", "isn't", "you'd", "she's", "won't"];
const NAMES = ['Alice', 'Bob', 'Müller', 'José', 'Zoë', 'Paris', 'Tokyo', 'São Paulo', 'Kraków', 'GitHub', 'Linux'];
const EMOJI = ['😀', '🎉', '👍', '👍🏽', '❤️', '🚀', '✨', '🤖', '🔥', '✅', '👨‍👩‍👧‍👦', '🧑🏿‍💻', '🇯🇵', '🇧🇷', '🏳️‍🌈', '☕', '🙏🏻', '😂'];
const ZH = (
  '我们 时间 问题 发展 国家 工作 学习 电脑 程序 数据 模型 语言 今天 明天 朋友 城市 世界 经济 技术 研究 ' +
  '方法 结果 系统 网络 文化 历史 社会 生活 环境 教育 能够 已经 因为 所以 但是 如果 这个 那个 非常 重要 ' +
  '一个 没有 可以 什么 自己 他们 知道 现在 开始 需要 使用 分析 计算 速度 文本 处理 中文 汉字 北京 上海'
).split(' ');
const ZH_GLUE = ['的', '了', '在', '是', '和', '也', '都', '很', '就', '把'];
const JA_WORDS = ['東京', '日本語', '今日', '先生', '学生', '会社', '時間', '電車', '天気', '勉強', '映画', '料理', '世界', '問題'];
const JA_KANA = ['コンピュータ', 'データ', 'プログラム', 'テスト', 'ソフトウェア', 'ネットワーク', 'カメラ', 'コーヒー'];
const JA_PARTICLES = ['は', 'が', 'を', 'に', 'で', 'と', 'の', 'も', 'から', 'まで'];
const JA_ENDINGS = ['です。', 'ます。', 'でした。', 'ません。', 'ですね。', 'ましょう。', 'だ。'];
const KO_WORDS = ['안녕하세요', '사람', '시간', '학교', '컴퓨터', '데이터', '프로그램', '한국어', '서울', '오늘', '내일', '친구', '음식', '세계'];
const KO_PARTICLES = ['은', '는', '이', '가', '을', '를', '에', '에서', '와', '도'];
const KO_ENDINGS = ['입니다.', '합니다.', '있어요.', '했습니다.', '예요.', '좋아요!'];

function englishParagraph(r) {
  const sentences = [];
  for (let s = 3 + r.int(5); s > 0; s--) {
    const words = [];
    for (let w = 6 + r.int(15); w > 0; w--) {
      const x = r.next();
      if (x < 0.04) words.push(r.pick(CONTRACTIONS));
      else if (x < 0.07) words.push(r.pick(NAMES));
      else if (x < 0.09) words.push(String(r.int(3000)));
      else if (x < 0.10) words.push(`${r.int(100)}.${r.int(100)}%`);
      else if (x < 0.11) words.push(`(${r.pick(WORDS)})`);
      else if (x < 0.12) words.push(`"${r.pick(WORDS)}"`);
      else if (x < 0.13) words.push(r.pick(EMOJI));
      else words.push(r.pick(WORDS));
      if (r.chance(0.06)) words[words.length - 1] += ',';
    }
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    sentences.push(words.join(' ') + r.pick(['.', '.', '.', '!', '?', '...']));
  }
  const head = r.chance(0.15) ? `## ${r.pick(WORDS)} ${r.pick(WORDS)}\n\n` : '';
  const list = r.chance(0.15) ? '\n' + Array.from({ length: 2 + r.int(3) }, () => `- ${r.pick(WORDS)} ${r.pick(WORDS)}`).join('\n') : '';
  return `${head}${sentences.join(' ')}${list}\n\n`;
}

const ident = (r, camel) => {
  const parts = [r.pick(WORDS), r.pick(WORDS)].map((w) => w.replace(/[^a-z]/g, '') || 'x');
  return camel ? parts[0] + parts[1][0].toUpperCase() + parts[1].slice(1) : parts.join('_');
};

function codeBlock(r) {
  const kind = r.int(5);
  const [f, a, b, c] = [ident(r, kind === 2), ident(r, kind === 2), ident(r, kind === 2), ident(r, kind === 2)];
  const n = r.int(1000);
  if (kind === 0) {
    return `// ${r.pick(WORDS)} ${r.pick(WORDS)}: ${r.pick(WORDS)} the ${r.pick(WORDS)}\n` +
      `static int64_t ${f}(const std::vector<int32_t>& ${a}, size_t ${b}) {\n` +
      `  int64_t ${c} = ${n};\n  for (size_t i = 0; i < ${a}.size() && i < ${b}; ++i) {\n` +
      `    if (${a}[i] >= 0x${n.toString(16)}) ${c} += ${a}[i] * ${r.int(9) + 1};\n` +
      `    else ${c} -= (${a}[i] << ${r.int(8)}) | 0xFF;\n  }\n  return ${c} != 0 ? ${c} : -1;  // ${r.pick(WORDS)}\n}\n\n`;
  }
  if (kind === 1) {
    return `def ${f}(${a}, ${b}=${n}, *args, **kwargs):\n    """${englishParagraph(r).split('. ')[0].trim()}."""\n` +
      `    ${c} = {}\n    for i, item in enumerate(${a}):\n        if i % ${r.int(7) + 2} == 0 and item is not None:\n` +
      `            ${c}[f"{item}_{i}"] = item * ${b} / 3.14159\n        elif item == '${r.pick(WORDS)}':\n` +
      `            continue\n    return sorted(${c}.items(), key=lambda kv: -kv[1])[:${r.int(50) + 1}]\n\n\n`;
  }
  if (kind === 2) {
    return `export async function ${f}(${a}, { ${b} = ${n}, ${c} } = {}) {\n` +
      `\tconst res = await fetch(\`/api/v${r.int(4)}/${a}/\${${b}}?q=\${encodeURIComponent(${c} ?? '')}\`);\n` +
      `\tif (!res.ok) throw new Error(\`${r.pick(WORDS)} failed: \${res.status}\`);\n` +
      `\treturn (await res.json()).map((x) => ({ ...x, ${b}: x.${b} ?? null }));\n}\n\n`;
  }
  if (kind === 3) {
    return `{\n  "${a}": ${n},\n  "${b}": [${r.int(99)}, ${r.int(99)}, ${r.next().toFixed(6)}],\n` +
      `  "${c}": {"enabled": ${r.chance(0.5)}, "name": "${r.pick(NAMES)}", "tags": ["${r.pick(WORDS)}", "${r.pick(EMOJI)}"]},\n` +
      `  "${f}": null\n}\n\n`;
  }
  return `#!/usr/bin/env bash\nset -euo pipefail\nfor ${a} in $(seq 1 ${n}); do\n` +
    `    ${b}="\${${a}}_${r.pick(WORDS)}.txt"\n    [ -f "$${b}" ] && grep -c '${r.pick(WORDS)}' "$${b}" >> /tmp/${c}.log || true\n` +
    `done\necho "done: ${r.pick(WORDS)}"   # ${r.pick(WORDS)}\n\n`;
}

function cjkBlock(r) {
  const lang = r.int(3);
  let out = '';
  for (let s = 2 + r.int(5); s > 0; s--) {
    if (lang === 0) {
      for (let w = 4 + r.int(10); w > 0; w--) out += r.pick(ZH) + (r.chance(0.4) ? r.pick(ZH_GLUE) : '') + (r.chance(0.1) ? '，' : '');
      if (r.chance(0.1)) out += `${r.int(2030)}年${r.int(12) + 1}月`;
      out += r.pick(['。', '。', '！', '？', '；']);
    } else if (lang === 1) {
      for (let w = 2 + r.int(5); w > 0; w--) out += (r.chance(0.3) ? r.pick(JA_KANA) : r.pick(JA_WORDS)) + r.pick(JA_PARTICLES) + (r.chance(0.1) ? '、' : '');
      out += r.pick(JA_ENDINGS);
    } else {
      const words = [];
      for (let w = 2 + r.int(5); w > 0; w--) words.push(r.pick(KO_WORDS) + r.pick(KO_PARTICLES));
      out += words.join(' ') + ' ' + r.pick(KO_ENDINGS) + ' ';
    }
    if (r.chance(0.15)) out += r.pick(EMOJI);
  }
  return out.trimEnd() + '\n\n';
}

function emojiLine(r) {
  return Array.from({ length: 3 + r.int(10) }, () => (r.chance(0.5) ? r.pick(EMOJI) : r.pick(EMOJI) + ' ' + r.pick(WORDS))).join(' ') + '\n';
}

// Returns {text, parts: {english, code, cjk, emoji} in UTF-8 bytes}.
function generateText(bytes, seed) {
  const r = rng(seed);
  const kinds = [['english', 0.45, englishParagraph], ['code', 0.35, codeBlock], ['cjk', 0.16, cjkBlock], ['emoji', 0.04, emojiLine]];
  const parts = { english: 0, code: 0, cjk: 0, emoji: 0 };
  const chunks = [];
  let total = 0;
  while (total < bytes) {
    let x = r.next();
    const [name, , make] = kinds.find(([, p]) => (x -= p) < 0) ?? kinds[0];
    const chunk = make(r);
    const n = Buffer.byteLength(chunk, 'utf8');
    chunks.push(chunk);
    parts[name] += n;
    total += n;
  }
  return { text: chunks.join(''), parts };
}

// ---------------------------------------------------------------------------------------------
// llama.cpp side, in a child process per vocabulary (`--child JSON`): load the vocabulary only, read
// the text into a JS string, one untimed tokenize, then `reps` timed ones. Also times what
// node-llama-cpp adds around llama.cpp's tokenizer (see README).

async function child(args) {
  const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: args.vocab, vocabOnly: true });
  const text = fs.readFileSync(args.text, 'utf8');
  const warm = model.tokenize(text, false);
  const seconds = [];
  let nTokens = warm.length;
  for (let i = 0; i < args.reps; i++) {
    const t0 = performance.now();
    const ids = model.tokenize(text, false);
    seconds.push((performance.now() - t0) / 1000);
    if (ids.length !== nTokens) throw new Error(`token count changed between runs: ${nTokens} then ${ids.length}`);
    nTokens = ids.length;
  }
  if (args.idsOut) fs.writeFileSync(args.idsOut, Buffer.from(Int32Array.from(warm).buffer));

  // Marshaling estimate. (1) a call on a 5-byte string: the fixed cost of one call. (2) the string:
  // node-addon-api's Utf8Value asks V8 for the UTF-8 length, then for the bytes: ~2 UTF-16 -> UTF-8
  // passes, estimated as 2x Buffer.from(text). (3) the result: llama.cpp's ids are copied into a
  // Uint32Array and node-llama-cpp turns that into a JS array with Array.from.
  const best = (fn, n) => {
    let min = Infinity;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      fn();
      min = Math.min(min, performance.now() - t0);
    }
    return min / 1000;
  };
  const TINY = 2000;
  model.tokenize('Hello', false);
  const t0 = performance.now();
  for (let i = 0; i < TINY; i++) model.tokenize('Hello', false);
  const tinyCall = (performance.now() - t0) / 1000 / TINY;
  const utf8 = 2 * best(() => Buffer.from(text, 'utf8'), 3);
  const u32 = Uint32Array.from(warm);
  const toArray = best(() => Array.from(u32), 3) + best(() => new Uint32Array(warm.length).set(u32), 3);
  const version = JSON.parse(fs.readFileSync(new URL('./node_modules/node-llama-cpp/package.json', import.meta.url), 'utf8')).version;
  await model.dispose();
  process.stdout.write(JSON.stringify({
    tokens: nTokens, seconds, version,
    marshal: { tiny_call_s: tinyCall, utf8_s: utf8, ids_s: toArray, total_s: tinyCall + utf8 + toArray },
  }) + '\n');
}

// ---------------------------------------------------------------------------------------------

const lastJsonLine = (s) => s.trim().split('\n').filter((l) => l.startsWith('{')).pop();
const tail = (r) => (r.stderr || r.stdout || '').trim().split('\n').slice(-6).join('\n');

async function runOxidize(a, vocab, textPath) {
  const r = await exec([a.oxidize, 'tokenize', '-m', vocab, '-f', textPath, '--no-bos', '--no-parse-special', '--bench', String(a.reps)],
    { timeoutMs: a.timeout * 1000 });
  const line = lastJsonLine(r.stdout);
  if (r.code !== 0 || !line) throw new Error(`oxidize exited with ${r.code}: ${tail(r)}`);
  return JSON.parse(line);
}

async function oxidizeIds(a, vocab, textPath) {
  const r = await exec([a.oxidize, 'tokenize', '-m', vocab, '-f', textPath, '--no-bos', '--no-parse-special', '--ids'],
    { timeoutMs: a.timeout * 1000 });
  if (r.code !== 0) throw new Error(`oxidize --ids exited with ${r.code}: ${tail(r)}`);
  const body = r.stdout.trim().replace(/^\[|\]$/g, '').trim();
  return body === '' ? [] : body.split(',').map(Number);
}

async function runLlamaCpp(a, vocab, textPath, idsOut) {
  const args = JSON.stringify({ vocab, text: textPath, reps: a.reps, idsOut });
  const r = await exec([process.execPath, fileURLToPath(import.meta.url), '--child', args], { timeoutMs: a.timeout * 1000 });
  const line = lastJsonLine(r.stdout);
  if (r.code !== 0 || !line) throw new Error(`node-llama-cpp exited with ${r.code}: ${tail(r)}`);
  return JSON.parse(line);
}

// First index where the two id sequences differ, or -1.
function firstDiff(x, y) {
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return i;
  return x.length === y.length ? -1 : n;
}

const digits = (x) => (x >= 100 ? 1 : x >= 10 ? 2 : 3);
const fmt = (s) => (s ? `${s.mean.toFixed(digits(s.mean))} ± ${s.sd.toFixed(digits(s.mean))}` : '–');

function table(rows) {
  const lines = [
    '| vocab | type / pre | oxidize MB/s | llama.cpp MB/s | oxidize / llama.cpp | tokens oxidize / llama.cpp | same ids | JS↔native share of llama.cpp time |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |',
  ];
  for (const r of rows) {
    const ratio = r.ox && r.ll ? `${(r.ox.mean / r.ll.mean).toFixed(2)}×` : '–';
    const counts = `${r.oxTokens ?? '–'} / ${r.llTokens ?? '–'}${r.countMismatch ? ' **MISMATCH**' : ''}`;
    const ids = r.firstDiff === undefined ? '–' : r.firstDiff < 0 ? 'yes' : `**no** (first diff at ${r.firstDiff})`;
    const share = r.marshal && r.ll ? `${((100 * r.marshal.total_s * r.ll.mean * 1e6) / r.bytes).toFixed(0)}%` : '–';
    lines.push(`| ${r.vocab} | ${r.type ?? '?'}${r.pre ? ' / ' + r.pre : ''} | ${fmt(r.ox)} | ${fmt(r.ll)} | ${ratio} | ${counts} | ${ids} | ${share} |`);
  }
  return lines.join('\n') + '\n';
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(a.oxidize)) throw new Error(`no oxidize CLI at ${a.oxidize} (build it, or pass --oxidize PATH)`);
  const vocabDir = path.join(a.shared, 'vocab');
  const vocabs = (a.vocab ?? fs.readdirSync(vocabDir).filter((f) => /^ggml-vocab-.*\.gguf$/.test(f)).sort())
    .map((v) => (v.endsWith('.gguf') ? path.resolve(v.includes('/') ? v : path.join(vocabDir, v)) : path.join(vocabDir, `ggml-vocab-${v}.gguf`)));
  for (const v of vocabs) if (!fs.existsSync(v)) throw new Error(`no vocabulary at ${v}`);

  fs.mkdirSync(a.out, { recursive: true });
  let textPath = a.text;
  let parts = null;
  if (!textPath) {
    const g = generateText(a.bytes, a.seed);
    textPath = path.join(a.out, 'tokenize_text.txt');
    fs.writeFileSync(textPath, g.text);
    parts = g.parts;
  }
  const bytes = fs.readFileSync(textPath);
  // llama.cpp gets the text through a JS string: invalid UTF-8 would reach it as U+FFFD and the two
  // engines would tokenize different bytes.
  if (!Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes)) throw new Error(`${textPath} is not valid UTF-8`);
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  const load = os.loadavg().map((x) => x.toFixed(2)).join(', ');
  const cpu = os.cpus()[0]?.model ?? '?';
  console.error(`text: ${textPath}, ${bytes.length} bytes, sha256 ${sha.slice(0, 16)}…; ${a.reps} reps; load ${load}`);

  const rows = [];
  const failures = [];
  const tmpIds = path.join(a.out, 'tokenize_llamacpp_ids.bin');
  for (const vocab of vocabs) {
    const row = { vocab: path.basename(vocab).replace(/^ggml-vocab-|\.gguf$/g, ''), bytes: bytes.length };
    console.error(`${row.vocab}: oxidize...`);
    try {
      const ox = await runOxidize(a, vocab, textPath);
      Object.assign(row, { type: ox.type, pre: ox.pre, oxTokens: ox.tokens, oxSeconds: ox.seconds });
      row.ox = stats(ox.seconds.map((s) => bytes.length / 1e6 / s));
    } catch (e) {
      failures.push(`${row.vocab} oxidize: ${e.message}`);
    }
    console.error(`${row.vocab}: llama.cpp...`);
    try {
      fs.rmSync(tmpIds, { force: true });
      const ll = await runLlamaCpp(a, vocab, textPath, a.ids ? tmpIds : null);
      Object.assign(row, { llTokens: ll.tokens, llSeconds: ll.seconds, marshal: ll.marshal, llamaCppVersion: ll.version });
      row.ll = stats(ll.seconds.map((s) => bytes.length / 1e6 / s));
    } catch (e) {
      failures.push(`${row.vocab} llama.cpp: ${e.message}`);
    }
    if (row.oxTokens !== undefined && row.llTokens !== undefined) {
      row.countMismatch = row.oxTokens !== row.llTokens;
      if (a.ids) {
        try {
          const llIds = Array.from(new Int32Array(new Uint8Array(fs.readFileSync(tmpIds)).buffer));
          const oxIds = await oxidizeIds(a, vocab, textPath);
          row.firstDiff = firstDiff(oxIds, llIds);
          if (row.firstDiff >= 0) {
            const at = row.firstDiff;
            row.diffContext = { oxidize: oxIds.slice(Math.max(0, at - 3), at + 5), llamacpp: llIds.slice(Math.max(0, at - 3), at + 5) };
          }
        } catch (e) {
          failures.push(`${row.vocab} id comparison: ${e.message}`);
        }
      }
    }
    rows.push(row);
  }
  fs.rmSync(tmpIds, { force: true });

  const md = table(rows);
  const version = rows.find((r) => r.llamaCppVersion)?.llamaCppVersion ?? '?';
  const header = `Tokenization throughput, ${new Date().toISOString()}: ${bytes.length} bytes of ` +
    (parts ? `generated text (seed ${a.seed}: English ${parts.english}, code ${parts.code}, CJK ${parts.cjk}, emoji lines ${parts.emoji} bytes)` : path.basename(textPath)) +
    `, sha256 ${sha.slice(0, 16)}…; mean ± sd over ${a.reps} repetitions after one warm-up; MB = 10^6 bytes.\n` +
    `No BOS/EOS, special tokens not parsed. oxidize: \`${path.relative(repo, a.oxidize)} tokenize --bench\`; llama.cpp: node-llama-cpp ${version} \`model.tokenize(text, false)\` (vocab-only). ` +
    `CPU ${cpu}, ${os.cpus().length} cores, load average ${load}.\n\n`;
  const mismatches = rows.filter((r) => r.countMismatch || (r.firstDiff !== undefined && r.firstDiff >= 0));
  let notes = '';
  if (mismatches.length) {
    notes += `\nToken mismatches (tokenizer bugs on one side): ${mismatches.map((r) => `${r.vocab} (${r.oxTokens} vs ${r.llTokens} tokens${r.firstDiff >= 0 ? `, first different id at ${r.firstDiff}` : ''})`).join('; ')}\n`;
  }
  if (failures.length) notes += `\nFailed runs:\n${failures.map((f) => `- ${f.replace(/\n/g, ' ')}`).join('\n')}\n`;
  const out = header + md + notes;
  process.stdout.write(out);
  fs.writeFileSync(path.join(a.out, 'tokenize.md'), out);
  fs.writeFileSync(path.join(a.out, 'tokenize.json'), JSON.stringify({
    date: new Date().toISOString(), text: { path: textPath, bytes: bytes.length, sha256: sha, seed: parts ? a.seed : null, parts },
    reps: a.reps, loadavg: os.loadavg(), cpu, cores: os.cpus().length, oxidize: a.oxidize, node_llama_cpp: version,
    rows: rows.map(({ ox, ll, ...r }) => ({ ...r, oxidize_mbps: ox, llamacpp_mbps: ll })), failures,
  }, null, 2) + '\n');
  if (failures.length || mismatches.length) process.exitCode = 1;
}

if (process.argv[2] === '--child') {
  child(JSON.parse(process.argv[3])).catch((e) => {
    console.error(e?.stack ?? String(e));
    process.exit(1);
  });
} else {
  main().catch((e) => {
    console.error(`tokenize.mjs: ${e.message}`);
    process.exit(1);
  });
}
