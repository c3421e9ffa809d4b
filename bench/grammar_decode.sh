#!/usr/bin/env bash
# Grammar overhead on decode (issue #22 item 1): decode t/s with and without a JSON grammar on a
# 150k-vocabulary model, for oxidize and llama.cpp in the same run, same file, same threads.
# The model is a random-weight 0.5B-shaped synth with the qwen2 vocabulary (151,646 tokens) of
# ../shared/vocab. The grammar is llama.cpp's grammars/json.gbnf with its root replaced by one that
# stays inside a string ("{"text": " then json.gbnf's string characters, no closing quote), so every
# timed token is masked in the state where the most tokens are allowed, and neither engine stops
# early (json.gbnf itself lets a random model close the object after two tokens: "{}").
#
#   bench/grammar_decode.sh            REPS (3), N_GEN (64), THREADS (2), TYPE (Q4_K_M),
#                                      LLAMA_BIN (../main/build/llama.cpp/build/bin or build/llama.cpp/build/bin),
#                                      LLAMA_ARGS (extra llama-completion flags, e.g. "--poll 0" on a loaded machine)
# Prints one line per run and the median t/s and overhead per engine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
shared=${OXIDIZE_SHARED:-$root/../shared}
reps=${REPS:-3} n=${N_GEN:-64} t=${THREADS:-2} type=${TYPE:-Q4_K_M}
llama_bin=${LLAMA_BIN:-}
for d in build/llama.cpp/build/bin ../main/build/llama.cpp/build/bin; do
  [ -z "$llama_bin" ] && [ -x "$d/llama-completion" ] && llama_bin=$d
done
[ -n "$llama_bin" ] || { echo "llama-completion not found: set LLAMA_BIN (bench/build_llama_cpp.sh builds it)" >&2; exit 1; }
json_gbnf=$(dirname "$llama_bin")/../../src/grammars/json.gbnf
[ -f "$json_gbnf" ] || json_gbnf=$(dirname "$llama_bin")/../../grammars/json.gbnf
models=bench/peers/models
mkdir -p "$models"
model=$models/grammar-0.5B-qwen2vocab-$type.gguf
[ -f "$model" ] || build/native/bin/oxidize synth --shape 0.5B --type "$type" --vocab "$shared/vocab/ggml-vocab-qwen2.gguf" \
  -o "$model" -t "$t" > /dev/null
grammar=$(mktemp --suffix .gbnf)
trap 'rm -f "$grammar"' EXIT
python3 - "$json_gbnf" "$grammar" <<'PY'
import sys
s = open(sys.argv[1]).read()
assert 'root   ::= object' in s
s = s.replace('root   ::= object', 'root   ::= "{" ws "\\"text\\":" ws "\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\bfnrt] | "u" [0-9a-fA-F]{4}) )*')
open(sys.argv[2], 'w').write(s)
PY

ox_tps() {  # "generation: 64 tokens in 2080.6 ms (30.8 t/s)"
  build/native/bin/oxidize run -m "$model" -p Hello -n "$n" -t "$t" --seed "$1" "${@:2}" 2>&1 >/dev/null |
    sed -n 's/.*generation: \([0-9]*\) tokens in .*(\([0-9.]*\) t\/s).*/\1 \2/p'
}
llama_tps() {  # "eval time = ... / 64 runs ( ... ms per token, 4.80 tokens per second)"
  # shellcheck disable=SC2086
  "$llama_bin/llama-completion" -m "$model" -p Hello -n "$n" -t "$t" --seed "$1" -no-cnv ${LLAMA_ARGS:-} "${@:2}" 2>&1 </dev/null |
    sed -n 's/.* eval time = .* \/ *\([0-9]*\) runs.*, *\([0-9.]*\) tokens per second.*/\1 \2/p'
}
declare -A runs
for r in $(seq 1 "$reps"); do
  for engine in oxidize llama.cpp; do
    for mode in plain json; do
      args=(); [ "$mode" = json ] && args=(--grammar-file "$grammar")
      if [ "$engine" = oxidize ]; then out=$(ox_tps "$r" "${args[@]}"); else out=$(llama_tps "$r" "${args[@]}"); fi
      echo "rep $r $engine $mode: $out (tokens, t/s)"
      [ "${out%% *}" = "$n" ] || { echo "  expected $n generated tokens" >&2; exit 1; }
      runs[$engine.$mode]+="${out##* } "
    done
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "model $model ($type, 151,646-token vocabulary), $n tokens, -t $t, median of $reps${LLAMA_ARGS:+, llama.cpp with $LLAMA_ARGS}"
for engine in oxidize llama.cpp; do
  p=$(echo "${runs[$engine.plain]}" | median) j=$(echo "${runs[$engine.json]}" | median)
  awk -v e="$engine" -v p="$p" -v j="$j" 'BEGIN {printf "%-10s no grammar %7.2f t/s   json grammar %7.2f t/s   overhead %+.1f%%\n", e, p, j, (p / j - 1) * 100}'
done
