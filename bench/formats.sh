#!/usr/bin/env bash
# Decode and prefill of each weight format against llama-bench on the same file, same run (issue
# #27 item 5): a 1B-shaped synth model per preset (`oxidize synth --shape 1B --layers L --type T`;
# the formats that need an importance matrix get a uniform one), then bench/peers/run.mjs with the
# native engines, -p 512 -n 64, -t 2. The table lands in bench/peers/results/formats/latest.md.
#
#   bench/formats.sh [PRESET...]      (default: the formats llama.cpp added after the K-quants)
#
# MXFP4_MOE on a dense model writes every tensor as Q8_0 (MXFP4 is for expert tensors only), so the
# pseudo-preset MXFP4 makes a file whose layer matrices are all MXFP4 (`oxidize quantize
# --tensor-type`, llama-quantize's bytes) to time the format itself.
#
# Environment: LAYERS (4 of the shape's 16, to keep the i-quant quantizers' minutes down; the
# per-token work of each layer is the 1B model's), THREADS (2), REPS (3), N_PROMPT (512), N_GEN (64),
# MODELS (folder for the synth files, default bench/peers/models/formats).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(Q4_K_M MXFP4_MOE MXFP4 TQ1_0 TQ2_0 IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_S)
dir=${MODELS:-bench/peers/models/formats}
mkdir -p "$dir"
layers=${LAYERS:-4}
files=()
for p in "${presets[@]}"; do
  f="$dir/1B-L$layers-$p.gguf"
  if [ ! -f "$f" ] && [ "$p" = MXFP4 ]; then
    build/native/bin/oxidize synth --shape 1B --layers "$layers" --type F16 -o "$f.f16" -t "${THREADS:-2}" > /dev/null
    build/native/bin/oxidize quantize --tensor-type "attn_(q|k|v|output)=mxfp4" --tensor-type "ffn_(gate|up|down)=mxfp4" \
      "$f.f16" "$f" MXFP4_MOE "${THREADS:-2}" 2> /dev/null
    rm -f "$f.f16"
  fi
  [ -f "$f" ] || build/native/bin/oxidize synth --shape 1B --layers "$layers" --type "$p" -o "$f" -t "${THREADS:-2}" > /dev/null
  files+=("$f")
done
models=$(IFS=,; echo "${files[*]}")
exec node bench/peers/run.mjs --engines oxidize,llama.cpp --models "$models" --threads "${THREADS:-2}" \
  --pp "${N_PROMPT:-512}" --tg "${N_GEN:-64}" --reps "${REPS:-3}" --out bench/peers/results/formats
