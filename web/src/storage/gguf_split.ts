// Split GGUFs (llama.cpp's gguf-split: NAME-00001-of-0000N.gguf, each shard a GGUF whose keys
// split.no / split.count / split.tensors.count say where it belongs) joined into one GGUF in wasm
// memory as `gguf-split --merge` would write it: shard 1's metadata less the split keys, every
// shard's tensor infos with their offsets moved, then each shard's tensor data, aligned. Only the
// headers are parsed here; the tensor data is copied as it streams.
import { EngineError } from '../errors.js';

const SPLIT_KEYS = new Set(['split.no', 'split.count', 'split.tensors.count']);
const DEFAULT_ALIGNMENT = 32;
// Bytes of each GGUF value type (gguf.h's enum gguf_type); 8 (string) and 9 (array) vary.
const FIXED_SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

export interface GgufHeader {
  version: number;
  alignment: number;
  /** Where the tensor data starts (the header's end, aligned). */
  dataStart: number;
  /** Raw key/value records, with their key. */
  kvs: { key: string; bytes: Uint8Array }[];
  /** Raw tensor info records less their final u64 offset, and that offset. */
  tensors: { info: Uint8Array; offset: number }[];
  splitNo: number | null;
  splitCount: number | null;
  splitTensors: number | null;
}

class NeedMore extends Error {}

/**
 * The header of the GGUF whose first bytes are `bytes`, or null when they end inside it (read more
 * and call again). Malformed headers reject with "invalid_file" naming `what` and the offset.
 */
export function parseGgufHeader(bytes: Uint8Array, what: string): GgufHeader | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const need = (n: number) => {
    if (at + n > bytes.length) throw new NeedMore();
  };
  const u32 = () => { need(4); const v = view.getUint32(at, true); at += 4; return v; };
  const u64 = () => {
    need(8);
    const v = view.getBigUint64(at, true);
    at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new EngineError('invalid_file', `${what}: a count of ${v} at offset ${at - 8} is impossible`);
    return Number(v);
  };
  const str = () => {
    const n = u64();
    need(n);
    const s = new TextDecoder().decode(bytes.subarray(at, at + n));
    at += n;
    return s;
  };
  const skipValue = (type: number, depth: number): void => {
    if (type === 8) { str(); return; }
    if (type === 9 && depth === 0) {
      const inner = u32();
      const n = u64();
      if (inner === 8 || inner === 9) for (let i = 0; i < n; i++) skipValue(inner, depth + 1);
      else if (FIXED_SIZE[inner] !== undefined) { need(n * FIXED_SIZE[inner]); at += n * FIXED_SIZE[inner]; }
      else throw new EngineError('invalid_file', `${what}: unknown array element type ${inner} at offset ${at}`);
      return;
    }
    const size = FIXED_SIZE[type];
    if (size === undefined) throw new EngineError('invalid_file', `${what}: unknown value type ${type} at offset ${at}`);
    need(size);
    at += size;
  };
  const intValue = (type: number, start: number): number | null => {
    if (type === 2) return view.getUint16(start, true);
    if (type === 4) return view.getUint32(start, true);
    if (type === 5) return view.getInt32(start, true);
    if (type === 10) return Number(view.getBigUint64(start, true));
    return null;
  };
  try {
    need(8);
    if (u32() !== 0x46554747) throw new EngineError('invalid_file', `${what} is not a GGUF file (no GGUF magic)`);
    const version = u32();
    if (version !== 2 && version !== 3) throw new EngineError('unsupported', `${what}: GGUF version ${version} (2 and 3 are read)`);
    const nTensors = u64();
    const nKv = u64();
    const header: GgufHeader = {
      version, alignment: DEFAULT_ALIGNMENT, dataStart: 0, kvs: [], tensors: [], splitNo: null, splitCount: null, splitTensors: null,
    };
    for (let i = 0; i < nKv; i++) {
      const start = at;
      const key = str();
      const type = u32();
      const valueAt = at;
      skipValue(type, 0);
      header.kvs.push({ key, bytes: bytes.subarray(start, at) });
      const n = intValue(type, valueAt);
      if (key === 'general.alignment' && n !== null) header.alignment = n;
      if (key === 'split.no') header.splitNo = n;
      if (key === 'split.count') header.splitCount = n;
      if (key === 'split.tensors.count') header.splitTensors = n;
    }
    if (header.alignment === 0 || (header.alignment & (header.alignment - 1)) !== 0) {
      throw new EngineError('invalid_file', `${what}: general.alignment ${header.alignment} is not a power of two`);
    }
    for (let i = 0; i < nTensors; i++) {
      const start = at;
      str();
      const nDims = u32();
      if (nDims > 8) throw new EngineError('invalid_file', `${what}: tensor ${i} has ${nDims} dimensions`);
      need(nDims * 8 + 4);
      at += nDims * 8 + 4;
      const infoEnd = at;
      header.tensors.push({ info: bytes.subarray(start, infoEnd), offset: u64() });
    }
    header.dataStart = pad(at, header.alignment);
    return header;
  } catch (e) {
    if (e instanceof NeedMore) return null;
    throw e;
  }
}

const pad = (n: number, a: number) => Math.ceil(n / a) * a;

/**
 * The shard URLs of a split model given its first shard's URL (NAME-00001-of-0000N.gguf, query
 * kept), or null for a URL without that pattern. Another shard's URL rejects: load the first.
 */
export function shardUrls(url: string): string[] | null {
  const u = new URL(url);
  const m = u.pathname.match(/^(.*)-(\d{5})-of-(\d{5})\.gguf$/);
  if (m === null) return null;
  const no = Number(m[2]), count = Number(m[3]);
  if (count < 2) return null;
  if (no !== 1) {
    throw new EngineError('invalid_argument', `${url} is shard ${no} of ${count} of a split model: load the first shard (-00001-of-${m[3]}.gguf)`);
  }
  return Array.from({ length: count }, (_, i) => {
    const shard = new URL(u.href);
    shard.pathname = `${m[1]}-${String(i + 1).padStart(5, '0')}-of-${m[3]}.gguf`;
    return shard.href;
  });
}

export interface MergedLayout {
  /** The merged file's header, its tensor data offsets moved (padding after it up to dataStart). */
  header: Uint8Array;
  /** Where shard i's tensor data goes in the merged file. */
  shardBase: number[];
  size: number;
}

/** Checks the shards belong together (split.no, split.count, split.tensors.count) and lays them out. */
export function mergeLayout(headers: GgufHeader[], sizes: number[], urls: string[]): MergedLayout {
  const n = headers.length;
  const first = headers[0];
  let nTensors = 0;
  headers.forEach((h, i) => {
    if (h.splitCount !== n || h.splitNo !== i) {
      throw new EngineError('invalid_file', `${urls[i]}: split.no = ${h.splitNo}, split.count = ${h.splitCount}; shard ${i} of ${n} expected`);
    }
    if (sizes[i] < h.dataStart) throw new EngineError('invalid_file', `${urls[i]} ends (${sizes[i]} bytes) before its tensor data`);
    nTensors += h.tensors.length;
  });
  if (first.splitTensors !== null && first.splitTensors !== nTensors) {
    throw new EngineError('invalid_file', `${urls[0]}: split.tensors.count = ${first.splitTensors}, the shards hold ${nTensors} tensors`);
  }
  const align = first.alignment;
  const rel: number[] = [];
  let dataSize = 0;
  headers.forEach((h, i) => {
    dataSize = pad(dataSize, align);
    rel.push(dataSize);
    dataSize += sizes[i] - h.dataStart;
  });
  const kvs = first.kvs.filter((kv) => !SPLIT_KEYS.has(kv.key));
  const parts: Uint8Array[] = [];
  const u32 = (v: number) => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); return b; };
  const u64 = (v: number) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); return b; };
  parts.push(u32(0x46554747), u32(first.version), u64(nTensors), u64(kvs.length), ...kvs.map((kv) => kv.bytes));
  headers.forEach((h, i) => {
    for (const t of h.tensors) {
      if (t.offset % align !== 0) throw new EngineError('invalid_file', `${urls[i]}: a tensor offset ${t.offset} is not a multiple of ${align}`);
      parts.push(t.info, u64(rel[i] + t.offset));
    }
  });
  const headerSize = parts.reduce((s, p) => s + p.length, 0);
  const header = new Uint8Array(headerSize);
  let at = 0;
  for (const p of parts) {
    header.set(p, at);
    at += p.length;
  }
  const dataStart = pad(headerSize, align);
  return { header, shardBase: rel.map((r) => dataStart + r), size: dataStart + dataSize };
}
