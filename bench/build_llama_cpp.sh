#!/usr/bin/env bash
# Builds the llama.cpp peer (llama-bench, llama-cli, ...) from the source that node-llama-cpp ships
# (llama/gitRelease.bundle, v0.5.0 = de3ff81), with GGML_NATIVE, as the benchmarks compare against.
# Usage: bench/build_llama_cpp.sh [DEST=build/llama.cpp] [TARGET=llama-bench]...
# Needs `bash scripts/setup` first (bench/peers/node_modules holds the bundle).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build/llama.cpp}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(llama-bench)
bundle=bench/peers/node_modules/node-llama-cpp/llama/gitRelease.bundle
[ -f "$bundle" ] || { echo "no $bundle: run scripts/setup" >&2; exit 1; }
[ -d "$dest/src/.git" ] || git clone -q "$bundle" "$dest/src"
server=OFF  # llama-server (bench/server.sh) only when asked for: it adds the web UI and minutes of build
for t in "${targets[@]}"; do [ "$t" = llama-server ] && server=ON; done
cmake -S "$dest/src" -B "$dest/build" -DGGML_NATIVE=ON -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=$server > /dev/null
cmake --build "$dest/build" -j "$(nproc)" --target "${targets[@]}"
echo "built: $dest/build/bin/${targets[*]}"
