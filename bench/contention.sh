#!/usr/bin/env bash
# Decode throughput under CPU contention (issue #26 item 4): tg64 at -t 2 on an idle machine, at
# -t 8 (more threads than this 2-core machine has), and at -t 2 with one CPU kept busy by another
# process (bench/busy_core.cpp), each as a ratio of the first; llama.cpp beside it in the same run.
#
#   bench/contention.sh [MODEL.gguf]
#
# MODEL defaults to /tmp/0.5B-q4km.gguf, made with `oxidize synth` if missing. Environment:
#   OXIDIZE_BIN   bin folder(s) holding oxidize and oxidize_busy_core, space-separated to compare
#                 builds in one run (default build/native/bin), e.g. "build/pool-old/bin build/pool/bin"
#   THREADS       the base thread count (2); MANY: the oversubscribed one (8)
#   N_GEN, REPS   tokens per sample (64) and samples per case (3)
#   BUSY_CPU      the CPU the busy process is pinned to (default: the last one this shell may use)
#   LLAMA_BENCH   a llama-bench binary (default: build/llama.cpp/build/bin/llama-bench, which
#                 bench/build_llama_cpp.sh builds from the bundled source); without one, or with
#                 LLAMA=0, llama.cpp is skipped
#   LIMIT         seconds one engine may take for one case (300; a cell past it reads "-": llama.cpp
#                 at -t 8 on 2 busy cores can take many minutes)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
read -r -a bins <<<"${OXIDIZE_BIN:-$root/build/native/bin}"
threads=${THREADS:-2}
many=${MANY:-8}
n_gen=${N_GEN:-64}
reps=${REPS:-3}
limit=${LIMIT:-300}
model=${1:-/tmp/0.5B-q4km.gguf}
busy_cpu=${BUSY_CPU:-$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' | tail -n 1 | sed 's/.*-//')}

for b in "${bins[@]}"; do
  [[ -x $b/oxidize ]] || { echo "contention.sh: no $b/oxidize (build the oxidize target)" >&2; exit 2; }
done
busy_bin=
for b in "${bins[@]}"; do [[ -z $busy_bin && -x $b/oxidize_busy_core ]] && busy_bin=$b/oxidize_busy_core; done
[[ -n $busy_bin ]] || { echo "contention.sh: no oxidize_busy_core in ${bins[*]} (build that target)" >&2; exit 2; }
if [[ ! -f $model ]]; then
  echo "making $model" >&2
  "${bins[0]}/oxidize" synth --shape 0.5B --type Q4_K_M -o "$model" >&2
fi

llama=none
if [[ ${LLAMA:-1} != 0 ]]; then
  for candidate in "$root/build/llama.cpp/build/bin/llama-bench"; do
    [[ -z ${LLAMA_BENCH:-} && -x $candidate ]] && LLAMA_BENCH=$candidate
  done
  if [[ -n ${LLAMA_BENCH:-} ]]; then llama=bench; fi
fi

busy_pid=
stop_busy() {
  if [[ -n $busy_pid ]]; then
    kill "$busy_pid" 2>/dev/null || true
    wait "$busy_pid" 2>/dev/null || true
    busy_pid=
  fi
}
trap stop_busy EXIT
trap "exit 130" INT TERM

# The first "avg_ts" of a bench's JSON (-p 0: the only result is the tg one), to one decimal; fails
# (so the cell reads "-") if there is none.
avg_ts() {
  grep -o '"avg_ts": *[0-9.eE+-]*' | head -n 1 | sed 's/.*: *//' | awk '{ printf "%.1f\n", $1; ok = 1 } END { exit !ok }'
}

# Mean tg t/s of one engine at T threads: oxidize (bin folder) | llama-bench.
tg_oxidize() {
  timeout "$limit" "$1/oxidize" bench -m "$model" -p 0 -n "$n_gen" -t "$2" -r "$reps" -o json |
    avg_ts
}
tg_llama() {
  timeout "$limit" "$LLAMA_BENCH" -m "$model" -p 0 -n "$n_gen" -t "$1" -r "$reps" -o json 2>/dev/null |
    avg_ts
}

engines=()
for b in "${bins[@]}"; do engines+=("oxidize:$(basename "$(dirname "$b")")"); done
[[ $llama != none ]] && engines+=("llama.cpp")
cases=("-t $threads idle" "-t $many idle" "-t $threads, CPU $busy_cpu busy")
declare -A ts

for c in 0 1 2; do
  t=$threads
  [[ $c == 1 ]] && t=$many
  if [[ $c == 2 ]]; then
    # Spins for ever on one CPU (busy 1000 s at a time, no idle): a core another process holds.
    taskset -c "$busy_cpu" "$busy_bin" 1000000 0 &
    busy_pid=$!
    sleep 0.5
  fi
  for i in "${!bins[@]}"; do
    ts[$c,$i]=$(tg_oxidize "${bins[$i]}" "$t") || ts[$c,$i]=-
    echo "${cases[$c]}: ${engines[$i]} ${ts[$c,$i]} t/s" >&2
  done
  if [[ $llama != none ]]; then
    ts[$c,${#bins[@]}]=$(tg_llama "$t") || ts[$c,${#bins[@]}]=-
    echo "${cases[$c]}: llama.cpp ${ts[$c,${#bins[@]}]} t/s" >&2
  fi
  stop_busy
done

echo
echo "model $(basename "$model"), tg$n_gen, $reps samples; ratio = t/s / t/s at -t $threads idle ($(nproc) CPUs;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end: other processes make 'idle' less so)"
[[ $llama == bench ]] && echo "llama.cpp: $LLAMA_BENCH"
printf '| case |'
for e in "${engines[@]}"; do printf ' %s t/s | ratio |' "$e"; done
printf '\n| --- |'
for _ in "${engines[@]}"; do printf ' ---: | ---: |'; done
printf '\n'
for c in 0 1 2; do
  printf '| %s |' "${cases[$c]}"
  for i in "${!engines[@]}"; do
    ratio=-
    if [[ ${ts[$c,$i]} != - && ${ts[0,$i]} != - ]]; then
      ratio=$(awk -v a="${ts[$c,$i]}" -v b="${ts[0,$i]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    fi
    printf ' %s | %s |' "${ts[$c,$i]}" "$ratio"
  done
  printf '\n'
done
