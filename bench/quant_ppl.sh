#!/usr/bin/env bash
# Perplexity of every quantize preset on real text, oxidize next to llama.cpp: the stories260K model
# (shared data) is quantized by each tool with an importance matrix each tool computed itself on
# tests/data/perplexity/story.txt, and each file is scored by both engines (-c 128, f16 KV cache).
# stories260K's rows are 64 (and 172) long, so the 256-block formats fall back to 32-block ones
# there as llama.cpp's rules say: the "types" column shows what each file holds.
# Usage: bench/quant_ppl.sh [PRESET...]   (needs build/native/bin/oxidize and, from
#   bench/build_llama_cpp.sh build/llama.cpp llama-quantize llama-imatrix llama-perplexity, the peer)
set -euo pipefail
cd "$(dirname "$0")/.."
ox=build/native/bin/oxidize
bin=build/llama.cpp/build/bin
shared=${OXIDIZE_SHARED:-../shared}
model=$shared/models/stories260K.gguf
text=tests/data/perplexity/story.txt
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(F16 Q8_0 Q6_K Q5_K_M Q5_0 Q4_K_M Q4_0 IQ4_XS IQ4_NL Q3_K_M IQ3_M IQ3_XXS Q2_K
  IQ2_M IQ2_S IQ2_XS IQ2_XXS IQ1_M IQ1_S TQ2_0 TQ1_0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ppl() { grep -oE 'PPL = [0-9.]+' "$1" | tail -1 | awk '{print $3}'; }
# llama-perplexity prints through a logging thread that can lose the last lines when the process
# exits, the final estimate among them: run it again (up to 5 times) until that line is there.
llama_ppl() {  # llama_ppl MODEL OUT
  for _ in 1 2 3 4 5; do
    "$bin/llama-perplexity" -m "$1" -f "$text" -c 128 -b 128 -t 2 > "$2" 2>&1 || true
    grep -q 'Final estimate' "$2" && return 0
  done
}
"$bin/llama-imatrix" -m "$model" -f "$text" -c 128 -t 2 -o "$tmp/llama.imatrix" > "$tmp/log" 2>&1
"$ox" imatrix -m "$model" -f "$text" -c 128 -t 2 -o "$tmp/ours.imatrix" > "$tmp/log" 2>&1
llama_ppl "$model" "$tmp/p"
echo "F32 model: llama-perplexity $(ppl "$tmp/p"), oxidize $("$ox" perplexity -m "$model" -f "$text" -c 128 -t 2 2>&1 | grep -oE 'PPL = [0-9.]+' | awk '{print $3}')"
echo
echo "| preset | llama-quantize file: KiB, types | PPL llama.cpp | PPL oxidize | oxidize quantize file: KiB | PPL llama.cpp | PPL oxidize |"
echo "|---|---|---|---|---|---|---|"
for p in "${presets[@]}"; do
  "$bin/llama-quantize" --imatrix "$tmp/llama.imatrix" "$model" "$tmp/l.gguf" "$p" 2 > "$tmp/log" 2>&1 || { echo "| $p | llama-quantize failed |"; continue; }
  "$ox" quantize --imatrix "$tmp/ours.imatrix" "$model" "$tmp/o.gguf" "$p" 2 > "$tmp/log" 2>&1 || { echo "| $p | oxidize quantize failed: $(tail -1 "$tmp/log") |"; continue; }
  types=$("$ox" inspect "$tmp/l.gguf" 2>/dev/null | awk '/^  [A-Z0-9_]+ +[0-9]+ tensors/ {printf "%s%s", sep, $1; sep=" "}')
  row="| $p | $(( $(stat -c %s "$tmp/l.gguf") / 1024 )), $types"
  for f in l o; do
    [ $f = o ] && row="$row | $(( $(stat -c %s "$tmp/o.gguf") / 1024 ))"
    llama_ppl "$tmp/$f.gguf" "$tmp/p"
    "$ox" perplexity -m "$tmp/$f.gguf" -f "$text" -c 128 -b 128 -t 2 > "$tmp/q" 2>&1 || true
    row="$row | $(ppl "$tmp/p") | $(ppl "$tmp/q")"
  done
  echo "$row |"
done
