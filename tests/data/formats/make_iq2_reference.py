#!/usr/bin/env python3
# Writes tests/data/formats/iq2_*.bin: a few IQ2 blocks as llama.cpp quantizes, dequantizes and
# dots them, for tests/core/quant/iq2_reference_test.cpp to compare oxidize with bit for bit.
# Calls llama.cpp's own libraries through ctypes (needs numpy: apt-get install python3-numpy):
#   /usr/bin/python3 tests/data/formats/make_iq2_reference.py build/llama.cpp/build/bin
# (the folder holding libggml-base.so and libggml-cpu.so; `bench/build_llama_cpp.sh` builds them).
#
# File layout, little-endian, arrays back to back:
#   char magic[8] "OXQREF1\0"; u32 ggml type, n_rows, n_per_row, has_importance
#   f32 x[n_rows * n_per_row]        the weights quantized
#   f32 importance[n_per_row]        only if has_importance (else llama.cpp got NULL)
#   u8  q[n_rows * row bytes]        ggml_quantize_chunk(type, x, importance)
#   f32 y[n_rows * n_per_row]        dequantize_row_<type>(q)
#   u8  a[n_rows * n_per_row / 256 * 292]   Q8_K activations (the CPU backend's from_float of N(0,1) data)
#   f32 dot_block[n_rows * n_per_row / 256] ggml_vec_dot_<type>_q8_K_generic over each single block
#   f32 dot_row_generic[n_rows]      the same over each whole row
#   f32 dot_row_cpu[n_rows]          the CPU backend's vec_dot (this machine's SIMD version)
# and iq2_*_codebook.bin, blocks built here that use every codebook entry, sign pattern and scale:
#   char magic[8] "OXQCB1\0\0"; u32 ggml type, n_blocks; u8 q[n_blocks * block bytes];
#   f32 y[n_blocks * 256] (dequantize_row_<type>(q))
import ctypes as C
import os
import sys

import numpy as np

TYPES = {  # file name: (GGUF type id, bytes per block, function suffix, with importance)
    "iq2_xxs": (16, 66, "iq2_xxs", True),
    "iq2_xs": (17, 74, "iq2_xs", True),
    "iq2_s": (22, 82, "iq2_s", True),
    "iq2_s_no_importance": (22, 82, "iq2_s", False),
}
Q8_K_BYTES = 292
N_ROWS, N_PER_ROW = 4, 512


class TraitsCpu(C.Structure):
    _fields_ = [("from_float", C.c_void_p), ("vec_dot", C.c_void_p), ("vec_dot_type", C.c_int), ("nrows", C.c_int64)]


VEC_DOT = C.CFUNCTYPE(None, C.c_int, C.POINTER(C.c_float), C.c_size_t, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t, C.c_int)
FROM_FLOAT = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_int64)


def importance(n):
    # Non-uniform, spanning 2^-5 .. 2^5 (exact in float; quantize_test.cpp uses the same formula).
    return np.array([2.0 ** (((j * 7) % 11) - 5) for j in range(n)], np.float32)


def weights(rng):
    rows = [rng.standard_normal(N_PER_ROW), 0.02 * rng.standard_normal(N_PER_ROW)]
    r = rng.standard_normal(N_PER_ROW)  # a zero 32-group, part of the next, and an outlier
    r[:40] = 0.0
    r[100] = 9.0
    rows.append(r)
    rows.append(rng.standard_normal(N_PER_ROW) * np.exp(0.5 * rng.standard_normal(N_PER_ROW)))  # heavy tails
    return np.concatenate(rows).astype(np.float32)


HALVES = [0x3C00, 0x3800, 0x1400, 0x5BD0, 0x0001, 0x2E66]  # 1, 0.5, 2^-10, 250, smallest subnormal, ~0.1


def codebook_blocks(fn, n_entries):
    """Blocks whose octets run through every codebook index, with varied signs, scales and d."""
    n_blocks = n_entries // 32
    blocks = []
    for b in range(n_blocks):
        d = np.array([HALVES[b % len(HALVES)]], np.uint16).tobytes()
        k = np.arange(32) + 32 * b          # octet k of block b uses index k
        signs = (k * 37 + 11) % 256
        nibbles = (np.arange(16) * 5 + b) % 16  # one per 16 elements
        scales = (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8)
        if fn == "iq2_xxs":
            aux = np.zeros(8, np.uint32)
            for ib in range(8):
                aux[ib] = sum(int(signs[4 * ib + l] & 127) << (7 * l) for l in range(4)) | (int(nibbles[2 * ib]) << 28)
            body = b"".join((k[4 * ib:4 * ib + 4] % 256).astype(np.uint8).tobytes() + aux[ib:ib + 1].tobytes()
                            for ib in range(8))
        elif fn == "iq2_xs":
            body = ((k % 512) | ((signs & 127) << 9)).astype(np.uint16).tobytes() + scales.tobytes()
        else:
            qh = np.zeros(8, np.uint8)
            for j in range(32):
                qh[j // 4] |= ((int(k[j]) >> 8) & 3) << (2 * (j % 4))
            body = (k % 256).astype(np.uint8).tobytes() + signs.astype(np.uint8).tobytes() + qh.tobytes() + scales.tobytes()
        blocks.append(d + body)
    return np.frombuffer(b"".join(blocks), np.uint8).copy()


def main():
    libdir = sys.argv[1]
    base = C.CDLL(os.path.join(libdir, "libggml-base.so"))
    cpu = C.CDLL(os.path.join(libdir, "libggml-cpu.so"))
    cpu.ggml_cpu_init()
    base.ggml_quantize_chunk.restype = C.c_size_t
    base.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64, C.c_int64, C.c_int64, C.c_void_p]
    cpu.ggml_get_type_traits_cpu.restype = C.POINTER(TraitsCpu)
    ptr = lambda a: a.ctypes.data_as(C.c_void_p)
    out_dir = os.path.dirname(os.path.abspath(__file__))
    for name, (t, ts, fn, with_imp) in TYPES.items():
        rng = np.random.default_rng(20240)
        x = weights(rng)
        imp = importance(N_PER_ROW) if with_imp else None
        n_blocks = x.size // 256
        q = np.zeros(n_blocks * ts, np.uint8)
        base.ggml_quantize_init(t)
        base.ggml_quantize_chunk(t, ptr(x), ptr(q), 0, N_ROWS, N_PER_ROW, ptr(imp) if with_imp else None)
        y = np.zeros_like(x)
        getattr(base, "dequantize_row_" + fn)(ptr(q), ptr(y), C.c_int64(x.size))

        traits = cpu.ggml_get_type_traits_cpu(t).contents
        assert traits.vec_dot_type == 15  # Q8_K
        act = rng.standard_normal(x.size).astype(np.float32)
        a = np.zeros(n_blocks * Q8_K_BYTES, np.uint8)
        FROM_FLOAT(cpu.ggml_get_type_traits_cpu(15).contents.from_float)(ptr(act), ptr(a), act.size)
        generic = VEC_DOT(C.cast(getattr(cpu, f"ggml_vec_dot_{fn}_q8_K_generic"), C.c_void_p).value)
        simd = VEC_DOT(traits.vec_dot)

        def dot(f, n, xq, aq):
            s = C.c_float(np.nan)
            f(n, C.byref(s), 0, xq, 0, aq, 0, 1)
            return s.value

        addr = lambda arr, off: C.c_void_p(arr.ctypes.data + off)
        dot_block = [dot(generic, 256, addr(q, b * ts), addr(a, b * Q8_K_BYTES)) for b in range(n_blocks)]
        per_row = N_PER_ROW // 256
        dot_row_generic = [dot(generic, N_PER_ROW, addr(q, r * per_row * ts), addr(a, r * per_row * Q8_K_BYTES))
                           for r in range(N_ROWS)]
        dot_row_cpu = [dot(simd, N_PER_ROW, addr(q, r * per_row * ts), addr(a, r * per_row * Q8_K_BYTES))
                       for r in range(N_ROWS)]

        with open(os.path.join(out_dir, name + ".bin"), "wb") as f:
            f.write(b"OXQREF1\0")
            f.write(np.array([t, N_ROWS, N_PER_ROW, int(with_imp)], np.uint32).tobytes())
            f.write(x.tobytes())
            if with_imp:
                f.write(imp.tobytes())
            for arr in (q, y, a, np.array(dot_block, np.float32), np.array(dot_row_generic, np.float32),
                        np.array(dot_row_cpu, np.float32)):
                f.write(arr.tobytes())
        if with_imp:
            cb = codebook_blocks(fn, {16: 256, 17: 512, 22: 1024}[t])
            n_cb = cb.size // ts
            assert n_cb * ts == cb.size
            ycb = np.zeros(n_cb * 256, np.float32)
            getattr(base, "dequantize_row_" + fn)(ptr(cb), ptr(ycb), C.c_int64(ycb.size))
            with open(os.path.join(out_dir, fn + "_codebook.bin"), "wb") as f:
                f.write(b"OXQCB1\0\0")
                f.write(np.array([t, n_cb], np.uint32).tobytes())
                f.write(cb.tobytes())
                f.write(ycb.tobytes())
        print(f"{name}: {n_blocks} blocks, row dots generic {dot_row_generic} cpu {dot_row_cpu}")


if __name__ == "__main__":
    main()
