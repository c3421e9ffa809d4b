#!/usr/bin/env bash
# Writes the importance-matrix references (tests/data/imatrix/*) with llama.cpp's own llama-imatrix:
# stories260K over tests/data/perplexity/story.txt in chunks of 128 tokens (-b 128, 2 threads), with
# every intermediate in f32 (-ctk f32 -ctv f32 -fa off) as oxidize's f32 cache computes them, once in
# the GGUF format and once in the legacy .dat format, plus its printed perplexity line.
# Two zoo models add what stories260K lacks: mixtral-moe (3-D expert tensors: counts per expert) and
# phi3 (fused attn_qkv and gate|up: one entry each), 4 chunks of 64 tokens.
# tests/core/tools/imatrix_test.cpp compares `compute_imatrix` and the reader/writer against them.
# Usage: tests/data/imatrix/make_reference.sh [LLAMA_IMATRIX]
#   (default build/llama.cpp/build/bin/llama-imatrix: `bench/build_llama_cpp.sh build/llama.cpp llama-imatrix`)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${1:-build/llama.cpp/build/bin/llama-imatrix}
shared=${OXIDIZE_SHARED:-../shared}
here=tests/data/imatrix
[ -x "$bin" ] || { echo "no llama-imatrix at $bin" >&2; exit 1; }
src=$(dirname "$bin")/../../src
version=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
# The text is given by its path relative to the repository root: llama-imatrix records it in
# imatrix.datasets, and the test passes the same string.
args=(-m "$shared/models/stories260K.gguf" -f tests/data/perplexity/story.txt -c 128 -b 128 -t 2
      -ctk f32 -ctv f32 -fa off)
log=$(mktemp)
"$bin" "${args[@]}" -o "$here/stories260K.c128.f32.imatrix.gguf" > "$log" 2>&1
final=$(grep -oE 'Final estimate: PPL = [0-9.]+ \+/- [0-9.]+$' "$log" || true)
[ -n "$final" ] || { echo "llama-imatrix printed no final estimate (see $log)" >&2; exit 1; }
"$bin" "${args[@]}" -o "$here/stories260K.c128.f32.imatrix.dat" --output-format dat > "$log" 2>&1
{
  echo "# tests/data/imatrix/make_reference.sh: llama-imatrix (llama.cpp $version)"
  echo "# llama-imatrix ${args[*]}" | sed "s|$shared/|../shared/|"
  echo "$final"
} > "$here/stories260K.c128.f32.ref"
for zoo in mixtral-moe phi3; do
  "$bin" -m "$shared/zoo/models/$zoo.gguf" -f tests/data/perplexity/story.txt -c 64 -b 64 -t 2 --chunks 4 \
    -ctk f32 -ctv f32 -fa off -o "$here/$zoo.c64.f32.imatrix.gguf" > "$log" 2>&1
done
rm -f "$log"
echo "wrote $here/stories260K.c128.f32.imatrix.{gguf,dat}, .ref: $final; mixtral-moe and phi3 .c64.f32.imatrix.gguf"
