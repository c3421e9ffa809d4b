#!/usr/bin/env bash
# llama.cpp's embeddings of the tiny parity models of the embedding architectures, as
# tests/embeddings/embedding_parity_test.cpp reads them. For each case below: `oxidize synth
# --arch A --seed S` (F32 weights), then llama-embedding (built here from llama.cpp's
# examples/embedding/embedding.cpp against its libllama) on the prompts of prompts.txt, all in one
# batch, with the case's --pooling and --embd-normalize, --embd-output-format json (rank cases:
# the "query<TAB>document" pairs of rerank_pairs.txt, or of the case's own file). NAME.txt keeps the
# synth line, the pooling, the normalisation, the prompts file and one "vector I:" line per output.
# Usage: tests/data/embeddings/make_reference.sh [NAME ...]
#   needs llama.cpp built (bench/build_llama_cpp.sh build/llama.cpp; LLAMA=/path/to/build/llama.cpp
#   to use another) and build/native/bin/oxidize
set -euo pipefail
cd "$(dirname "$0")/../../.."
llama=${LLAMA:-build/llama.cpp}
here=tests/data/embeddings
shared=${OXIDIZE_SHARED:-../shared}
oxidize=build/native/bin/oxidize
# synth's default scale (real models' weights are of this size). At 0.08 (the generative parity
# models') bert's activations are large enough that llama.cpp's own two attention paths (-fa on / off)
# differ by up to 1.8e-4, above the bound the test holds both engines to; at 0.02 they differ by 1e-5.
weight_std=0.02
# name: synth flags | pooling | normalisation [| prompts file]
declare -A cases=(
  [bert-cls]="--arch bert --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|cls|2"
  [bert-mean]="--arch bert --seed 2 --vocab vocab/ggml-vocab-bert-bge.gguf|mean|-1"
  [bert-none]="--arch bert --seed 3 --vocab vocab/ggml-vocab-bert-bge.gguf|none|2"
  [bert-rank]="--arch bert --seed 4 --vocab vocab/ggml-vocab-bert-bge.gguf|rank|-1"
  # A cross-encoder's scores for 14 pairs (2 queries), most of them well apart, so `oxidize rerank`'s
  # order can be checked: of seeds 5-24, the one whose scores spread widest (1e-2) at this weight scale.
  [bert-rerank]="--arch bert --seed 16 --vocab vocab/ggml-vocab-bert-bge.gguf|rank|-1|rerank_docs.txt"
  [qwen3-last]="--arch qwen3 --seed 1 --vocab models/stories260K.gguf|last|2"
  [llama-mean]="--arch llama --seed 1 --vocab models/stories260K.gguf|mean|2"
  [nomic-bert-mean]="--arch nomic-bert --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|mean|2"
  [qwen3-rank]="--arch qwen3 --seed 2 --vocab models/stories260K.gguf|rank|-1"
  [jina-bert-v2-mean]="--arch jina-bert-v2 --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|mean|2"
  [jina-bert-v2-rank]="--arch jina-bert-v2 --seed 2 --vocab vocab/ggml-vocab-bert-bge.gguf|rank|-1"
  [nomic-bert-moe-mean]="--arch nomic-bert-moe --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|mean|2"
  [jina-bert-v3-mean]="--arch jina-bert-v3 --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|mean|2"
  [neo-bert-cls]="--arch neo-bert --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|cls|2"
  [eurobert-mean]="--arch eurobert --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|mean|2"
  [gemma-embedding-mean]="--arch gemma-embedding --seed 1 --vocab models/stories260K.gguf|mean|2"
  [modern-bert-mean]="--arch modern-bert --seed 1 --vocab vocab/ggml-vocab-bert-bge.gguf|mean|2"
  [modern-bert-rank]="--arch modern-bert --seed 2 --vocab vocab/ggml-vocab-bert-bge.gguf|rank|-1"
  # T5's Unigram tokenizer ("t5"): XLM-R's SentencePiece vocabulary, cut to its 4096 likeliest pieces
  [t5encoder-mean]="--arch t5encoder --seed 1 --vocab vocab/ggml-vocab-nomic-bert-moe.gguf --vocab-size 4096|mean|2"
)
names=("$@")
[ ${#names[@]} -eq 0 ] && names=("${!cases[@]}")
version=$(git -C $llama/src rev-parse --short HEAD 2>/dev/null || echo unknown)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench/build_llama_embedding.sh "$llama" "$tmp/llama-embedding"

for name in "${names[@]}"; do
  [ -n "${cases[$name]+set}" ] || { echo "$name: no such case" >&2; exit 1; }
  IFS='|' read -r flags pooling norm prompts <<< "${cases[$name]}"
  vocab=$(sed -E 's/.*--vocab ([^ ]+).*/\1/' <<< "$flags")
  # shellcheck disable=SC2086 # flags: several words
  $oxidize synth ${flags/--vocab $vocab/--vocab $shared/$vocab} --weight-std $weight_std --type F32 \
    -o "$tmp/model.gguf" > /dev/null
  if [ -z "$prompts" ]; then
    prompts=prompts.txt
    [ "$pooling" = rank ] && prompts=rerank_pairs.txt
  fi
  # llama.cpp's logger writes stdout from a thread that may not finish the JSON before the process
  # exits: run again until the output ends with the closing brace.
  for try in 1 2 3 4 5 6 7 8; do
    "$tmp/llama-embedding" -m "$tmp/model.gguf" -f "$here/$prompts" --pooling "$pooling" --embd-normalize "$norm" \
      --embd-output-format json -c 512 -t 2 > "$tmp/out.json" 2> "$tmp/err.txt" ||
      { cat "$tmp/err.txt" >&2; exit 1; }
    [ "$(tr -d ' \n' < "$tmp/out.json" | tail -c 2)" = "]}" ] && break
    [ "$try" = 8 ] && { echo "$name: llama-embedding's JSON is cut short every time" >&2; exit 1; }
  done
  {
    echo "# tests/data/embeddings/make_reference.sh, llama.cpp $version"
    echo "synth: $flags --weight-std $weight_std"
    echo "pooling: $pooling"
    echo "normalize: $norm"
    echo "prompts: $prompts"
    # Rank pooling: only the first value is the score (llama-embedding prints n_embd values from a
    # buffer of n_cls_out per sequence; the rest is whatever follows it).
    /usr/bin/python3 - "$tmp/out.json" "$pooling" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
lists = re.findall(r'"embedding": \[([^\]]*)\]', text)
for i, body in enumerate(lists):
    values = [float(v) for v in body.split(",")]
    if sys.argv[2] == "rank":
        values = values[:1]
    print("vector %d: %s" % (i, " ".join("%.7f" % v for v in values)))
PY
  } > "$here/$name.txt"
  echo "$name: $(grep -c '^vector' "$here/$name.txt") vectors"
done
