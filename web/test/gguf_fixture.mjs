// Builds small GGUF files in memory for the browser tests (format: GGUF v3, little-endian:
// magic, version, tensor count, metadata count, then key/type/value triples).
const TYPE_UINT32 = 4;
const TYPE_STRING = 8;

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
function u64(n) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
}
function str(s) {
  const bytes = Buffer.from(s, 'utf8');
  return Buffer.concat([u64(bytes.length), bytes]);
}

/**
 * A header-only GGUF (no tensors, no tokenizer) whose general.architecture is `arch`, with the
 * hyperparameter keys every transformer GGUF carries, as a real file of an unknown family would.
 */
export function ggufWithArchitecture(arch) {
  const count = (key, n) => Buffer.concat([str(`${arch}.${key}`), u32(TYPE_UINT32), u32(n)]);
  const kv = [
    Buffer.concat([str('general.architecture'), u32(TYPE_STRING), str(arch)]),
    Buffer.concat([str('general.alignment'), u32(TYPE_UINT32), u32(32)]),
    count('context_length', 512),
    count('embedding_length', 64),
    count('block_count', 2),
    count('feed_forward_length', 128),
    count('attention.head_count', 4),
  ];
  return Buffer.concat([Buffer.from('GGUF'), u32(3), u64(0), u64(kv.length), ...kv]);
}
