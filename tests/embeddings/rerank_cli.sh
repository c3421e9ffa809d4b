#!/usr/bin/env bash
# `oxidize rerank` against llama.cpp's scores (tests/data/embeddings/bert-rerank.txt, made by
# make_reference.sh there): the case's synth cross-encoder, each query of its pairs file over that
# query's documents. Every document appears once with its own text; the lines go best first; each score
# is within 1e-4 of llama-embedding's; and a document whose reference score is higher than another's
# by more than 5e-4 comes before it. tests/cli/cli.sh runs it; prints the problems and exits 1.
# Usage: tests/embeddings/rerank_cli.sh [CLI]
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=${1:-build/native/bin/oxidize}
shared=${OXIDIZE_SHARED:-../shared}
ref=tests/data/embeddings/bert-rerank.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
synth=$(sed -n 's/^synth: //p' "$ref")
prompts=tests/data/embeddings/$(sed -n 's/^prompts: //p' "$ref")
vocab=$(sed -E 's/.*--vocab ([^ ]+).*/\1/' <<< "$synth")
# shellcheck disable=SC2086 # synth: several words
"$cli" synth ${synth/--vocab $vocab/--vocab $shared/$vocab} --type F32 -o "$tmp/model.gguf" > /dev/null
# One run per query, in the order the queries first appear.
cut -f1 "$prompts" | awk '!seen[$0]++' > "$tmp/queries"
q=0
while IFS= read -r query; do
  awk -F'\t' -v q="$query" '$1 == q {print $2}' "$prompts" > "$tmp/docs.$q"
  "$cli" rerank -m "$tmp/model.gguf" --query "$query" -f "$tmp/docs.$q" > "$tmp/out.$q" 2> "$tmp/err" ||
    { echo "rerank --query '$query' failed:" >&2; cat "$tmp/err" >&2; exit 1; }
  q=$((q + 1))
done < "$tmp/queries"
python3 - "$ref" "$prompts" "$tmp" <<'PY'
import sys
ref_path, prompts_path, tmp = sys.argv[1:]
max_abs, separated = 1e-4, 5e-4
reference = [float(l.split(":")[1]) for l in open(ref_path, encoding="utf-8") if l.startswith("vector ")]
pairs = [l.rstrip("\n").split("\t", 1) for l in open(prompts_path, encoding="utf-8")]
queries = list(dict.fromkeys(q for q, _ in pairs))
problems = []
for qi, query in enumerate(queries):
    rows = [(i, d) for i, (q, d) in enumerate(pairs) if q == query]
    docs = [d for _, d in rows]
    ref = [reference[i] for i, _ in rows]
    lines = [l.rstrip("\n").split("\t", 2) for l in open(f"{tmp}/out.{qi}", encoding="utf-8")]
    order = [int(l[0]) for l in lines]
    scores = {int(l[0]): float(l[1]) for l in lines}
    if sorted(order) != list(range(len(docs))):
        problems.append(f"'{query}': indices {order}, expected each of 0..{len(docs) - 1} once")
        continue
    problems += [f"'{query}': line for document {int(l[0])} has text '{l[2]}'" for l in lines if docs[int(l[0])] != l[2]]
    if [scores[i] for i in order] != sorted(scores.values(), reverse=True):
        problems.append(f"'{query}': lines not by descending score: {order}")
    for i in range(len(docs)):
        if abs(scores[i] - ref[i]) > max_abs:
            problems.append(f"'{query}': document {i} scores {scores[i]:.6f}, llama.cpp {ref[i]:.7f}")
    place = {d: k for k, d in enumerate(order)}
    for i in range(len(docs)):
        for j in range(len(docs)):
            if ref[i] - ref[j] > separated and place[i] > place[j]:
                problems.append(f"'{query}': document {i} (llama.cpp {ref[i]:.7f}) listed after document {j} ({ref[j]:.7f})")
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
