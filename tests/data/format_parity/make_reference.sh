#!/usr/bin/env bash
# Parity references for the weight formats. A one-layer random llama whose rows are all multiples
# of 256 (`oxidize synth --shape tiny-256 --layers 1 --weight-std 0.08`, stories260K's vocabulary;
# 0.08 as the zoo's models, so logits spread enough to compare) is quantized by llama.cpp's
# llama-quantize with --pure (every layer matrix in the format; token_embd and output in Q8_0,
# since llama-imatrix measures neither and the 1-2 bit formats need its data) and an importance
# matrix from llama-imatrix on tests/data/perplexity/story.txt. greedy_ref.cpp (beside this file, built
# here against llama.cpp's libllama) writes llama.cpp's prompt ids, top-5 logits of 4 positions and
# 32 greedy ids for each file, in the zoo's reference format. The GGUFs are checked in:
# tests/core/model/format_parity_test.cpp runs oxidize on the very bytes llama.cpp wrote.
# Usage: tests/data/format_parity/make_reference.sh [TYPE...]   (llama-quantize names; default: all below)
#   needs bench/build_llama_cpp.sh build/llama.cpp llama-quantize llama-imatrix, and build/native/bin/oxidize
set -euo pipefail
cd "$(dirname "$0")/../../.."
llama=build/llama.cpp
bin=$llama/build/bin
here=tests/data/format_parity
shared=${OXIDIZE_SHARED:-../shared}
types=("$@")
[ ${#types[@]} -eq 0 ] && types=(Q4_0 Q4_K_S IQ4_NL IQ4_XS MXFP4_MOE TQ1_0 TQ2_0 IQ2_XXS IQ2_XS IQ2_M IQ3_XXS IQ3_S IQ1_S IQ1_M)
for t in llama-quantize llama-imatrix; do [ -x "$bin/$t" ] || { echo "no $bin/$t" >&2; exit 1; }; done
version=$(git -C $llama/src rev-parse --short HEAD 2>/dev/null || echo unknown)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/data/format_parity/build_greedy_ref.sh
source tests/data/format_parity/build_greedy_ref.sh
build_greedy_ref "$llama" "$tmp/greedy_ref"
build/native/bin/oxidize synth --shape tiny-256 --layers 1 --weight-std 0.08 --type F32 \
  --vocab "$shared/models/stories260K.gguf" -o "$tmp/f32.gguf" > /dev/null
"$bin/llama-imatrix" -m "$tmp/f32.gguf" -f tests/data/perplexity/story.txt -c 128 -t 2 -o "$tmp/imatrix.gguf" \
  > "$tmp/imatrix.log" 2>&1 || { cat "$tmp/imatrix.log" >&2; exit 1; }
for type in "${types[@]}"; do
  # The file is named after the format every matrix is in (the preset name where they agree).
  case $type in
    Q4_K_S) name=q4_k ;;
    MXFP4_MOE) name=mxfp4 ;;
    IQ2_M) name=iq2_s ;;  # llama-quantize's IQ2_S preset is mostly IQ2_XS; its IQ2_M is IQ2_S
    *) name=$(echo "$type" | tr 'A-Z' 'a-z') ;;
  esac
  "$bin/llama-quantize" --pure --token-embedding-type q8_0 --output-tensor-type q8_0 --imatrix "$tmp/imatrix.gguf" "$tmp/f32.gguf" "$here/$name.gguf" "$type" 2 \
    > "$tmp/quantize.log" 2>&1 || { cat "$tmp/quantize.log" >&2; exit 1; }
  {
    echo "# tests/data/format_parity/make_reference.sh, llama.cpp $version: llama-quantize --pure $type (token_embd, output Q8_0), greedy_ref"
    "$tmp/greedy_ref" "$here/$name.gguf" "Once upon a time" 32 4
  } > "$here/$name.txt"
  echo "$name: $(du -k "$here/$name.gguf" | cut -f1) KB; $(grep -c . "$here/$name.txt") lines"
done
