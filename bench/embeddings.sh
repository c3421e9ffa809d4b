#!/usr/bin/env bash
# Embeddings per second, oxidize beside llama-embedding in the same run (issue #24): bge-small- and
# bge-base-shaped berts (`oxidize synth --arch bert --shape bge-small|bge-base`, 33M / 110M, F32 or
# --type, bge's WordPiece vocabulary), batches of 1 and 32 sentences of ~30 tokens, cls pooling. Both
# engines are timed without model loading: oxidize's "embed: X ms" line (tokenizing + embedding)
# against the time llama-embedding spends in llama_decode (bench/build_llama_embedding.sh); the
# median of R runs, the two engines' runs alternating.
# Usage: bench/embeddings.sh [-t THREADS] [-r RUNS] [--type TYPE] [--shapes bge-small,bge-base]
#   needs build/native/bin/oxidize and llama.cpp (bench/build_llama_cpp.sh build/llama.cpp; LLAMA=DIR
#   for another build); OXIDIZE_BIN=PATH times another oxidize binary (an older build, for a
#   before/after pair of runs under the same load)
set -euo pipefail
cd "$(dirname "$0")/.."
threads=$(nproc); runs=5; type=F32; shapes=bge-small,bge-base
while [ $# -gt 0 ]; do
  case $1 in
    -t) threads=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --type) type=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 1 ;;
  esac
done
llama=${LLAMA:-build/llama.cpp}
shared=${OXIDIZE_SHARED:-../shared}
oxidize=${OXIDIZE_BIN:-build/native/bin/oxidize}
[ -x "$oxidize" ] || { echo "no $oxidize: cmake --build build/native --target oxidize" >&2; exit 1; }
[ -d "$llama/build/bin" ] || { echo "no llama.cpp build at $llama: bench/build_llama_cpp.sh $llama" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench/build_llama_embedding.sh "$llama" "$tmp/llama-embedding"
# 32 sentences of ~30 WordPiece tokens each (bench/peers/embeddings.mjs embeds the same ones).
for i in $(seq 1 32); do
  echo "Sentence $i: retrieval models map each passage of a document collection to a vector, so that a query finds the passages nearest to it."
done > "$tmp/32.txt"
head -n 1 "$tmp/32.txt" > "$tmp/1.txt"
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
per_s() { awk -v n="$1" -v ms="$2" 'BEGIN {printf "%.1f", n * 1000 / ms}'; }
# One timed run of ENGINE on MODEL and FILE: prints its milliseconds; a failed run ends the script
# with the engine's last lines.
time_run() {
  local rc=0
  if [ "$1" = oxidize ]; then
    $oxidize embed -m "$2" -f "$3" --pooling cls -t "$threads" -c 2048 \
      --embd-output-format array > /dev/null 2> "$tmp/err" || rc=$?
    sed -nE 's/^embed: ([0-9.]+) ms.*/\1/p' "$tmp/err"
  else
    "$tmp/llama-embedding" -m "$2" -f "$3" --pooling cls -t "$threads" -c 2048 \
      --embd-output-format array > /dev/null 2> "$tmp/err" || rc=$?
    sed -nE 's/^llama_decode: ([0-9.]+) ms.*/\1/p' "$tmp/err"
  fi
  if [ $rc -ne 0 ]; then
    echo "$1 on $(basename "$2") exited with $rc:" >&2
    tail -n 5 "$tmp/err" >&2
    exit 1
  fi
}
echo "$(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $threads threads, $type weights"
echo
echo "| model | batch | oxidize ms | llama.cpp ms | oxidize emb/s | llama.cpp emb/s | oxidize / llama.cpp |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for shape in ${shapes//,/ }; do
  model=$tmp/$shape.gguf
  $oxidize synth --arch bert --shape "$shape" --type "$type" --weight-std 0.02 \
    --vocab "$shared/vocab/ggml-vocab-bert-bge.gguf" -o "$model" > /dev/null
  for n in 1 32; do
    : > "$tmp/oxidize.times"
    : > "$tmp/llama.times"
    for r in $(seq 1 "$runs"); do
      time_run oxidize "$model" "$tmp/$n.txt" >> "$tmp/oxidize.times"
      time_run llama "$model" "$tmp/$n.txt" >> "$tmp/llama.times"
    done
    for f in oxidize llama; do
      [ "$(wc -l < "$tmp/$f.times")" -eq "$runs" ] || { echo "$shape batch $n: a $f run printed no time" >&2; exit 1; }
    done
    ox=$(median < "$tmp/oxidize.times")
    ll=$(median < "$tmp/llama.times")
    ratio=$(awk -v a="$ox" -v b="$ll" 'BEGIN {printf "%.2f", b / a}')
    echo "| $shape $type | $n | $ox | $ll | $(per_s $n "$ox") | $(per_s $n "$ll") | ${ratio}x |"
  done
  rm -f "$model"
done
