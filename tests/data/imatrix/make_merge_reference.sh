#!/usr/bin/env bash
# Writes the references for `oxidize imatrix --in-file` and `--show-statistics`, from llama.cpp's
# own llama-imatrix and the imatrix files make_reference.sh wrote:
#   merged.c128.imatrix.gguf    --in-file (GGUF) --in-file (.dat) -c 128, nothing evaluated
#   continued.c128.f32.imatrix.gguf  3 chunks of story.txt evaluated on top of the GGUF one
#   stats/NAME.txt              --show-statistics of each file (llama.cpp's log prefix removed)
# llama-imatrix logs through an async thread that can drop the last lines at exit, so each
# statistics run is repeated until its per-layer table is whole (the line count is stable).
# Usage: tests/data/imatrix/make_merge_reference.sh [LLAMA_IMATRIX]
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=${1:-build/llama.cpp/build/bin/llama-imatrix}
shared=${OXIDIZE_SHARED:-../shared}
here=tests/data/imatrix
model="$shared/models/stories260K.gguf"
[ -x "$bin" ] || { echo "no llama-imatrix at $bin" >&2; exit 1; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$bin" -m "$model" --in-file "$here/stories260K.c128.f32.imatrix.gguf" --in-file "$here/stories260K.c128.f32.imatrix.dat" \
  -c 128 -o "$here/merged.c128.imatrix.gguf" > "$log" 2>&1
"$bin" -m "$model" -f tests/data/perplexity/story.txt -c 128 -b 128 -t 2 -ctk f32 -ctv f32 -fa off --chunks 3 \
  --in-file "$here/stories260K.c128.f32.imatrix.gguf" -o "$here/continued.c128.f32.imatrix.gguf" > "$log" 2>&1
mkdir -p "$here/stats"
for f in stories260K.c128.f32.imatrix.gguf stories260K.c128.f32.imatrix.dat mixtral-moe.c64.f32.imatrix.gguf \
         phi3.c64.f32.imatrix.gguf; do
  best=0
  for _ in $(seq 1 40); do
    "$bin" -m "$model" --show-statistics --in-file "$here/$f" > "$log" 2>&1 || true
    # The prefix is "S.MS.MS.US L " (time and level); the .dat file also logs gguf's magic complaint.
    sed -E 's/^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+ [IEWD] ?//' "$log" | grep -v -e '^$' -e 'invalid magic' > "$log.clean" || true
    n=$(wc -l < "$log.clean")
    if grep -q '^Computing weighted' "$log.clean" && [ "$n" -gt "$best" ]; then
      best=$n
      cp "$log.clean" "$here/stats/$f.txt"
    fi
  done
  rm -f "$log.clean"
  [ "$best" -gt 0 ] || { echo "$f: llama-imatrix never printed its tables" >&2; exit 1; }
  echo "stats/$f.txt: $best lines"
done
