#!/usr/bin/env bash
# Native/wasm parity of the CLI on the real stories260K model, against the shared float32
# reference (../shared/models/stories260K.greedy.txt and the README's first-step top-5 logits).
# Usage: tests/cli/parity.sh [NATIVE_CLI] [WASM_CLI]
set -uo pipefail
cd "$(dirname "$0")/../.."
native=${1:-build/native/bin/oxidize}
wasm=${2:-build/wasm/bin/oxidize.mjs}
source tests/cli/check_lib.sh
cli() {  # cli native|wasm ARGS...
  local which=$1; shift
  if [ "$which" = native ]; then "$native" "$@"; else node "$wasm" "$@"; fi
}

grep -v '^#' "$shared/models/stories260K.greedy.txt" | head -n 1 | tr ' ' '\n' | head -n 200 | tr '\n' ' ' | sed 's/ $//' > "$tmp/ref200"
# Reference top-5 at the first step (shared/README.md): id logit
printf '403 17.0235\n385 15.4062\n410 13.1083\n317 12.7692\n407 12.4181\n' > "$tmp/ref_top5"

for which in native wasm; do
  cli $which run -m "$model" -n 200 --temp 0 --ids 2>/dev/null | tr -d '\n' > "$tmp/$which.ids"
  check "$which: greedy from BOS reproduces 200 reference tokens" cmp -s "$tmp/ref200" "$tmp/$which.ids"
  cli $which logits -m "$model" --top 5 > "$tmp/$which.top5" 2>/dev/null
  check "$which: first-step top-5 logits within 1e-3 of the reference" \
    awk 'NR==FNR { id[FNR]=$1; v[FNR]=$2; next }
         { if ($1 != id[FNR] || ($2 - v[FNR] > 1e-3) || (v[FNR] - $2 > 1e-3)) bad=1; n++ }
         END { exit (bad || n != 5) }' "$tmp/ref_top5" "$tmp/$which.top5"
  cli $which run -m "$model" -p "Once upon a time" -n 64 --temp 0 > "$tmp/$which.text" 2>/dev/null
  cli $which run -m "$model" -p "Once upon a time" -n 64 --temp 0.8 --seed 42 -t 2 > "$tmp/$which.sampled" 2>/dev/null
done
check "run -p 'Once upon a time' -n 64 --temp 0: same text natively and in wasm" cmp -s "$tmp/native.text" "$tmp/wasm.text"
check "greedy text is not empty" test -s "$tmp/native.text"
check "seeded sampling (--temp 0.8 --seed 42): same text natively and in wasm" cmp -s "$tmp/native.sampled" "$tmp/wasm.sampled"

# Errors: one line on stderr, exit 1, message names the problem.
head -c 1000 "$model" > "$tmp/truncated.gguf"
for which in native wasm; do
  cli $which run -m "$tmp/truncated.gguf" -n 1 > /dev/null 2> "$tmp/err"; rc=$?
  check "$which: truncated GGUF -> exit 1 with an offset in one error line" \
    bash -c "[ $rc -eq 1 ] && [ \$(wc -l < '$tmp/err') -eq 1 ] && grep -q 'offset' '$tmp/err'"
  cli $which run -m "$model" -p "$(head -c 4000 /dev/zero | tr '\0' 'a')" -c 64 -n 1 --no-context-shift \
    > /dev/null 2> "$tmp/err"; rc=$?
  check "$which: prompt longer than the context with --no-context-shift -> exit 1 naming the context" \
    bash -c "[ $rc -eq 1 ] && grep -q 'context holds 64' '$tmp/err'"
  cli $which run -m "$model" -p "$(head -c 4000 /dev/zero | tr '\0' 'a')" -c 64 -n 1 > /dev/null 2> "$tmp/err"; rc=$?
  check "$which: prompt longer than the context (context shift, the default) -> cut to fit, one token out" \
    bash -c "[ $rc -eq 0 ] && grep -q 'generation: 1 tokens' '$tmp/err' && grep -q 'left out' '$tmp/err'"
  cli $which run -m "$model" --bogus-flag > /dev/null 2> "$tmp/err"; rc=$?
  check "$which: unknown flag -> exit 1 naming it" bash -c "[ $rc -eq 1 ] && grep -q -- '--bogus-flag' '$tmp/err'"
done

check_summary
