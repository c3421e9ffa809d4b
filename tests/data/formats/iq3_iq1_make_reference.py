#!/usr/bin/env python3
# Writes iq3_xxs.ref, iq3_s.ref, iq1_s.ref and iq1_m.ref beside this script: llama.cpp's own
# results for the grid i-quants, which tests/core/quant/iq3_iq1_reference_test.cpp checks oxidize
# against. Not run by CI (it needs llama.cpp's libraries, built from llama.cpp v0.5.0):
#   /usr/bin/python3 iq3_iq1_make_reference.py LLAMA_BUILD/bin     (needs python3-numpy)
#
# A .ref file is a list of sections: u32 name length, name, u64 byte count, bytes (little-endian).
#   x           f32 [3 rows x 1024]: N(0,1), N(0,0.02) (weight-like), N(0,1)^3 / 3 (heavy tails)
#   importance  f32 [1024]: log-normal, one weight per column (as llama-imatrix gives)
#   q_none / q_ones / q_imp   ggml_quantize_chunk of x: no importance (omitted for IQ1_S, which
#               needs one), all-ones importance, the log-normal importance
#   act         Q8_K of 3 N(0,1) rows of 1024 (the CPU backend's from_float, as llama.cpp's matmul makes them)
#   dot_imp_generic, dot_imp_simd   f32 [3]: vec_dot of q_imp row r with act row r, by
#               ggml_vec_dot_*_q8_K_generic and by the CPU backend's own (SIMD) vec_dot
#   dot_imp_block_generic   f32 [12]: the generic vec_dot of each block alone (n = 256)
#   sweep       blocks of random bytes whose grid indices run over the whole codebook (IQ1_M: random
#               blocks, its codebook is IQ1_S's), with sane fp16 scales
#   deq_sweep   f32: dequantize_row_* of sweep
#   act_sweep, dot_sweep_generic, dot_sweep_simd, dot_sweep_block_generic   the same for the sweep row
import ctypes as C
import os
import struct
import sys

import numpy as np

TYPES = {  # name: (GGUF type id, bytes per block, needs importance)
    "iq3_xxs": (18, 98, False),
    "iq3_s": (21, 110, False),
    "iq1_s": (19, 50, True),
    "iq1_m": (29, 56, False),
}
Q8_K = 15
N_PER_ROW, N_ROWS = 1024, 3
HALVES = [0x2E66, 0x3400, 0xA266, 0x1C00]  # 0.1, 0.25, -0.0125, 2^-8


class TraitsCpu(C.Structure):
    _fields_ = [("from_float", C.c_void_p), ("vec_dot", C.c_void_p), ("vec_dot_type", C.c_int), ("nrows", C.c_int64)]


VEC_DOT = C.CFUNCTYPE(None, C.c_int, C.POINTER(C.c_float), C.c_size_t, C.c_void_p, C.c_size_t, C.c_void_p, C.c_size_t, C.c_int)
FROM_FLOAT = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_int64)


def ptr(a):
    return a.ctypes.data_as(C.c_void_p)


def sweep_blocks(name, rng):
    """Random blocks whose grid indices cover the codebook; fp16 scales from HALVES."""
    n_index, per_block, ts, nb = {"iq3_xxs": (256, 64, 98, 8), "iq3_s": (512, 64, 110, 16),
                                  "iq1_s": (2048, 32, 50, 64), "iq1_m": (0, 32, 56, 16)}[name]
    b = rng.integers(0, 256, size=(nb, ts), dtype=np.uint8)
    for i in range(nb):
        idx = [i * per_block + g for g in range(per_block)] if i * per_block < n_index else None
        h = HALVES[rng.integers(0, 4)]
        if name == "iq1_m":  # d lives in the top nibbles of the four u16 scale words (bytes 48..55)
            for w in range(4):
                b[i, 49 + 2 * w] = (b[i, 49 + 2 * w] & 0x0F) | (((h >> (4 * w)) & 0xF) << 4)
            continue
        b[i, 0], b[i, 1] = h & 0xFF, h >> 8
        if idx is None:
            continue
        if name == "iq3_xxs":
            b[i, 2:2 + 64] = idx
        elif name == "iq3_s":  # qs at 2, qh at 66: bit k of qh[ib] is bit 8 of group 8 ib + k
            b[i, 2:2 + 64] = [v & 255 for v in idx]
            for ib in range(8):
                b[i, 66 + ib] = sum((idx[8 * ib + k] >> 8) << k for k in range(8))
        else:  # iq1_s: qs at 2, u16 qh at 34: bits 3l..3l+2 hold bits 8..10 of group 4 ib + l
            b[i, 2:2 + 32] = [v & 255 for v in idx]
            for ib in range(8):
                old = int(b[i, 34 + 2 * ib]) | (int(b[i, 35 + 2 * ib]) << 8)
                qh = (old & 0xF000) | sum((idx[4 * ib + l] >> 8) << (3 * l) for l in range(4))
                b[i, 34 + 2 * ib], b[i, 35 + 2 * ib] = qh & 0xFF, qh >> 8
    return b.reshape(-1)


def main():
    base = C.CDLL(os.path.join(sys.argv[1], "libggml-base.so"))
    cpu = C.CDLL(os.path.join(sys.argv[1], "libggml-cpu.so"))
    base.ggml_quantize_chunk.restype = C.c_size_t
    base.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64, C.c_int64, C.c_int64, C.c_void_p]
    cpu.ggml_get_type_traits_cpu.restype = C.POINTER(TraitsCpu)
    cpu.ggml_cpu_init()
    q8k_from_float = FROM_FLOAT(cpu.ggml_get_type_traits_cpu(Q8_K).contents.from_float)
    out_dir = os.path.dirname(os.path.abspath(__file__))

    for name, (t, ts, needs_importance) in TYPES.items():
        rng = np.random.default_rng(list(TYPES).index(name) + 1)
        g = rng.standard_normal((N_ROWS, N_PER_ROW))
        x = np.stack([g[0], 0.02 * g[1], g[2] ** 3 / 3]).astype(np.float32)
        importance = np.exp(rng.standard_normal(N_PER_ROW)).astype(np.float32)
        sections = [("x", x), ("importance", importance)]
        base.ggml_quantize_init(t)
        row_bytes = N_PER_ROW // 256 * ts
        variants = [("ones", np.ones(N_PER_ROW, np.float32)), ("imp", importance)]
        if not needs_importance:
            variants.insert(0, ("none", None))
        q = {}
        for vname, imp in variants:
            q[vname] = np.zeros(N_ROWS * row_bytes, np.uint8)
            base.ggml_quantize_chunk(t, ptr(x), ptr(q[vname]), 0, N_ROWS, N_PER_ROW, None if imp is None else ptr(imp))
            sections.append(("q_" + vname, q[vname]))

        traits = cpu.ggml_get_type_traits_cpu(t).contents
        simd_dot = VEC_DOT(traits.vec_dot)
        generic_dot = VEC_DOT(getattr(cpu, f"ggml_vec_dot_{name}_q8_K_generic"))

        def activations(n_values):
            y = rng.standard_normal(n_values).astype(np.float32)
            a = np.zeros(n_values // 256 * 292, np.uint8)
            q8k_from_float(ptr(y), ptr(a), n_values)
            return a

        def dot(fn, blocks, act, n):
            r = C.c_float(0)
            fn(n, C.byref(r), 0, blocks.ctypes.data, 0, act.ctypes.data, 0, 1)
            return r.value

        def dots(blocks, act, n, rows):
            """Whole rows by the generic and the SIMD code, and every block alone by the generic."""
            wb, ab = n // 256 * ts, n // 256 * 292
            out = {"generic": np.zeros(rows, np.float32), "simd": np.zeros(rows, np.float32),
                   "block_generic": np.zeros(rows * n // 256, np.float32)}
            for r in range(rows):
                out["generic"][r] = dot(generic_dot, blocks[r * wb:], act[r * ab:], n)
                out["simd"][r] = dot(simd_dot, blocks[r * wb:], act[r * ab:], n)
            for b in range(rows * n // 256):
                out["block_generic"][b] = dot(generic_dot, blocks[b * ts:], act[b * 292:], 256)
            return out

        act = activations(N_ROWS * N_PER_ROW)
        d = dots(q["imp"], act, N_PER_ROW, N_ROWS)
        sections += [("act", act), ("dot_imp_generic", d["generic"]), ("dot_imp_simd", d["simd"]),
                     ("dot_imp_block_generic", d["block_generic"])]

        sweep = sweep_blocks(name, rng)
        n_sweep = sweep.size // ts * 256
        deq = np.zeros(n_sweep, np.float32)
        getattr(base, "dequantize_row_" + name)(ptr(sweep), ptr(deq), C.c_int64(n_sweep))
        act_sweep = activations(n_sweep)
        d = dots(sweep, act_sweep, n_sweep, 1)
        sections += [("sweep", sweep), ("deq_sweep", deq), ("act_sweep", act_sweep),
                     ("dot_sweep_generic", d["generic"]), ("dot_sweep_simd", d["simd"]),
                     ("dot_sweep_block_generic", d["block_generic"])]

        path = os.path.join(out_dir, name + ".ref")
        with open(path, "wb") as f:
            for sname, arr in sections:
                data = np.ascontiguousarray(arr).tobytes()
                f.write(struct.pack("<I", len(sname)) + sname.encode() + struct.pack("<Q", len(data)) + data)
        print(f"{path}: {os.path.getsize(path)} bytes; dots generic {d['generic']} simd {d['simd']}")


if __name__ == "__main__":
    main()
