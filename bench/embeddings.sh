#!/usr/bin/env bash
# Embeddings per second, oxidize beside llama-embedding in the same run (issue #24): a
# bge-small-shaped bert (`oxidize synth --arch bert --shape bge-small`, 33M, F32 or --type, bge's
# WordPiece vocabulary), batches of 1 and 32 sentences of ~30 tokens, cls pooling. Both engines
# are timed without model loading: oxidize's "embed: X ms" line (tokenizing + embedding) against the
# time llama-embedding spends in llama_decode (bench/build_llama_embedding.sh); the median of R runs.
# Usage: bench/embeddings.sh [-t THREADS] [-r RUNS] [--type TYPE]
#   needs build/native/bin/oxidize and llama.cpp (bench/build_llama_cpp.sh build/llama.cpp; LLAMA=DIR
#   for another build)
set -euo pipefail
cd "$(dirname "$0")/.."
threads=$(nproc); runs=5; type=F32
while [ $# -gt 0 ]; do
  case $1 in
    -t) threads=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --type) type=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
done
llama=${LLAMA:-build/llama.cpp}
shared=${OXIDIZE_SHARED:-../shared}
oxidize=build/native/bin/oxidize
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench/build_llama_embedding.sh "$llama" "$tmp/llama-embedding"
$oxidize synth --arch bert --shape bge-small --type "$type" --weight-std 0.02 \
  --vocab "$shared/vocab/ggml-vocab-bert-bge.gguf" -o "$tmp/bge-small.gguf" > /dev/null
# 32 sentences of ~30 WordPiece tokens each.
for i in $(seq 1 32); do
  echo "Sentence $i: retrieval models map each passage of a document collection to a vector, so that a query finds the passages nearest to it."
done > "$tmp/32.txt"
head -n 1 "$tmp/32.txt" > "$tmp/1.txt"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "| engine | batch | ms per batch (median of $runs) | embeddings/s |"
echo "|---|---:|---:|---:|"
for n in 1 32; do
  for engine in oxidize llama.cpp; do
    for r in $(seq 1 "$runs"); do
      if [ $engine = oxidize ]; then
        $oxidize embed -m "$tmp/bge-small.gguf" -f "$tmp/$n.txt" --pooling cls -t "$threads" -c 2048 \
          --embd-output-format array 2>&1 > /dev/null | sed -nE 's/^embed: ([0-9.]+) ms.*/\1/p'
      else
        "$tmp/llama-embedding" -m "$tmp/bge-small.gguf" -f "$tmp/$n.txt" --pooling cls -t "$threads" -c 2048 \
          --embd-output-format array 2>&1 > /dev/null | sed -nE 's/^llama_decode: ([0-9.]+) ms.*/\1/p'
      fi
    done > "$tmp/times"
    ms=$(median < "$tmp/times")
    echo "| $engine | $n | $ms | $(awk -v n=$n -v ms="$ms" 'BEGIN {printf "%.1f", n * 1000 / ms}') |"
  done
done
