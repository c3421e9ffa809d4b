// Puts hand-written relaxed-SIMD function bodies into a copy of a linked emscripten module.
//   node wasm/tools/splice_relaxed.mjs IN.wasm PLAIN_OUT.wasm RELAXED_OUT.wasm NAME=SLOT.wasm ...
// Each NAME is a C++ function of IN.wasm (found through the "name" section, which the link keeps
// with --profiling-funcs) whose body computes what SLOT.wasm's one exported function computes
// (see kernels/simd128/relaxed_slots.cpp). RELAXED_OUT is IN with those bodies replaced; both
// outputs drop the name section, so PLAIN_OUT is IN as the build would ship it otherwise.
// Clang 14 cannot emit relaxed SIMD, so this is how the opcodes get in. A slot body may use only
// its parameters and locals and memory 0 (no calls, globals or tables: their indices differ
// between the two modules); the signatures must match, or the splice stops with an error.
import fs from 'node:fs';

function fail(msg) {
  console.error(`splice_relaxed: ${msg}`);
  process.exit(1);
}

class Reader {
  constructor(bytes, pos = 0, end = bytes.length) { Object.assign(this, { bytes, pos, end }); }
  u8() {
    if (this.pos >= this.end) fail(`read past the end at offset ${this.pos}`);
    return this.bytes[this.pos++];
  }
  u32() {
    let result = 0, shift = 0, b;
    do {
      b = this.u8();
      result |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    return result >>> 0;
  }
  take(n) {
    if (this.pos + n > this.end) fail(`a length of ${n} at offset ${this.pos} runs past the end`);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  name() { return Buffer.from(this.take(this.u32())).toString('utf8'); }
}

function leb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return Buffer.from(out);
}

// Sections as {id, name (custom ones), start, body}, plus what the splice needs from them.
function parse(bytes, file) {
  if (bytes.length < 8 || bytes.readUInt32LE(0) !== 0x6d736100) fail(`${file}: not a wasm module`);
  const r = new Reader(bytes, 8);
  const sections = [];
  while (r.pos < bytes.length) {
    const id = r.u8();
    const size = r.u32();
    const start = r.pos;
    const body = r.take(size);
    const s = { id, start, body };
    if (id === 0) s.name = new Reader(body).name();
    sections.push(s);
  }
  const m = { sections, types: [], funcTypes: [], importedFuncs: 0, bodies: null, names: new Map(), exports: [] };
  for (const s of sections) {
    const sr = new Reader(s.body);
    if (s.id === 1) {
      for (let n = sr.u32(), i = 0; i < n; ++i) {
        const start = sr.pos;
        if (sr.u8() !== 0x60) fail(`${file}: type ${i} is not a function type`);
        sr.take(sr.u32());
        sr.take(sr.u32());
        m.types.push(Buffer.from(s.body.subarray(start, sr.pos)).toString('hex'));
      }
    } else if (s.id === 2) {
      for (let n = sr.u32(), i = 0; i < n; ++i) {
        sr.name();
        sr.name();
        const kind = sr.u8();
        if (kind === 0) {
          m.funcTypes.push(sr.u32());
          ++m.importedFuncs;
        } else if (kind === 1) {
          sr.u8();
          const flags = sr.u8();
          sr.u32();
          if (flags & 1) sr.u32();
        } else if (kind === 2) {
          const flags = sr.u8();
          sr.u32();
          if (flags & 1) sr.u32();
        } else if (kind === 3) {
          sr.u8();
          sr.u8();
        } else {
          fail(`${file}: import ${i} has unknown kind ${kind}`);
        }
      }
    } else if (s.id === 3) {
      for (let n = sr.u32(), i = 0; i < n; ++i) m.funcTypes.push(sr.u32());
    } else if (s.id === 7) {
      for (let n = sr.u32(), i = 0; i < n; ++i) {
        const name = sr.name();
        const kind = sr.u8();
        m.exports.push({ name, kind, index: sr.u32() });
      }
    } else if (s.id === 10) {
      m.bodies = [];
      for (let n = sr.u32(), i = 0; i < n; ++i) m.bodies.push(sr.take(sr.u32()));
    } else if (s.id === 0 && s.name === 'name') {
      sr.name();
      while (sr.pos < sr.end) {
        const sub = sr.u8();
        const size = sr.u32();
        const end = sr.pos + size;
        if (sub === 1) {
          for (let n = sr.u32(), i = 0; i < n; ++i) {
            const index = sr.u32();
            m.names.set(sr.name(), index);
          }
        }
        sr.pos = end;
      }
    }
  }
  if (!m.bodies) fail(`${file}: no code section`);
  return m;
}

function write(m, bodies) {
  const parts = [Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00])];
  for (const s of m.sections) {
    if (s.id === 0 && s.name === 'name') continue;
    let body = s.body;
    if (s.id === 10) body = Buffer.concat([leb(bodies.length), ...bodies.flatMap((b) => [leb(b.length), b])]);
    parts.push(Buffer.from([s.id]), leb(body.length), body);
  }
  return Buffer.concat(parts);
}

const [input, plainOut, relaxedOut, ...slots] = process.argv.slice(2);
if (!relaxedOut || slots.length === 0) {
  fail('usage: node splice_relaxed.mjs IN.wasm PLAIN_OUT.wasm RELAXED_OUT.wasm NAME=SLOT.wasm ...');
}
const main = parse(fs.readFileSync(input), input);
if (main.names.size === 0) fail(`${input}: no function names (link it with --profiling-funcs)`);
const bodies = main.bodies.slice();
for (const slot of slots) {
  const [name, file] = slot.split('=');
  const index = main.names.get(name);
  if (index === undefined) fail(`${input}: no function named ${name} (inlined, or not linked in?)`);
  if (index < main.importedFuncs) fail(`${input}: ${name} is an import`);
  const k = parse(fs.readFileSync(file), file);
  const funcs = k.exports.filter((e) => e.kind === 0);
  if (funcs.length !== 1) fail(`${file}: exports ${funcs.length} functions, want 1`);
  const kIndex = funcs[0].index;
  const want = main.types[main.funcTypes[index]], got = k.types[k.funcTypes[kIndex]];
  if (want !== got) fail(`${name}: signature of ${input} (type ${want}) differs from ${file} (type ${got})`);
  bodies[index - main.importedFuncs] = k.bodies[kIndex - k.importedFuncs];
}
fs.writeFileSync(plainOut, write(main, main.bodies));
fs.writeFileSync(relaxedOut, write(main, bodies));
