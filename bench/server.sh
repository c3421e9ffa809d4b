#!/usr/bin/env bash
# `oxidize serve` against llama-server (built from the bundled llama.cpp source:
# bench/build_llama_cpp.sh build/llama.cpp llama-server) at 1, 2, 4 and 8 concurrent clients, both
# servers started with the same model, -np, -c and -t (issue #23). Both run for the whole benchmark
# and take turns: each repetition sends every cell's load to each engine in turn, so drift in the
# machine's load (other processes on the cores) falls on both alike. Each cell: STREAMS concurrent
# streamed /v1/completions requests of N_GEN greedy tokens (ignore_eos, short prompts) through
# bench/server_load.mjs. Throughput: generated tokens of all streams / wall seconds, the median of
# REPS (min-max beside it). Latency: time to first token (request sent -> first chunk with text),
# p50 and p95 over every request of the REPS runs.
#
#   bench/server.sh [MODEL.gguf]
#
# MODEL defaults to /tmp/0.5B-q4km.gguf, made with `oxidize synth --shape 0.5B --type Q4_K_M` if
# missing. Environment:
#   OXIDIZE        the oxidize binary (default build/native/bin/oxidize)
#   LLAMA_SERVER   llama-server (default build/llama.cpp/build/bin/llama-server); LLAMA=0 skips it
#   STREAMS        concurrent clients per cell ("1 2 4 8"); -np is the largest
#   N_GEN, REPS    tokens per stream (64) and repetitions per cell (5)
#   THREADS        -t for both servers (2); CTX_SLOT: positions per slot (256)
#   LLAMA_ARGS     more llama-server flags (e.g. "--poll 0": its threads sleep instead of spinning
#                  while they wait, which matters on a loaded machine); OXIDIZE_ARGS the same for oxidize
# The machine's load (uptime) is printed before and after: other work on the cores skews both.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
oxidize=${OXIDIZE:-$root/build/native/bin/oxidize}
llama_server=${LLAMA_SERVER:-$root/build/llama.cpp/build/bin/llama-server}
read -r -a streams <<<"${STREAMS:-1 2 4 8}"
n_gen=${N_GEN:-64}
reps=${REPS:-5}
threads=${THREADS:-2}
ctx_slot=${CTX_SLOT:-256}
model=${1:-/tmp/0.5B-q4km.gguf}
np=0
for s in "${streams[@]}"; do ((s > np)) && np=$s; done
ctx=$((np * ctx_slot))

[[ -x $oxidize ]] || { echo "server.sh: no $oxidize (build the oxidize target)" >&2; exit 2; }
if [[ ! -f $model ]]; then
  echo "making $model" >&2
  "$oxidize" synth --shape 0.5B --type Q4_K_M -o "$model" >&2
fi
engines=(oxidize)
if [[ ${LLAMA:-1} != 0 ]]; then
  if [[ -x $llama_server ]]; then engines+=(llama-server); else
    echo "server.sh: no $llama_server (bench/build_llama_cpp.sh build/llama.cpp llama-server); llama.cpp skipped" >&2
  fi
fi

free_port() { node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

declare -A pid url
stop() {
  for e in "${!pid[@]}"; do kill -TERM "${pid[$e]}" 2>/dev/null || true; wait "${pid[$e]}" 2>/dev/null || true; done
}
trap stop EXIT

start() {  # start ENGINE: starts the server in the background, sets url[ENGINE] once /health is 200
  local port
  port=$(free_port)
  url[$1]=http://127.0.0.1:$port
  case $1 in
    # shellcheck disable=SC2086  # the extra flags are words
    oxidize) "$oxidize" serve -m "$model" --port "$port" -np "$np" -c "$ctx" -t "$threads" ${OXIDIZE_ARGS:-} \
      >/dev/null 2>/tmp/server-bench-$1.log & ;;
    # shellcheck disable=SC2086
    llama-server) "$llama_server" -m "$model" --host 127.0.0.1 --port "$port" -np "$np" -c "$ctx" -t "$threads" \
      ${LLAMA_ARGS:-} >/dev/null 2>/tmp/server-bench-$1.log & ;;
  esac
  pid[$1]=$!
  for _ in $(seq 600); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' "${url[$1]}/health" || true) == 200 ]] && return 0
    kill -0 "${pid[$1]}" 2>/dev/null || { echo "server.sh: $1 exited; see /tmp/server-bench-$1.log" >&2; return 1; }
    sleep 0.2
  done
  echo "server.sh: $1 not ready after 120 s" >&2
  return 1
}

# p50 and p95 (nearest rank) of the ttft_ms arrays of several server_load.mjs lines.
percentiles() {
  node -e 'const v = require("fs").readFileSync(0, "utf8").trim().split("\n").flatMap((l) => JSON.parse(l).ttft_ms)
    .sort((a, b) => a - b); const q = (p) => v[Math.min(v.length - 1, Math.ceil(p * v.length) - 1)];
    console.log(`${Math.round(q(0.5))} ${Math.round(q(0.95))}`)'
}
# "median min max" of numbers, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR] }'; }

for e in "${engines[@]}"; do
  start "$e"
  node "$root/bench/server_load.mjs" "${url[$e]}" 1 8 >/dev/null  # warm-up
done
echo "load before: $(uptime)"
declare -A lines tps_all
for _ in $(seq "$reps"); do
  for s in "${streams[@]}"; do
    for e in "${engines[@]}"; do
      line=$(node "$root/bench/server_load.mjs" "${url[$e]}" "$s" "$n_gen")
      lines[$e,$s]+=$line$'\n'
      tps_all[$e,$s]+="$(sed 's/.*"tps":\([0-9.]*\).*/\1/' <<<"$line")"$'\n'
    done
  done
done
echo "load after:  $(uptime)"

declare -A tps spread p50 p95
for e in "${engines[@]}"; do
  for s in "${streams[@]}"; do
    read -r tps[$e,$s] lo hi < <(printf '%s' "${tps_all[$e,$s]}" | median)
    spread[$e,$s]="$lo-$hi"
    read -r p50[$e,$s] p95[$e,$s] < <(printf '%s' "${lines[$e,$s]}" | percentiles)
  done
done

echo "model $(basename "$model"), -np $np, -c $ctx, -t $threads, $n_gen tokens per stream, t/s median (min-max) of $reps" \
  "taking turns, TTFT over all $reps runs"
echo "extra flags: oxidize '${OXIDIZE_ARGS:-}', llama-server '${LLAMA_ARGS:-}'"
echo
header="| clients |"; rule="| ---: |"
for e in "${engines[@]}"; do header+=" $e t/s |"; rule+=" ---: |"; done
[[ ${#engines[@]} -gt 1 ]] && { header+=" t/s ratio |"; rule+=" ---: |"; }
for e in "${engines[@]}"; do header+=" $e TTFT p50 / p95 ms |"; rule+=" ---: |"; done
echo "$header"; echo "$rule"
for s in "${streams[@]}"; do
  row="| $s |"
  for e in "${engines[@]}"; do row+=" ${tps[$e,$s]} (${spread[$e,$s]}) |"; done
  [[ ${#engines[@]} -gt 1 ]] && row+=" $(awk -v a="${tps[oxidize,$s]}" -v b="${tps[llama-server,$s]}" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }') |"
  for e in "${engines[@]}"; do row+=" ${p50[$e,$s]} / ${p95[$e,$s]} |"; done
  echo "$row"
done
echo
for e in "${engines[@]}"; do  # against the first STREAMS entry; the issue's second target: 4 streams >= 2.5x one stream's aggregate
  line="$e, aggregate t/s against 1 client:"
  for s in "${streams[@]}"; do
    line+=" $s: $(awk -v a="${tps[$e,$s]}" -v b="${tps[$e,${streams[0]}]}" 'BEGIN { printf "%.2fx", (b > 0) ? a / b : 0 }')"
  done
  echo "$line"
done
