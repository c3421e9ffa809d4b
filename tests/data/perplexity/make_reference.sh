#!/usr/bin/env bash
# Writes the perplexity references (tests/data/perplexity/*.ref) from llama.cpp's own
# llama-perplexity: its running "[1]x,[2]y," line and "Final estimate" line on story.txt, with
# the defaults that matter (f16 KV cache, -b equal to -c, 2 threads; flash attention left to its
# default, on for the CPU). One more run keeps every intermediate in f32 (-ctk f32 -ctv f32
# -fa off), which oxidize's f32 cache reproduces to the printed digits, for a tighter test.
# tests/core/tools/perplexity_test.cpp and tests/cli/cli.sh compare oxidize against these files.
# Usage: tests/data/perplexity/make_reference.sh [LLAMA_PERPLEXITY]
#   (default build/llama.cpp/build/bin/llama-perplexity: `bench/build_llama_cpp.sh build/llama.cpp llama-perplexity`)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${1:-build/llama.cpp/build/bin/llama-perplexity}
shared=${OXIDIZE_SHARED:-../shared}
here=tests/data/perplexity
[ -x "$bin" ] || { echo "no llama-perplexity at $bin" >&2; exit 1; }
src=$(dirname "$bin")/../../src
version=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)

reference() {  # reference MODEL_NAME N_CTX SUFFIX [LLAMA-PERPLEXITY FLAGS...]
  local name=$1 n_ctx=$2 suffix=$3 out
  shift 3
  local args=(-m "$shared/models/$name.gguf" -f "$here/story.txt" -c "$n_ctx" -b "$n_ctx" -t 2 "$@")
  out=$(mktemp)
  # stdout and stderr together: the progress line goes to one and the final line to the other.
  "$bin" "${args[@]}" > "$out" 2>&1
  local progress final
  progress=$(grep -oE '^\[1\][0-9.]+,(\[[0-9]+\][0-9.]+,)*$' "$out" || true)
  final=$(grep -oE 'Final estimate: PPL = [0-9.]+ \+/- [0-9.]+$' "$out" || true)
  if [ -z "$progress" ] || [ -z "$final" ]; then
    echo "llama-perplexity printed no progress or final line for $name (see $out)" >&2
    exit 1
  fi
  {
    echo "# tests/data/perplexity/make_reference.sh: llama-perplexity (llama.cpp $version)"
    echo "# llama-perplexity ${args[*]}" | sed "s|$shared/|../shared/|"
    echo "$progress"
    echo "$final"
  } > "$here/$name.c$n_ctx$suffix.ref"
  rm -f "$out"
  echo "wrote $here/$name.c$n_ctx$suffix.ref: $final"
}

reference stories260K 128 "" -ctk f16 -ctv f16
reference llama-2-tiny-random 128 "" -ctk f16 -ctv f16
reference stories260K 128 .f32 -ctk f32 -ctv f32 -fa off
