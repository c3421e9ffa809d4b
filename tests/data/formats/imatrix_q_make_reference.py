#!/usr/bin/env python3
# Writes imatrix_q.ref beside this script: llama.cpp's own bytes for the formats whose quantizer
# takes an importance vector only in ggml_quantize_chunk (Q4_0 .. Q5_1, Q2_K .. Q6_K, IQ4_NL,
# IQ4_XS), which tests/core/quant/imatrix_quant_reference_test.cpp checks oxidize against block for
# block. Not run by CI (it needs llama.cpp's libggml-base.so, bench/build_llama_cpp.sh builds it):
#   /usr/bin/python3 imatrix_q_make_reference.py LLAMA_BUILD/bin/libggml-base.so   (needs python3-numpy)
#
# A .ref file is a list of sections (iq3_iq1_make_reference.py's layout): u32 name length, name,
# u64 byte count, bytes (little-endian).
#   x            f32 [4 rows x 1024]: N(0,1); N(0,0.02) (weight-like); N(0,1)^3 / 3 (heavy tails);
#                edge blocks (a zero super-block, constant 32-blocks of either sign, a lone value,
#                small values, all positive) followed by N(0,1)
#   importance   f32 [1024]: log-normal, one weight per column (as llama-imatrix gives), with
#                columns 96..127 at 0 (a column no calibration token reached)
#   <TYPE>_none / <TYPE>_ones / <TYPE>_imp   ggml_quantize_chunk of x with no importance, all-ones
#                importance, and the log-normal one (TYPE as GGUF spells it: Q4_0, Q2_K, IQ4_NL...)
import ctypes as C
import os
import struct
import sys

import numpy as np

TYPES = {  # name: (GGUF type id, block size, bytes per block)
    "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20), "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24),
    "Q2_K": (10, 256, 84), "Q3_K": (11, 256, 110), "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176),
    "Q6_K": (14, 256, 210), "IQ4_NL": (20, 32, 18), "IQ4_XS": (23, 256, 136),
}
N_PER_ROW, N_ROWS = 1024, 4


def ptr(a):
    return a.ctypes.data_as(C.c_void_p)


def inputs(rng):
    g = rng.standard_normal((N_ROWS, N_PER_ROW))
    x = np.stack([g[0], 0.02 * g[1], g[2] ** 3 / 3, g[3]])
    edge = x[3]
    edge[0:256] = 0.0                 # a whole zero super-block
    edge[256:288] = 0.5               # constant, positive
    edge[288:320] = -0.75             # constant, negative
    edge[320:352] = 0.0
    edge[330] = -3.0                  # one value in an otherwise zero block
    edge[352:384] = rng.standard_normal(32) * 1e-4   # small (x^2 ~ 1e-8)
    edge[384:416] = np.abs(edge[384:416])            # all positive (the min is clamped to 0)
    return x.astype(np.float32)


def main():
    ggml = C.CDLL(sys.argv[1])
    ggml.ggml_quantize_chunk.restype = C.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64, C.c_int64, C.c_int64, C.c_void_p]
    rng = np.random.default_rng(20250611)
    x = inputs(rng)
    importance = np.exp(rng.standard_normal(N_PER_ROW)).astype(np.float32)
    importance[96:128] = 0.0
    sections = [("x", x), ("importance", importance)]
    variants = [("none", None), ("ones", np.ones(N_PER_ROW, np.float32)), ("imp", importance)]
    for name, (t, bs, ts) in TYPES.items():
        ggml.ggml_quantize_init(t)
        for vname, imp in variants:
            q = np.zeros(N_ROWS * N_PER_ROW // bs * ts, np.uint8)
            ggml.ggml_quantize_chunk(t, ptr(x), ptr(q), 0, N_ROWS, N_PER_ROW, None if imp is None else ptr(imp))
            sections.append((f"{name}_{vname}", q))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "imatrix_q.ref")
    with open(path, "wb") as f:
        for sname, arr in sections:
            data = np.ascontiguousarray(arr).tobytes()
            f.write(struct.pack("<I", len(sname)) + sname.encode() + struct.pack("<Q", len(data)) + data)
    print(f"{path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
