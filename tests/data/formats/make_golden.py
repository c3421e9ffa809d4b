#!/usr/bin/env python3
# Writes golden.bin: llama.cpp's own bytes and floats for MXFP4, TQ1_0 and TQ2_0, which
# tests/core/quant/golden_test.cpp checks our quantizers and dequantizers against bit for bit.
# Each format gets (a) fixed inputs quantized by ggml_quantize_chunk (no importance matrix) and
# dequantized by dequantize_row_*, and (b) random block bytes (every code, extreme scales)
# dequantized by dequantize_row_*. Run against the libggml-base.so of a llama.cpp that has the
# three formats (needs python3-numpy):
#   python3 make_golden.py /path/to/libggml-base.so golden.bin
# Left out on purpose, where llama.cpp's behaviour is undefined or differs from ours by design:
# MXFP4 blocks with amax below 2^-125 (llama.cpp casts a negative exponent to uint8_t) and TQ
# blocks with amax of 65520 or more (llama.cpp stores an Inf scale, ours saturates at 65504).
#
# Layout, little-endian: "OXQG", u32 version (1), u32 record count; then per record: u32 GGUF
# type id, u32 element count n, u32 flags (bit 0: has input), [n f32 inputs], u32 byte count,
# the block bytes, n f32 dequantized values.
import ctypes as C
import struct
import sys

import numpy as np

TYPES = {"MXFP4": (39, 32, 17, "mxfp4"), "TQ1_0": (34, 256, 54, "tq1_0"), "TQ2_0": (35, 256, 66, "tq2_0")}


def mxfp4_inputs(rng):
    blocks = [rng.standard_normal(32) * s for s in (1.0, 0.02, 300.0, 1e-3, 7.0, 1e-30, 1e30, 0.5)]
    # Ties: amax 7.5 gives d = 0.5 (levels 0, .5, 1, 1.5, 2, 3, 4, 6): every midpoint, both signs,
    # and 7.5 clipping to 6.
    mid = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.5]
    blocks.append(np.array(mid + [-m for m in mid] + mid[::-1] + [-m for m in mid[::-1]]))
    blocks.append(np.zeros(32))
    blocks.append(np.full(32, -0.0))
    # amax a few ulps below a power of two, where log2f rounds up to the integer; and exactly one.
    below8 = np.nextafter(np.float32(8.0), np.float32(0.0))
    blocks.append(np.concatenate([[below8], rng.uniform(-8.0, 8.0, 31)]))
    blocks.append(np.concatenate([[-16.0], rng.uniform(-16.0, 16.0, 31)]))
    blocks.append(rng.standard_normal(32) * 2.0 ** -120)  # small, amax well above 2^-125
    return np.concatenate(blocks).astype(np.float32)


def tq_inputs(rng):
    blocks = [rng.standard_normal(256) * s for s in (1.0, 0.02, 1000.0)]
    # Already ternary (what the format is for), with and without noise.
    tern = rng.integers(-1, 2, 256).astype(np.float64)
    blocks.append(tern * 0.37)
    blocks.append(tern * 0.37 + rng.standard_normal(256) * 0.05)
    # Exact halves of amax: amax 1 (x * 1/amax exact) and amax 3 (1/3 rounded).
    halves = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], 256)
    halves[0] = 1.0
    blocks.append(halves)
    blocks.append(halves * 3.0)
    blocks.append(np.zeros(256))
    return np.concatenate(blocks).astype(np.float32)


def random_blocks(name, rng, n_blocks):
    _, bs, ts, _ = TYPES[name]
    b = rng.integers(0, 256, n_blocks * ts, dtype=np.uint8)
    if name == "MXFP4":
        b[0::ts][:4] = [0, 1, 254, 255]  # subnormal scales and the largest (12 * 2^127 is Inf)
    else:  # fp16 d at the end of each block: finite values, subnormals and zeros included
        halves = rng.integers(0, 0x7C00, n_blocks, dtype=np.uint16) | (rng.integers(0, 2, n_blocks, dtype=np.uint16) << 15)
        halves[:4] = [0x0000, 0x8000, 0x0001, 0x7BFF]
        for i, h in enumerate(halves):
            b[i * ts + ts - 2 : i * ts + ts] = [h & 0xFF, h >> 8]
    return b


def main():
    ggml = C.CDLL(sys.argv[1])
    ggml.ggml_quantize_chunk.restype = C.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64, C.c_int64, C.c_int64, C.c_void_p]
    ptr = lambda a: a.ctypes.data_as(C.c_void_p)
    rng = np.random.default_rng(2024)
    records = []
    for name, (t, bs, ts, fn) in TYPES.items():
        dequant = getattr(ggml, "dequantize_row_" + fn)
        x = mxfp4_inputs(rng) if name == "MXFP4" else tq_inputs(rng)
        q = np.zeros(x.size // bs * ts, np.uint8)
        ggml.ggml_quantize_init(t)
        ggml.ggml_quantize_chunk(t, ptr(x), ptr(q), 0, 1, x.size, None)
        y = np.zeros_like(x)
        dequant(ptr(q), ptr(y), C.c_int64(x.size))
        records.append((t, x, q, y))
        r = random_blocks(name, rng, 64 if bs == 32 else 8)
        y = np.zeros(r.size // ts * bs, np.float32)
        dequant(ptr(r), ptr(y), C.c_int64(y.size))
        records.append((t, None, r, y))
    out = bytearray(b"OXQG" + struct.pack("<II", 1, len(records)))
    for t, x, q, y in records:
        out += struct.pack("<III", t, y.size, 0 if x is None else 1)
        if x is not None:
            out += x.astype("<f4").tobytes()
        out += struct.pack("<I", q.size) + q.tobytes() + y.astype("<f4").tobytes()
    with open(sys.argv[2], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
