#!/usr/bin/env bash
# Runs libFuzzer targets for a fixed number of executions each, starting from the seed corpora in
# tests/fuzz/corpus (new inputs go to a scratch folder, so the committed corpus never changes).
# Usage: tests/fuzz/run.sh RUNS [TARGET...]     TARGET: gguf tokenizer jinja chat_json state imatrix grammar server_request tool_reply (default: all)
# Env: OXIDIZE_FUZZ_BUILD (default build/asan), OXIDIZE_FUZZ_SEED (default 1: reproducible;
# 0: a random seed), OXIDIZE_JOBS (targets run at once, default nproc), OXIDIZE_SHARED (the shared
# data folder, default ../shared beside the repository).
# A finding stops its target with a non-zero status and leaves the input in
# $OXIDIZE_FUZZ_BUILD/fuzz/<target>/crash-* (replay: $OXIDIZE_FUZZ_BUILD/bin/<target>_fuzz FILE).
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${1:?usage: tests/fuzz/run.sh RUNS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(chat_json gguf jinja tokenizer state imatrix grammar server_request tool_reply)  # slowest first
build=${OXIDIZE_FUZZ_BUILD:-build/asan}
seed=${OXIDIZE_FUZZ_SEED:-1}
jobs=${OXIDIZE_JOBS:-$(nproc)}
# UBSan findings abort (the preset also compiles with -fno-sanitize-recover=undefined).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

run_one() {  # run_one TARGET: fuzzes, writes $work/summary.txt, returns libFuzzer's status
  local t=$1 bin=$build/bin/${1}_fuzz work=$build/fuzz/$1
  rm -rf "$work"
  mkdir -p "$work/new"
  if [ ! -x "$bin" ]; then echo "fuzz $t: $bin not built (scripts/build asan)" >"$work/summary.txt"; return 1; fi
  local args=(-runs="$runs" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$work/")
  case "$t" in
    gguf) args+=(-max_len=16384) ;;  # the model seeds are up to 9 KB
    state) args+=(-max_len=8192) ;;  # the 4-token seed is 4.7 KB
    tool_reply) args+=(-max_len=1024) ;;  # streamed in pieces: each piece re-parses the reply so far
    *) args+=(-max_len=4096) ;;
  esac
  [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="tests/fuzz/$t.dict")
  local start rc ms execs cov
  start=$(date +%s%N)
  "$bin" "${args[@]}" "$work/new" "tests/fuzz/corpus/$t" >"$work/log.txt" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 + 1 ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log.txt" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$work/log.txt" | tail -1)
  echo "fuzz $t: ${execs:-?} execs in $((ms / 1000)) s ($(( ${execs:-0} * 1000 / ms ))/s), ${cov:-cov: ?}," \
       "$(ls "$work/new" | wc -l) new inputs" >"$work/summary.txt"
  return $rc
}

declare -A target_of=()  # pid -> target
failed=()
report() {  # report TARGET STATUS: its summary, and the log's tail on a finding
  cat "$build/fuzz/$1/summary.txt"
  if [ "$2" -ne 0 ]; then
    failed+=("$1")
    echo "fuzz $1: FAILED (exit $2); last lines of $build/fuzz/$1/log.txt:"
    tail -40 "$build/fuzz/$1/log.txt" 2>/dev/null
  fi
}
wait_one() {  # waits for whichever target ends first (bash >= 5.1: wait -n -p)
  local pid rc
  wait -n -p pid
  rc=$?
  report "${target_of[$pid]}" $rc
  unset "target_of[$pid]"
}
for t in "${targets[@]}"; do
  [ ${#target_of[@]} -ge "$jobs" ] && wait_one
  run_one "$t" &
  target_of[$!]=$t
done
while [ ${#target_of[@]} -gt 0 ]; do wait_one; done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: findings in: ${failed[*]}"; exit 1; }
