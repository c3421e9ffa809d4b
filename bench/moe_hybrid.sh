#!/usr/bin/env bash
# oxidize against llama.cpp's llama-bench on the mixture-of-experts and hybrid synth shapes (issue #20
# item 5): `oxidize synth --shape moe-16x64|lfm2-1.2B --type Q4_K_M` (qwen3moe, 16 layers of 64
# experts with 8 active; LFM2-1.2B's short-convolution / attention hybrid), then `oxidize bench` and
# llama-bench with the same -p 512 -n 128 -t 2 -o jsonl on the same files, one markdown table. A
# wrapper over bench/peers/run.mjs (native engines only): the table goes to
# bench/peers/results/moe_hybrid/latest.md, the samples to latest.json beside it.
#
#   bench/moe_hybrid.sh [run.mjs options, e.g. --reps 5 --llama-bench PATH]
#
# Environment: MODELS (moe-16x64,lfm2-1.2B), TYPE (Q4_K_M), N_PROMPT (512), N_GEN (128), THREADS (2),
# REPS (3), MODEL_DIR (where the models are written: bench/peers/models; the MoE file is ~1.2 GB),
# OXIDIZE_BIN, LLAMA_BENCH (see run.mjs --help).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec node "$root/bench/peers/run.mjs" --engines oxidize,llama.cpp --models "${MODELS:-moe-16x64,lfm2-1.2B}" \
  --types "${TYPE:-Q4_K_M}" --pp "${N_PROMPT:-512}" --tg "${N_GEN:-128}" --threads "${THREADS:-2}" \
  --reps "${REPS:-3}" --model-dir "${MODEL_DIR:-$root/bench/peers/models}" \
  --out "$root/bench/peers/results/moe_hybrid" "$@"
