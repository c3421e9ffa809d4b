#!/usr/bin/env bash
# Greedy text of llama.cpp's llama-completion with context shifts (stories260K, -c 256, 700 tokens:
# the context fills and shifts 3-4 times), for tests/cli/cli.sh to compare `oxidize run` with.
# Usage: tests/data/context_shift/make_reference.sh [LLAMA_COMPLETION=build/llama.cpp/build/bin/llama-completion]
# (bench/build_llama_cpp.sh build/llama.cpp llama-completion builds it from the source node-llama-cpp ships.)
set -euo pipefail
cd "$(dirname "$0")"
bin=${1:-../../../build/llama.cpp/build/bin/llama-completion}
model=${OXIDIZE_SHARED:-../../../../shared}/models/stories260K.gguf
for keep in 0 3; do
  "$bin" -m "$model" -p "Once upon a time" -n 700 -c 256 --temp 0 --context-shift --keep "$keep" -no-cnv -t 2 \
    2> /dev/null > "stories260K.keep$keep.txt"
  # The command, for the record (llama-completion echoes the prompt before the generated text).
  echo "llama-completion -m stories260K.gguf -p 'Once upon a time' -n 700 -c 256 --temp 0 --context-shift --keep $keep -no-cnv -t 2" \
    > "stories260K.keep$keep.cmd"
done
