#!/usr/bin/env python3
# How the golden RMSE figures in quantize_test.cpp were measured: llama.cpp's own quantizers
# (ggml_quantize_chunk, no importance matrix, as llama-quantize calls them) and dequantizers,
# called through ctypes on N(0, 1) data. Not run by CI (it needs llama.cpp's library):
#   npm pack @node-llama-cpp/linux-x64@3.22.1 && tar xzf node-llama-cpp-linux-x64-3.22.1.tgz
#   python3 measure_ggml_rmse.py package/bins/linux-x64/libggml-base.so      (needs python3-numpy)
# TQ1_0, TQ2_0 and MXFP4 were measured against the libggml-base.so of llama.cpp built from source
# (the one beside this project's checkout, build/llama.cpp/build/bin), which has them.
import ctypes as C
import sys

import numpy as np

TYPES = {  # name: (GGUF type id, block size, bytes per block, ggml function suffix)
    "Q4_0": (2, 32, 18, "q4_0"), "Q4_1": (3, 32, 20, "q4_1"), "Q5_0": (6, 32, 22, "q5_0"),
    "Q5_1": (7, 32, 24, "q5_1"), "Q8_0": (8, 32, 34, "q8_0"), "Q2_K": (10, 256, 84, "q2_K"),
    "Q3_K": (11, 256, 110, "q3_K"), "Q4_K": (12, 256, 144, "q4_K"), "Q5_K": (13, 256, 176, "q5_K"),
    "Q6_K": (14, 256, 210, "q6_K"), "IQ4_NL": (20, 32, 18, "iq4_nl"), "IQ4_XS": (23, 256, 136, "iq4_xs"),
    "TQ1_0": (34, 256, 54, "tq1_0"), "TQ2_0": (35, 256, 66, "tq2_0"), "MXFP4": (39, 32, 17, "mxfp4"),
}

def main():
    ggml = C.CDLL(sys.argv[1])
    ggml.ggml_quantize_chunk.restype = C.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64, C.c_int64, C.c_int64, C.c_void_p]
    ptr = lambda a: a.ctypes.data_as(C.c_void_p)
    n_per_row, n_rows = 4096, 256
    x = np.random.default_rng(1).standard_normal(n_per_row * n_rows).astype(np.float32)
    for name, (t, bs, ts, fn) in TYPES.items():
        q = np.zeros(x.size // bs * ts, np.uint8)
        ggml.ggml_quantize_init(t)
        ggml.ggml_quantize_chunk(t, ptr(x), ptr(q), 0, n_rows, n_per_row, None)
        y = np.zeros_like(x)
        getattr(ggml, "dequantize_row_" + fn)(ptr(q), ptr(y), C.c_int64(x.size))
        print(f"{name:7s} rmse {np.sqrt(np.mean((y.astype(np.float64) - x) ** 2)):.6f}")

if __name__ == "__main__":
    main()
