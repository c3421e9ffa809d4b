#!/usr/bin/env python3
# How the golden RMSE figures in quantize_test.cpp were measured: llama.cpp's own quantizers
# (ggml_quantize_chunk, as llama-quantize calls them) and dequantizers, called through ctypes on
# N(0, 1) data. The formats that take no importance matrix get none; the IQ2 formats get each
# importance vector below (IQ2_S also none: llama.cpp allows that for it only). Not run by CI (it
# needs llama.cpp's library):
#   npm pack @node-llama-cpp/linux-x64@3.22.1 && tar xzf node-llama-cpp-linux-x64-3.22.1.tgz
#   python3 measure_ggml_rmse.py package/bins/linux-x64/libggml-base.so      (needs python3-numpy)
# or a llama.cpp build: build/llama.cpp/build/bin/libggml-base.so (bench/build_llama_cpp.sh).
# The grid i-quants (IQ_TYPES) were measured with llama.cpp v0.5.0's libggml-base.so, under each
# importance vector of IMPORTANCE (a row's per-column weights, as llama-imatrix gives them): the
# plain RMSE and the importance-weighted one, sqrt(sum_j w_j (x_j - y_j)^2 / sum_j w_j).
# TQ1_0, TQ2_0 and MXFP4 were measured against the libggml-base.so of llama.cpp built from source
# (the one beside this project's checkout, build/llama.cpp/build/bin), which has them; so were the
# legacy formats, the K-quants and IQ4_NL / IQ4_XS under each importance vector of IMPORTANCE
# (WEIGHTED_TYPES: their importance-aware quantizers, which llama.cpp runs only when given one).
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
IMPORTANCE_TYPES = {  # name: (GGUF type id, bytes per block, suffix, importance runs)
    "IQ2_XXS": (16, 66, "iq2_xxs", ("ones", "skewed")),
    "IQ2_XS": (17, 74, "iq2_xs", ("ones", "skewed")),
    "IQ2_S": (22, 82, "iq2_s", ("none", "ones", "skewed")),
}


def importance(kind, n):
    if kind == "none":
        return None
    if kind == "ones":
        return np.ones(n, np.float32)
    # "skewed": 2^-5 .. 2^5 by column (quantize_test.cpp's skewed_importance()).
    return np.array([2.0 ** (((j * 7) % 11) - 5) for j in range(n)], np.float32)


IQ_TYPES = {  # name: (GGUF type id, block size, bytes per block, ggml function suffix, needs importance)
    "IQ3_XXS": (18, 256, 98, "iq3_xxs", False), "IQ3_S": (21, 256, 110, "iq3_s", False),
    "IQ1_S": (19, 256, 50, "iq1_s", True), "IQ1_M": (29, 256, 56, "iq1_m", False),
}
WEIGHTED_TYPES = {name: TYPES[name] + (False,) for name in
                  ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS")}

# Importance vectors over a row of n; "ramp" is 0.25 + ((37 j) mod 64) / 16: 0.25 .. 4.1875,
# exact in float, rebuilt the same way by quantize_test.cpp.
IMPORTANCE = {
    "none": lambda n: None,
    "ones": lambda n: np.ones(n, np.float32),
    "ramp": lambda n: (0.25 + ((37 * np.arange(n)) % 64) / 16).astype(np.float32),
}


def measure_iq(ggml, x, n_rows, n_per_row, ptr, types):
    for name, (t, bs, ts, fn, needs_importance) in types.items():
        for kind, make in IMPORTANCE.items():
            w = make(n_per_row)
            if w is None and needs_importance:
                continue
            q = np.zeros(x.size // bs * ts, np.uint8)
            ggml.ggml_quantize_init(t)
            ggml.ggml_quantize_chunk(t, ptr(x), ptr(q), 0, n_rows, n_per_row, None if w is None else ptr(w))
            y = np.zeros_like(x)
            getattr(ggml, "dequantize_row_" + fn)(ptr(q), ptr(y), C.c_int64(x.size))
            e2 = ((y.astype(np.float64) - x) ** 2).reshape(n_rows, n_per_row)
            ww = np.ones(n_per_row) if w is None else w.astype(np.float64)
            weighted = np.sqrt((e2 * ww).sum() / (ww.sum() * n_rows))
            print(f"{name:7s} importance {kind:4s} rmse {np.sqrt(e2.mean()):.6f} weighted {weighted:.6f}")


def main():
    ggml = C.CDLL(sys.argv[1])
    ggml.ggml_quantize_chunk.restype = C.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [C.c_int, C.c_void_p, C.c_void_p, C.c_int64, C.c_int64, C.c_int64, C.c_void_p]
    ptr = lambda a: a.ctypes.data_as(C.c_void_p)
    n_per_row, n_rows = 4096, 256
    x = np.random.default_rng(1).standard_normal(n_per_row * n_rows).astype(np.float32)

    def rmse(t, bs, ts, fn, imp):
        q = np.zeros(x.size // bs * ts, np.uint8)
        ggml.ggml_quantize_init(t)
        ggml.ggml_quantize_chunk(t, ptr(x), ptr(q), 0, n_rows, n_per_row, None if imp is None else ptr(imp))
        y = np.zeros_like(x)
        getattr(ggml, "dequantize_row_" + fn)(ptr(q), ptr(y), C.c_int64(x.size))
        return np.sqrt(np.mean((y.astype(np.float64) - x) ** 2))

    for name, (t, bs, ts, fn) in TYPES.items():
        print(f"{name:7s} rmse {rmse(t, bs, ts, fn, None):.6f}")
    for name, (t, ts, fn, kinds) in IMPORTANCE_TYPES.items():
        for kind in kinds:
            print(f"{name:7s} importance {kind:6s} rmse {rmse(t, 256, ts, fn, importance(kind, n_per_row)):.6f}")
    measure_iq(ggml, x, n_rows, n_per_row, ptr, IQ_TYPES)
    measure_iq(ggml, x, n_rows, n_per_row, ptr, WEIGHTED_TYPES)

if __name__ == "__main__":
    main()
