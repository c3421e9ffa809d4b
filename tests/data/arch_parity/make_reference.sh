#!/usr/bin/env bash
# llama.cpp's references for every architecture oxidize runs (`oxidize archs --names`), or for the
# ones named. For each: `oxidize synth --arch A --seed S` (tiny-arch shape: 2 layers, n_embd 256,
# stories260K's 512-token vocabulary, every optional feature of A on) and greedy_ref (built here
# against llama.cpp's libllama, tests/data/format_parity/greedy_ref.cpp): prompt ids, top-5 logits
# of 16 positions and 16 greedy ids on the F32 file, then 8 greedy ids on the file llama-quantize
# makes of it in Q4_K_M. A seed whose top-1/top-2 logit gap is under 0.05 at any of the 16 F32
# positions, or under 0.1 at any of the 8 Q4_K_M ones, is rejected and the next one tried, so ties
# never decide a test (Q4_K_M's bound is wider: the two engines round activations to Q8_K from
# inputs that differ in the last bits, measured to move Q4_K logits by up to 0.055 in
# tests/data/format_parity).
# tests/arch/arch_parity_test.cpp regenerates each model from the seed recorded in A.txt.
# Variants: where llama.cpp runs one architecture differently by shape (baichuan: rope at 32
# layers, ALiBi at 40, neither otherwise; deepseek2: attn_q instead of q's low-rank pair at 26 or 27
# layers), or by its keys (synth --variant: deepseek2's older attn_kv_b layout; A@mtp: a multi-token-prediction
# block after the trunk, which llama.cpp loads and does not run), or by tensor names (A@fused_qkv: attn_qkv for
# attn_q/k/v; A@fused_gate_up_exps: ffn_gate_up_exps), a second reference named A@VARIANT.txt under the extra
# synth flags of variant_flags below; the test lists the same names (kVariants there).
# Usage: tests/data/arch_parity/make_reference.sh [ARCH | ARCH@VARIANT ...]
#   needs bench/build_llama_cpp.sh build/llama.cpp llama-quantize, and build/native/bin/oxidize
set -euo pipefail
cd "$(dirname "$0")/../../.."
llama=build/llama.cpp
bin=$llama/build/bin
here=tests/data/arch_parity
shared=${OXIDIZE_SHARED:-../shared}
oxidize=build/native/bin/oxidize
weight_std=0.08
prompt="Once upon a time"
max_seed=${OXIDIZE_MAX_SEED:-200}  # seeds tried per model (glm4@mtp: its first passing seed is past 200)
declare -A variant_flags=([baichuan@13b]="--layers 40" [deepseek2@lite]="--layers 27" [deepseek2@kv_b]="--variant kv_b" [gemma3n@22]="--layers 22"
                         [deepseek2@mtp]="--variant mtp" [exaone4@mtp]="--variant mtp" [glm4@mtp]="--variant mtp" [glm4moe@mtp]="--variant mtp"
                         [qwen35@mtp]="--variant mtp" [qwen35moe@mtp]="--variant mtp"
                         [llama@fused_qkv]="--variant fused_qkv" [qwen2@fused_qkv]="--variant fused_qkv"
                         [qwen3@fused_qkv]="--variant fused_qkv" [qwen35@fused_qkv]="--variant fused_qkv"
                         [gemma3n@fused_qkv]="--variant fused_qkv" [lfm2@fused_qkv]="--variant fused_qkv"
                         [qwen35moe@fused_gate_up_exps]="--variant fused_gate_up_exps"
                         [deepseek2@fused_gate_up_exps]="--variant fused_gate_up_exps")
archs=("$@")
if [ ${#archs[@]} -eq 0 ]; then
  # encoders have no lm head: tests/data/embeddings/make_reference.sh records theirs
  mapfile -t archs < <($oxidize archs --names --generative)
  archs+=("${!variant_flags[@]}")
fi
[ -x "$bin/llama-quantize" ] || { echo "no $bin/llama-quantize" >&2; exit 1; }
version=$(git -C $llama/src rev-parse --short HEAD 2>/dev/null || echo unknown)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/data/format_parity/build_greedy_ref.sh
source tests/data/format_parity/build_greedy_ref.sh
build_greedy_ref "$llama" "$tmp/greedy_ref"

# The smallest top-1/top-2 gap over the N "pos P top5 logits:" lines of a reference (-1 if fewer).
min_gap() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import re, sys
gaps = []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if line.startswith("pos ") and "top5 logits:" in line:
        vals = [float(v) for v in re.findall(r" (-?[0-9.]+(?:e-?[0-9]+)?)\]", line)]
        if len(vals) >= 2:
            gaps.append(vals[0] - vals[1])
print(min(gaps) if len(gaps) == int(sys.argv[2]) else -1)
PY
}
at_least() { /usr/bin/python3 -c "import sys; sys.exit(0 if float('$1') >= $2 else 1)"; }

for name in "${archs[@]}"; do
  arch=${name%@*}
  flags=""
  if [ "$name" != "$arch" ]; then
    [ -n "${variant_flags[$name]+set}" ] || { echo "$name: no such variant (variant_flags)" >&2; exit 1; }
    flags=" ${variant_flags[$name]}"
  fi
  found=""
  for seed in $(seq 1 "$max_seed"); do
    # shellcheck disable=SC2086 # flags: several words
    $oxidize synth --arch "$arch" --seed "$seed" --weight-std $weight_std --type F32$flags \
      --vocab "$shared/models/stories260K.gguf" -o "$tmp/$arch.gguf" > /dev/null
    if ! "$tmp/greedy_ref" "$tmp/$arch.gguf" "$prompt" 16 16 > "$tmp/ref.txt" 2> "$tmp/err.txt"; then
      echo "$arch: llama.cpp cannot run the model:" >&2; cat "$tmp/err.txt" >&2; break
    fi
    gap=$(min_gap "$tmp/ref.txt" 16)
    at_least "$gap" 0.05 || continue
    "$bin/llama-quantize" "$tmp/$arch.gguf" "$tmp/$arch-q4_k_m.gguf" Q4_K_M 2 > "$tmp/quantize.log" 2>&1 ||
      { cat "$tmp/quantize.log" >&2; exit 1; }
    "$tmp/greedy_ref" "$tmp/$arch-q4_k_m.gguf" "$prompt" 8 8 > "$tmp/q4.txt"
    q4_gap=$(min_gap "$tmp/q4.txt" 8)
    if at_least "$q4_gap" 0.1; then found=$seed; break; fi
  done
  if [ -z "$found" ]; then echo "$name: no seed in 1..$max_seed with every top-2 gap >= 0.05 (F32) and 0.1 (Q4_K_M)" >&2; continue; fi
  {
    echo "# tests/data/arch_parity/make_reference.sh, llama.cpp $version"
    echo "synth: --arch $arch --seed $found --weight-std $weight_std --vocab models/stories260K.gguf$flags"
    echo "min_gap: $gap (Q4_K_M: $q4_gap)"
    cat "$tmp/ref.txt"
    echo "q4_k_m_gen_ids:$(sed -n 's/^gen_ids://p' "$tmp/q4.txt")"
  } > "$here/$name.txt"
  echo "$name: seed $found, min gap $gap"
done
