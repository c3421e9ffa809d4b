#!/usr/bin/env bash
# Writes tests/data/quantize_flags/NAME.types: the tensor types llama.cpp's llama-quantize --dry-run
# chooses for each case of cases.txt on a synthetic tiny-256 model (8 layers, F16),
# whole_files.sha256: the SHA-256 of the model and of llama-quantize's whole output for each line of
# whole_files.txt, and split_files.sha256: the model's shards from llama-gguf-split
# --split-max-tensors 25 and llama-quantize --keep-split's shards for each line of split_files.txt.
# tests/cli/cli.sh runs `oxidize quantize` (and `oxidize gguf-split`) the same way and compares.
# Usage: tests/data/quantize_flags/make_reference.sh [LLAMA_QUANTIZE] [OXIDIZE]
#   (defaults: build/llama.cpp/build/bin/llama-quantize, from `bench/build_llama_cpp.sh`, with
#    llama-gguf-split beside it, and build/native/bin/oxidize, which only writes the model)
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${1:-build/llama.cpp/build/bin/llama-quantize}
cli=${2:-build/native/bin/oxidize}
here=tests/data/quantize_flags
[ -x "$bin" ] || { echo "no llama-quantize at $bin" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cli" synth --shape tiny-256 --type F16 --layers 8 -o "$tmp/model.gguf" > /dev/null 2>&1
grep -v '^#' "$here/cases.txt" | while read -r name preset flags; do
  # shellcheck disable=SC2086  # the flags are words; no pattern in cases.txt has spaces or globs that match
  set -f; "$bin" --dry-run $flags "$tmp/model.gguf" "$preset" > "$tmp/log" 2>&1; set +f
  "$here/types_of.sh" < "$tmp/log" > "$here/$name.types"
  n=$(wc -l < "$here/$name.types")
  [ "$n" -gt 0 ] || { echo "$name: no tensor lines in llama-quantize's output:" >&2; cat "$tmp/log" >&2; exit 1; }
  echo "$name: $n tensors"
done
{
  echo "$(sha256sum < "$tmp/model.gguf" | cut -d' ' -f1)  model"
  grep -v '^#' "$here/whole_files.txt" | while read -r preset flags; do
    set -f; "$bin" $flags "$tmp/model.gguf" "$tmp/out.gguf" "$preset" 2 > "$tmp/log" 2>&1; set +f
    echo "$(sha256sum < "$tmp/out.gguf" | cut -d' ' -f1)  $preset${flags:+ $flags}"
  done
} > "$here/whole_files.sha256"
echo "whole_files.sha256: $(($(wc -l < "$here/whole_files.sha256") - 1)) files"
split=$(dirname "$bin")/llama-gguf-split
[ -x "$split" ] || { echo "no llama-gguf-split at $split (bench/build_llama_cpp.sh ... llama-gguf-split)" >&2; exit 1; }
"$split" --split --split-max-tensors 25 "$tmp/model.gguf" "$tmp/model" > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
{
  for shard in "$tmp"/model-*-of-*.gguf; do
    echo "$(sha256sum < "$shard" | cut -d' ' -f1)  shard ${shard##*/model-}"
  done
  grep -v '^#' "$here/split_files.txt" | while read -r preset flags; do
    rm -f "$tmp"/out-*
    set -f; "$bin" --keep-split $flags "$tmp/model-00001-of-00003.gguf" "$tmp/out.gguf" "$preset" 2 > "$tmp/log" 2>&1; set +f
    for shard in "$tmp"/out-*-of-*.gguf; do
      echo "$(sha256sum < "$shard" | cut -d' ' -f1)  ${shard##*/out-} $preset${flags:+ $flags}"
    done
  done
} > "$here/split_files.sha256"
echo "split_files.sha256: $(wc -l < "$here/split_files.sha256") files"
