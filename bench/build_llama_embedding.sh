#!/usr/bin/env bash
# Builds llama.cpp's llama-embedding (examples/embedding/embedding.cpp, which build_llama_cpp.sh's
# CMake setup leaves out) against the libllama that bench/build_llama_cpp.sh built, with its main()
# wrapped so llama.cpp's asynchronous logger is drained before exit (its last lines, the end of a
# JSON output, are otherwise often lost).
# Usage: bench/build_llama_embedding.sh LLAMA_DIR OUT   (LLAMA_DIR: what build_llama_cpp.sh made)
set -euo pipefail
llama=$1
out=$2
bin=$(realpath "$llama/build/bin")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# llama_decode is wrapped too (-Wl,--wrap), to print the time spent in it (this build of llama.cpp
# prints no perf lines for embeddings): bench/embeddings.sh reads "llama_decode: X ms".
cat > "$tmp/drain_log.cpp" <<'CPP'
#include <chrono>
#include <cstdio>
#include "llama.h"
#include "log.h"
static double g_decode_ms = 0;
extern "C" int32_t __real_llama_decode(llama_context * ctx, llama_batch batch);
extern "C" int32_t __wrap_llama_decode(llama_context * ctx, llama_batch batch) {
    const auto t0 = std::chrono::steady_clock::now();
    const int32_t rc = __real_llama_decode(ctx, batch);
    g_decode_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return rc;
}
int embedding_main(int argc, char ** argv);
int main(int argc, char ** argv) {
    const int rc = embedding_main(argc, argv);
    common_log_pause(common_log_main());
    std::fprintf(stderr, "llama_decode: %.2f ms\n", g_decode_ms);
    return rc;
}
CPP
flags=(-O2 -std=c++17 -I"$llama/src/include" -I"$llama/src/ggml/include" -I"$llama/src/common" -I"$llama/src/vendor")
g++ "${flags[@]}" -Dmain=embedding_main -c "$llama/src/examples/embedding/embedding.cpp" -o "$tmp/embedding.o"
g++ "${flags[@]}" "$tmp/drain_log.cpp" "$tmp/embedding.o" -L"$bin" -lllama-common -lllama -lggml -lggml-base \
  -Wl,--wrap=llama_decode -Wl,-rpath,"$bin" -o "$out"
