#!/usr/bin/env bash
# oxidize against llama.cpp as the context fills (issue #21 item 7): `oxidize bench` and llama-bench
# with the same -p 512 -n 64 -d 0,2048,4096 -t 2 -o jsonl on the same model, one markdown table with
# both t/s and the ratio per row ("pp512 @ d4096", ...). A wrapper over bench/peers/run.mjs (native
# engines only), which writes the table to bench/peers/results/depth/latest.md and the samples to
# latest.json beside it.
#
#   bench/depth.sh [MODEL.gguf | SHAPE] [run.mjs options, e.g. --cache-type q8_0 --llama-bench PATH]
#
# MODEL defaults to the 0.5B Q4_K_M synth model (bench/peers/models/, made with `oxidize synth` on first
# use). Environment: DEPTHS (0,2048,4096), N_PROMPT (512), N_GEN (64), THREADS (2), REPS (3),
# TYPE (the synth type, Q4_K_M), OXIDIZE_BIN, LLAMA_BENCH (see run.mjs --help). A smoke run:
#   DEPTHS=0,64 N_PROMPT=32 N_GEN=8 REPS=1 bench/depth.sh ../shared/models/stories260K.gguf
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=0.5B
if [[ $# -gt 0 && $1 != -* ]]; then
  model=$1
  shift
fi
exec node "$root/bench/peers/run.mjs" --engines oxidize,llama.cpp --models "$model" --types "${TYPE:-Q4_K_M}" \
  --depths "${DEPTHS:-0,2048,4096}" --pp "${N_PROMPT:-512}" --tg "${N_GEN:-64}" --threads "${THREADS:-2}" \
  --reps "${REPS:-3}" --out "$root/bench/peers/results/depth" "$@"
