#!/usr/bin/env bash
# Time to first token of turn 2 against turn 1 in a chat (issue #21 item 3): turn 1 is a ~2000-token
# message, turn 2 a short one; with prefix reuse turn 2 evaluates only its new tokens. Runs
# `oxidize chat` and prints both turns' prompt time (the time to the first token, before sampling)
# and their ratio. The browser figure comes from web/test/browser.test.mjs ("prefix reuse"), which
# writes the same two times to web/test/artifacts/browser-console.log.
#
#   bench/ttft.sh [MODEL.gguf] [oxidize chat options...]
# MODEL defaults to the 0.5B Q4_K_M synth model (made with `oxidize synth` into build/models/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${OXIDIZE_BIN:-$root/build/native/bin/oxidize}
model=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$model" ]; then
  model=$root/build/models/0.5B-Q4_K_M.gguf
  [ -f "$model" ] || { mkdir -p "$(dirname "$model")"; "$cli" synth --shape 0.5B --type Q4_K_M -o "$model" >/dev/null; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Turn 1: the story text of the perplexity test (twice), 7500 bytes: about 2000 tokens of a 32k vocabulary.
first=$(cat "$root/tests/data/perplexity/story.txt" "$root/tests/data/perplexity/story.txt" | head -c 7500 | tr "\n" " ")
printf '%s\nAnd what happened then?\n' "$first" > "$tmp/turns"
"$cli" chat -m "$model" -c 4096 -n 8 --temp 0 "$@" < "$tmp/turns" > /dev/null 2> "$tmp/err"
grep '^\[prompt\|^> \[prompt' "$tmp/err" | sed 's/^> //' > "$tmp/lines"
node -e "
const lines = require('fs').readFileSync('$tmp/lines', 'utf8').trim().split('\n');
const parse = (l) => { const m = l.match(/prompt: (\d+) new, (\d+) cached, ([\d.]+) ms/); return { n: +m[1], cached: +m[2], ms: +m[3] }; };
const [a, b] = lines.map(parse);
console.log('| turn | new tokens | cached tokens | time to first token ms |');
console.log('|---|---:|---:|---:|');
console.log('| 1 | ' + a.n + ' | ' + a.cached + ' | ' + a.ms.toFixed(1) + ' |');
console.log('| 2 | ' + b.n + ' | ' + b.cached + ' | ' + b.ms.toFixed(1) + ' |');
console.log('turn 2 / turn 1: ' + (100 * b.ms / a.ms).toFixed(2) + '%');
"
