#!/usr/bin/env bash
# The native CLI as a llama.cpp user drives it: the crashes once found by hand (invalid UTF-8,
# huge contexts, a full disk), the flag parser, --help/--version, llama.cpp's accepted flags and
# the chat REPL's commands. Each check states what must hold; ends with "N passed, N failed".
# Usage: tests/cli/cli.sh [CLI]
set -uo pipefail
cd "$(dirname "$0")/../.."
cli=${1:-build/native/bin/oxidize}
source tests/cli/check_lib.sh
rc_is() { [ "$1" -eq "$2" ]; }
has() { grep -q -- "$2" "$1"; }

# Invalid UTF-8 in chat input used to abort (SIGABRT) in JSON escaping.
printf 'caf\xe9\n' | "$cli" chat -m "$model" -n 8 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "chat: invalid UTF-8 on stdin -> a reply and exit 0 (was SIGABRT)" rc_is $rc 0
"$cli" run -m "$model" --chat -p $'caf\xe9' -n 8 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "run --chat: invalid UTF-8 prompt -> exit 0 (was SIGABRT)" rc_is $rc 0

# A context that cannot fit is refused before allocation, with the numbers.
(ulimit -v 4000000; "$cli" run -m "$model" -p hi -n 1 -c 16777216 > /dev/null 2> "$tmp/err"); rc=$?
check "run -c 16777216 under ulimit -v 4000000 -> exit 1 (was std::bad_alloc, rc 134)" rc_is $rc 1
check "  ... the error gives the memory needed and available" has "$tmp/err" "needs .* GiB but only .* GiB of memory is available"

# The flag parser.
"$cli" run -m "$model" -n 2 -n 3 --temp 0 --ids > "$tmp/out" 2> "$tmp/err"; rc=$?
check "run -n 2 -n 3: the last value wins (3 tokens)" bash -c "[ $rc -eq 0 ] && [ \$(wc -w < '$tmp/out') -eq 3 ]"
"$cli" run -m "$model" -p "-n" -n 3 --temp 0 --ids > "$tmp/out" 2> "$tmp/err"; rc=$?
check "run -p '-n' -n 3: '-n' is the prompt" bash -c "[ $rc -eq 0 ] && [ \$(wc -w < '$tmp/out') -eq 3 ]"
"$cli" run -m "$model" -f /tmp -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "run -f /tmp -> exit 1: 'is a directory'" bash -c "[ $rc -eq 1 ] && grep -q 'is a directory' '$tmp/err'"
"$cli" run -m "$model" -n 4 --temp 0 > /dev/full 2> "$tmp/err"; rc=$?
check "run > /dev/full -> exit 1 naming the write failure (was exit 0)" \
  bash -c "[ $rc -eq 1 ] && grep -q 'writing to standard output failed' '$tmp/err'"
"$cli" run -m "$model" --flash-attn -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "an unsupported llama.cpp flag is rejected by name" bash -c "[ $rc -eq 1 ] && grep -q \"'--flash-attn'\" '$tmp/err'"
"$cli" run -m "$model" -ngl 99 --mlock --no-mmap -n 1 --temp 0 > /dev/null 2> "$tmp/err"; rc=$?
check "-ngl 99 --mlock --no-mmap: accepted, one warning line each" \
  bash -c "[ $rc -eq 0 ] && [ \$(grep -c 'warning:' '$tmp/err') -eq 3 ] && grep -q 'no GPU backend' '$tmp/err'"
"$cli" run -m "$model" -p 'a\nb' --display-prompt -n 0 > "$tmp/out" 2> /dev/null
check "-p escapes: \\n becomes a newline" bash -c "[ \"\$(head -n 1 '$tmp/out')\" = a ]"
"$cli" run -m "$model" -p 'a\nb' --no-escape --display-prompt -n 0 > "$tmp/out" 2> /dev/null
check "--no-escape keeps \\n as typed" bash -c "head -n 1 '$tmp/out' | grep -qF 'a\\nb'"
"$cli" run -m "$model" --seed -1 -n 4 > /dev/null 2>&1; rc=$?
check "--seed -1 (random) is accepted" rc_is $rc 0
# The sampler chain's flags (core/sampler/registry.h) in llama.cpp's spelling; bad values exit 1
# with the validation message naming the flag.
"$cli" run -m "$model" -n 8 --samplers "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature" \
  --repeat-last-n 32 --repeat-penalty 1.1 --frequency-penalty 0.2 --presence-penalty 0.1 --dry-multiplier 0.8 \
  --dry-base 1.75 --dry-allowed-length 2 --dry-penalty-last-n 64 --dry-sequence-breaker . --typical 0.9 \
  --xtc-probability 0.5 --xtc-threshold 0.1 --top-nsigma 2 --dynatemp-range 0.3 --dynatemp-exp 1.2 -l 13+1 \
  --logit-bias 14-inf --min-p 0.02 --top-p 0.9 --top-k 20 --temperature 0.9 --seed 3 > /dev/null 2> "$tmp/err"; rc=$?
check "run: every sampler flag of llama.cpp's chain is accepted" rc_is $rc 0
for m in 1 2; do
  "$cli" run -m "$model" -n 8 --mirostat $m --mirostat-lr 0.2 --mirostat-ent 4 --sampler-seq kt > /dev/null 2>&1; rc=$?
  check "run --mirostat $m --mirostat-lr --mirostat-ent" rc_is $rc 0
done
"$cli" run -m "$model" -n 4 --seed 7 > "$tmp/a" 2> /dev/null
"$cli" run -m "$model" -n 4 --seed 7 > "$tmp/b" 2> /dev/null
check "run --seed 7 twice: the same text" cmp -s "$tmp/a" "$tmp/b"
"$cli" run -m "$model" -n 3 --temp 0 --n-probs 2 --ids > /dev/null 2> "$tmp/err"; rc=$?
check "run --n-probs 2: one 'probs: ID P | ID:P ID:P' line per token on stderr" \
  bash -c "[ $rc -eq 0 ] && [ \$(grep -cE '^probs: [0-9]+ [0-9.]+ \| [0-9]+:[0-9.]+ [0-9]+:[0-9.]+$' '$tmp/err') -eq 3 ]"
for bad in "--temp nan" "--top-p 2" "--min-p -1" "--typical 1.5" "--repeat-penalty 0" "--top-k -5" "--mirostat 3" \
           "--samplers top_k;nope" "--sampler-seq kq" "--dry-base 0.5" "--xtc-probability inf" "--logit-bias 13*1" \
           "--seed 4294967296" "--n-probs -1" "--frequency-penalty nan" "--dynatemp-range -1" "--repeat-last-n -2"; do
  "$cli" run -m "$model" -n 1 $bad > /dev/null 2> "$tmp/err"; rc=$?
  check "run $bad -> exit 1 naming ${bad%% *}" bash -c "[ $rc -eq 1 ] && grep -q -- '${bad%% *}: ' '$tmp/err'"
done
"$cli" run -m "$model" -n 1 --logit-bias 999999+1 > /dev/null 2> "$tmp/err"; rc=$?
check "run --logit-bias with a token outside the vocabulary -> exit 1 naming it" \
  bash -c "[ $rc -eq 1 ] && grep -q -- '--logit-bias: token 999999 is out of range' '$tmp/err'"
"$cli" chat -m "$model" --top-p 2 < /dev/null > /dev/null 2> "$tmp/err"; rc=$?
check "chat --top-p 2 -> exit 1 naming --top-p" bash -c "[ $rc -eq 1 ] && grep -q -- '--top-p: ' '$tmp/err'"
"$cli" run -m "$model" -r "Lily" --temp 0 -n 64 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "-r TEXT stops generation at TEXT" bash -c "[ $rc -eq 0 ] && ! grep -q 'Lily' '$tmp/out' && grep -q 'finish: stop' '$tmp/err'"

# bench: -d rows and names, -o jsonl (one JSON object per line), bad values named by their flag.
"$cli" bench -m "$model" -p 8 -n 4 -d 0,16 -t 1 -r 1 -o jsonl > "$tmp/out" 2> "$tmp/err"; rc=$?
check "bench -d 0,16 -o jsonl: 4 lines, each a JSON object with n_depth, type_k, type_v, kv_bytes" \
  node -e "const rows = require('fs').readFileSync('$tmp/out', 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const names = rows.map((r) => r.test + '/' + r.n_depth).join(',');
process.exit($rc === 0 && names === 'pp8/0,tg4/0,pp8 @ d16/16,tg4 @ d16/16' &&
  rows.every((r) => r.type_k === 'f16' && r.type_v === 'f16' && r.kv_bytes > 0) ? 0 : 1)"
"$cli" bench -m "$model" -p 8 -n 0 -d 16 -t 1 -r 1 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "bench -d 16 (markdown): the test is named 'pp8 @ d16'" bash -c "[ $rc -eq 0 ] && grep -q '| pp8 @ d16 |' '$tmp/out'"
for bad in "-d -1" "-d 1.5" "-d 4,x" "-o csv"; do
  "$cli" bench -m "$model" -p 8 -n 0 -r 1 $bad > /dev/null 2> "$tmp/err"; rc=$?
  check "bench $bad -> exit 1 naming ${bad%% *}" bash -c "[ $rc -eq 1 ] && grep -q -- '${bad%% *}: ' '$tmp/err'"
done

# perplexity against llama-perplexity's own output (tests/data/perplexity/make_reference.sh), and its errors.
ref=tests/data/perplexity/stories260K.c128.ref
story=tests/data/perplexity/story.txt
ppl_of() { grep -o 'PPL = [0-9.]*' "$1" | awk '{print $3}'; }
ok_and_close() {  # ok_and_close RC GOT WANT: exit 0 and |GOT - WANT| <= 0.5% of WANT
  [ "$1" -eq 0 ] && awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 0.005 * b) }'
}
"$cli" perplexity -m "$model" -f "$story" -c 128 -b 128 -t 2 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "perplexity -c 128: exit 0, Final estimate within 0.5% of llama-perplexity's" \
  ok_and_close $rc "$(ppl_of "$tmp/out")" "$(ppl_of "$ref")"
check "  ... one [k] value per chunk, as many as llama-perplexity printed" \
  bash -c "[ \$(grep -o '\[[0-9]*\]' '$tmp/out' | wc -l) -eq \$(grep -o '\[[0-9]*\]' '$ref' | wc -l) ]"
"$cli" perplexity -m "$model" -c 128 > /dev/null 2> "$tmp/err"; rc=$?
check "perplexity without -f -> exit 1 asking for it" bash -c "[ $rc -eq 1 ] && grep -q 'pass -f FILE' '$tmp/err'"
"$cli" perplexity -m "$model" -f "$tmp/none.txt" > /dev/null 2> "$tmp/err"; rc=$?
check "perplexity -f MISSING -> exit 1 naming the file" bash -c "[ $rc -eq 1 ] && grep -q 'none.txt' '$tmp/err'"
printf 'Once upon a time, there was a dog.' > "$tmp/short.txt"
"$cli" perplexity -m "$model" -f "$tmp/short.txt" -c 128 > /dev/null 2> "$tmp/err"; rc=$?
check "perplexity of a short text -> exit 1 naming the token counts and -c" \
  bash -c "[ $rc -eq 1 ] && grep -q 'tokenizes to only [0-9]* tokens.*context of 128 (-c) needs at least 256' '$tmp/err'"
"$cli" perplexity -m "$model" -f "$story" -c 4096 > /dev/null 2> "$tmp/err"; rc=$?
check "perplexity -c above the training context -> exit 1 naming both" \
  bash -c "[ $rc -eq 1 ] && grep -q -- '-c 4096 is larger than the model.s training context (2048 tokens)' '$tmp/err'"
"$cli" perplexity -m "$model" -f "$story" -c 128 --chunks 0 > /dev/null 2> "$tmp/err"; rc=$?
check "perplexity --chunks 0 -> exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'chunk count 0 is invalid' '$tmp/err'"

# imatrix against llama-imatrix's run (tests/data/imatrix/make_reference.sh), and quantize --imatrix.
imx_ref=tests/data/imatrix/stories260K.c128.f32.ref
"$cli" imatrix -m "$model" -f tests/data/perplexity/story.txt -c 128 -b 128 -t 2 -ctk f32 -ctv f32 -o "$tmp/im.gguf" \
  > "$tmp/out" 2> "$tmp/err"; rc=$?
check "imatrix -c 128 (f32 cache): exit 0, llama-imatrix's Final estimate to the printed digits" \
  bash -c "[ $rc -eq 0 ] && [ -s '$tmp/im.gguf' ] && [ \"\$(grep -o 'PPL = .*' '$tmp/out')\" = \"\$(grep -o 'PPL = .*' '$imx_ref')\" ]"
check "  ... stderr names the 35 entries saved" has "$tmp/err" "saved 35 entries (23 chunks of 128 tokens) to $tmp/im.gguf (gguf)"
"$cli" imatrix -m "$model" -f tests/data/perplexity/story.txt -c 128 --chunks 3 --no-ppl --output-format dat \
  -o "$tmp/im.dat" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "imatrix --output-format dat --no-ppl --chunks 3: exit 0, no perplexity line" \
  bash -c "[ $rc -eq 0 ] && [ -s '$tmp/im.dat' ] && ! grep -q 'PPL' '$tmp/out' && grep -q '3 chunks of 128' '$tmp/err'"
"$cli" imatrix -m "$model" -c 128 > /dev/null 2> "$tmp/err"; rc=$?
check "imatrix without -f -> exit 1 asking for it" bash -c "[ $rc -eq 1 ] && grep -q 'pass -f FILE' '$tmp/err'"
"$cli" imatrix -m "$model" -f tests/data/perplexity/story.txt --output-format xml > /dev/null 2> "$tmp/err"; rc=$?
check "imatrix --output-format xml -> exit 1 naming the flag" bash -c "[ $rc -eq 1 ] && grep -q -- \"--output-format: 'xml'\" '$tmp/err'"
imd=tests/data/imatrix
"$cli" imatrix --in-file $imd/stories260K.c128.f32.imatrix.gguf --in-file $imd/stories260K.c128.f32.imatrix.dat -c 128 \
  -o "$tmp/merged.gguf" > /dev/null 2> "$tmp/err"; rc=$?
check "imatrix --in-file GGUF --in-file DAT -c 128 (no text): byte for byte llama-imatrix's combined file" \
  bash -c "[ $rc -eq 0 ] && cmp -s '$tmp/merged.gguf' $imd/merged.c128.imatrix.gguf"
"$cli" imatrix --in-file $imd/stories260K.c128.f32.imatrix.gguf --in-file $imd/mixtral-moe.c64.f32.imatrix.gguf \
  -o "$tmp/merged.gguf" > /dev/null 2> "$tmp/err"; rc=$?
check "imatrix --in-file of two models -> exit 1 naming the file, the entry and both sizes" \
  bash -c "[ $rc -eq 1 ] && grep -q \"mixtral-moe.c64.f32.imatrix.gguf: entry 'blk.0.attn_k.weight' has 128 values where the files before it have 64\" '$tmp/err'"
for f in stories260K.c128.f32.imatrix.gguf stories260K.c128.f32.imatrix.dat mixtral-moe.c64.f32.imatrix.gguf \
         phi3.c64.f32.imatrix.gguf; do
  "$cli" imatrix --show-statistics --in-file $imd/$f 2> /dev/null | grep -v '^$' > "$tmp/out"
  check "imatrix --show-statistics --in-file $f: llama-imatrix's tables, line for line" diff $imd/stats/$f.txt "$tmp/out"
done
"$cli" imatrix --show-statistics --in-file "$tmp/im.gguf" --in-file "$tmp/im.gguf" > /dev/null 2> "$tmp/err"; rc=$?
check "imatrix --show-statistics with two files -> exit 1" \
  bash -c "[ $rc -eq 1 ] && grep -q 'takes exactly one --in-file (2 given)' '$tmp/err'"
"$cli" quantize --imatrix "$tmp/im.gguf" "$model" "$tmp/q.gguf" Q4_0 2 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "quantize --imatrix (ours) Q4_0 2: exit 0, a progress line per tensor (48)" \
  bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^\[ *[0-9]*/  48\] ' '$tmp/err') -eq 48 ]"
check "  ... llama-quantize's line shape, the imatrix marked where used" \
  has "$tmp/err" "blk.0.attn_q.weight *- \[    64,     64,      1,      1\], type =    F32, converting to Q4_0 (imatrix) .. size =     0.02 MiB ->     0.00 MiB"
check "  ... and the sizes before and after" \
  bash -c "grep -q 'model size  =     1.12 MiB (32.00 BPW)' '$tmp/err' && grep -q 'quant size  = .* MiB' '$tmp/err'"
"$cli" inspect "$tmp/q.gguf" > "$tmp/out" 2>&1
check "  ... the output records quantize.imatrix.entries_count 35" bash -c "grep -q 'quantize.imatrix.entries_count *UINT32 *35' '$tmp/out'"
"$cli" quantize --imatrix "$tmp/im.dat" "$model" "$tmp/q.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --imatrix FILE.dat (legacy format): exit 0" rc_is $rc 0
rm -f "$tmp/q.gguf"
"$cli" quantize --imatrix tests/data/imatrix/mixtral-moe.c64.f32.imatrix.gguf "$model" "$tmp/q.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --imatrix of another model -> exit 1 naming the tensor and both sizes" \
  bash -c "[ $rc -eq 1 ] && grep -q \"entry 'blk.0.attn_k.weight' has 128 values but the tensor has 64 columns\" '$tmp/err' && [ ! -e '$tmp/q.gguf' ]"
"$cli" quantize "$model" "$tmp/q8.gguf" Q8_0 > /dev/null 2>&1
"$cli" quantize "$tmp/q8.gguf" "$tmp/q4.gguf" Q4_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize of a Q8_0 model -> exit 1 pointing at --allow-requantize" \
  bash -c "[ $rc -eq 1 ] && grep -q 'already Q8_0: requantizing is disabled (--allow-requantize' '$tmp/err'"
"$cli" quantize --allow-requantize "$tmp/q8.gguf" "$tmp/q4.gguf" Q4_0 > /dev/null 2> "$tmp/err"; rc=$?
check "  ... with --allow-requantize: exit 0" rc_is $rc 0
"$cli" quantize --pure --output-tensor-type q8_0 --token-embedding-type f16 "$model" "$tmp/p.gguf" Q4_K_M > /dev/null 2>&1
"$cli" inspect "$tmp/p.gguf" > "$tmp/out" 2>&1
check "quantize --pure --output-tensor-type q8_0 --token-embedding-type f16 Q4_K_M: those types, Q5_0 for attn_v" \
  bash -c "grep -q '^  output.weight *Q8_0' '$tmp/out' && grep -q '^  token_embd.weight *F16' '$tmp/out' && grep -q '^  blk.2.attn_v.weight *Q5_0' '$tmp/out'"
"$cli" quantize --output-tensor-type q9_9 "$model" "$tmp/p.gguf" Q4_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --output-tensor-type q9_9 -> exit 1 naming the flag" \
  bash -c "[ $rc -eq 1 ] && grep -q -- \"--output-tensor-type: 'q9_9' is not a GGUF type name\" '$tmp/err'"

# quantize --dry-run with --tensor-type/--tensor-type-file/--pure/explicit types: each tensor's type
# must be llama-quantize --dry-run's (tests/data/quantize_flags/make_reference.sh) on the same model.
qf=tests/data/quantize_flags
"$cli" synth --shape tiny-256 --type F16 --layers 8 -o "$tmp/t256.gguf" > /dev/null 2>&1
while read -r name preset flags; do
  set -f; "$cli" quantize --dry-run $flags "$tmp/t256.gguf" "$preset" > /dev/null 2> "$tmp/err"; rc=$?; set +f
  "$qf/types_of.sh" < "$tmp/err" > "$tmp/types"
  check "quantize --dry-run $preset $flags: llama-quantize's name and type for each tensor" \
    bash -c "[ $rc -eq 0 ] && [ \$(wc -l < '$tmp/types') -ge 57 ] && diff '$qf/$name.types' '$tmp/types'"
done < <(grep -v '^#' "$qf/cases.txt")
# Whole files: byte for byte llama-quantize's (whole_files.sha256, same synthetic model).
check "quantize: the synthetic model is the one whole_files.sha256 was made from (else rerun make_reference.sh)" \
  bash -c "[ \"\$(sha256sum < '$tmp/t256.gguf' | cut -d' ' -f1)\" = \"\$(grep '  model\$' $qf/whole_files.sha256 | cut -d' ' -f1)\" ]"
while read -r sha args; do
  [ "$args" = model ] && continue
  read -r preset flags <<< "$args"
  set -f; "$cli" quantize $flags "$tmp/t256.gguf" "$tmp/whole.gguf" "$preset" 2 > /dev/null 2>&1; rc=$?; set +f
  check "quantize $args: llama-quantize's file byte for byte" \
    bash -c "[ $rc -eq 0 ] && [ \"\$(sha256sum < '$tmp/whole.gguf' | cut -d' ' -f1)\" = $sha ]"
done < "$qf/whole_files.sha256"
rm -f "$tmp/whole.gguf"
# Split models: `oxidize gguf-split` writes llama-gguf-split's shards and quantize --keep-split
# llama-quantize --keep-split's, byte for byte (split_files.sha256, same synthetic model).
"$cli" gguf-split --split-max-tensors 25 "$tmp/t256.gguf" "$tmp/t256s" > /dev/null 2>&1; rc=$?
prev=none
while read -r sha shard preset flags; do
  if [ "$shard" = shard ]; then
    check "gguf-split --split-max-tensors 25: shard $preset is llama-gguf-split's byte for byte" \
      bash -c "[ $rc -eq 0 ] && [ \"\$(sha256sum < '$tmp/t256s-$preset' | cut -d' ' -f1)\" = $sha ]"
    continue
  fi
  if [ "$preset $flags" != "$prev" ]; then
    rm -f "$tmp"/ks-*
    set -f; "$cli" quantize --keep-split $flags "$tmp/t256s-00001-of-00003.gguf" "$tmp/ks.gguf" "$preset" 2 > /dev/null 2>&1; krc=$?; set +f
    prev="$preset $flags"
  fi
  check "quantize --keep-split $preset $flags: shard $shard is llama-quantize's byte for byte" \
    bash -c "[ $krc -eq 0 ] && [ \"\$(sha256sum < '$tmp/ks-$shard' | cut -d' ' -f1)\" = $sha ]"
done < "$qf/split_files.sha256"
rm -f "$tmp"/ks-* "$tmp"/t256s-*
check "  ... and writes nothing (no OUT.gguf given, none beside the input)" bash -c "! ls '$tmp'/ggml-model-* 2> /dev/null"
"$cli" quantize --dry-run "$tmp/t256.gguf" IQ1_S > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --dry-run IQ1_S without --imatrix: exit 0, warns that the real run needs one" \
  bash -c "[ $rc -eq 0 ] && grep -q 'needs an importance matrix (--imatrix FILE): tensor .blk.0.attn_k.weight.' '$tmp/err'"
cp "$model" "$tmp/in.gguf"
"$cli" quantize --override-kv general.name=str:renamed --override-kv llama.rope.freq_base=float:5e5 \
  "$tmp/in.gguf" 2 1 > /dev/null 2> "$tmp/err"; rc=$?
"$cli" inspect "$tmp/ggml-model-Q4_0.gguf" > "$tmp/out" 2>&1
check "quantize IN 2 1 (llama.cpp's ftype number, no OUT): writes ggml-model-Q4_0.gguf beside IN" \
  bash -c "[ $rc -eq 0 ] && grep -q 'general.file_type *UINT32 *2$' '$tmp/out'"
check "  ... with the --override-kv values" \
  bash -c "grep -q 'general.name *STRING *.renamed.$' '$tmp/out' && grep -q 'llama.rope.freq_base *FLOAT32 *500000' '$tmp/out'"
"$cli" quantize --override-kv general.name=int:-1 "$tmp/in.gguf" "$tmp/x.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --override-kv KEY=int:-1 -> exit 1 naming the flag and the range" \
  bash -c "[ $rc -eq 1 ] && grep -q -- \"--override-kv 'general.name=int:-1': int: takes a whole number in 0..4294967295\" '$tmp/err'"
"$cli" quantize --tensor-type 'blk\.\d\.attn_q=q8_0' "$tmp/in.gguf" "$tmp/x.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --tensor-type with \\d (ECMAScript only) -> exit 1 saying what to write" \
  bash -c "[ $rc -eq 1 ] && grep -qF 'is not supported (patterns are POSIX extended regular expressions); write [0-9]' '$tmp/err'"
"$cli" quantize --prune-layers 1,3 "$tmp/in.gguf" "$tmp/x.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
"$cli" inspect "$tmp/x.gguf" > "$tmp/out" 2>&1
check "quantize --prune-layers 1,3 (of 5): block_count 3, layers renumbered 0..2" \
  bash -c "[ $rc -eq 0 ] && grep -q 'llama.block_count *UINT32 *3$' '$tmp/out' && grep -q '^  blk.2.ffn_down.weight' '$tmp/out' && ! grep -q '^  blk.3.' '$tmp/out'"
check "  ... and the pruned model generates" bash -c "'$cli' run -m '$tmp/x.gguf' -p 'Once' -n 4 --temp 0 > /dev/null 2>&1"
"$cli" quantize --prune-layers 1,x "$tmp/in.gguf" "$tmp/x.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --prune-layers 1,x -> exit 1 naming the bad id" \
  bash -c "[ $rc -eq 1 ] && grep -q -- \"--prune-layers '1,x': 'x' is not a layer number\" '$tmp/err'"
"$cli" quantize --prune-layers 5 "$tmp/in.gguf" "$tmp/x.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --prune-layers 5 of a 5-layer model -> exit 1 naming the layer count" \
  bash -c "[ $rc -eq 1 ] && grep -q -- '--prune-layers 5: .* has 5 layers (0..4)' '$tmp/err'"
# COPY (llama-quantize's only_copy): every tensor as it is, even a quantized one without
# --allow-requantize; general.file_type is the input's; without OUT, ggml-model-COPY.gguf.
"$cli" quantize "$tmp/in.gguf" "$tmp/cq8.gguf" Q8_0 2 > /dev/null 2>&1
"$cli" quantize "$tmp/cq8.gguf" COPY > /dev/null 2> "$tmp/err"; rc=$?
"$cli" inspect "$tmp/cq8.gguf" 2>&1 | grep '^  [a-z].*\.weight' > "$tmp/types_in"
"$cli" inspect "$tmp/ggml-model-COPY.gguf" > "$tmp/out" 2>&1
check "quantize Q8_0-MODEL COPY: exit 0, writes ggml-model-COPY.gguf beside IN with general.file_type 7 (Q8_0's)" \
  bash -c "[ $rc -eq 0 ] && grep -q 'general.file_type *UINT32 *7$' '$tmp/out'"
check "  ... every tensor with its type and shape" \
  bash -c "[ \$(wc -l < '$tmp/types_in') -gt 10 ] && grep '^  [a-z].*\.weight' '$tmp/out' | diff '$tmp/types_in' -"
# --max-buffer-size MiB: the rows of one tensor are converted in slabs; the file is the same.
"$cli" quantize --max-buffer-size 1 "$tmp/in.gguf" "$tmp/mb.gguf" Q4_K_M 2 > /dev/null 2> "$tmp/err"; rc=$?
"$cli" quantize "$tmp/in.gguf" "$tmp/x.gguf" Q4_K_M 2 > /dev/null 2>&1
check "quantize --max-buffer-size 1: exit 0, the file without it byte for byte" \
  bash -c "[ $rc -eq 0 ] && cmp '$tmp/mb.gguf' '$tmp/x.gguf'"
for v in 0 -5 abc 12x; do
  "$cli" quantize --max-buffer-size "$v" "$tmp/in.gguf" "$tmp/mb.gguf" Q8_0 > /dev/null 2> "$tmp/err"; rc=$?
  check "quantize --max-buffer-size $v -> exit 1 naming the flag" \
    bash -c "[ $rc -eq 1 ] && grep -q -- \"--max-buffer-size: '$v' is not an integer in \[1, \" '$tmp/err'"
done
rm -f "$tmp/cq8.gguf" "$tmp/ggml-model-COPY.gguf" "$tmp/mb.gguf" "$tmp/types_in"
rm -f "$tmp/t256.gguf" "$tmp/in.gguf" "$tmp/ggml-model-Q4_0.gguf" "$tmp/x.gguf"

# A split model (NAME-00001-of-0000N.gguf) loads from its first shard: the unsplit model's tokens;
# a later shard, a missing shard or a shard of another split are refused naming the file.
"$cli" gguf-split --split-max-tensors 20 "$model" "$tmp/s260" > /dev/null 2>&1; rc=$?
check "gguf-split --split-max-tensors 20 of stories260K (48 tensors): three shards" \
  bash -c "[ $rc -eq 0 ] && [ -f '$tmp/s260-00003-of-00003.gguf' ] && ! ls '$tmp'/s260-*-of-00004.gguf 2> /dev/null"
"$cli" run -m "$model" -p "Once upon a time" -n 64 --temp 0 -t 2 > "$tmp/a" 2> /dev/null
"$cli" run -m "$tmp/s260-00001-of-00003.gguf" -p "Once upon a time" -n 64 --temp 0 -t 2 > "$tmp/b" 2> "$tmp/err"; rc=$?
check "run -m NAME-00001-of-00003.gguf: the unsplit model's greedy text" \
  bash -c "[ $rc -eq 0 ] && [ \$(wc -w < '$tmp/a') -gt 25 ] && cmp -s '$tmp/a' '$tmp/b'"
"$cli" bench -m "$tmp/s260-00001-of-00003.gguf" -p 8 -n 4 -t 1 -r 1 -o jsonl > "$tmp/out" 2> "$tmp/err"; rc=$?
check "bench -m NAME-00001-of-00003.gguf: runs, model_bytes counts all three shards" \
  node -e "const fs = require('fs'); const rows = fs.readFileSync('$tmp/out', 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const size = [1, 2, 3].reduce((n, i) => n + fs.statSync('$tmp/s260-0000' + i + '-of-00003.gguf').size, 0);
process.exit($rc === 0 && rows.length === 2 && rows.every((r) => r.model_bytes === size) ? 0 : 1)"
"$cli" inspect "$tmp/s260-00001-of-00003.gguf" > "$tmp/out" 2>&1
check "inspect NAME-00001-of-00003.gguf: the three shards, 48 tensors" \
  bash -c "grep -q '^shards: *3$' '$tmp/out' && grep -q '^tensors (48):' '$tmp/out'"
"$cli" run -m "$tmp/s260-00002-of-00003.gguf" -p "Once" -n 2 > /dev/null 2> "$tmp/err"; rc=$?
check "run -m NAME-00002-of-00003.gguf -> exit 1 naming the first shard" \
  bash -c "[ $rc -eq 1 ] && grep -qF 's260-00002-of-00003.gguf is shard 2 of 3 of a split model: load its first shard, $tmp/s260-00001-of-00003.gguf' '$tmp/err'"
"$cli" quantize "$model" "$tmp/q8.gguf" Q8_0 2 > /dev/null 2>&1
"$cli" quantize --keep-split "$tmp/s260-00001-of-00003.gguf" "$tmp/kq.gguf" Q8_0 2 > /dev/null 2> "$tmp/err"; rc=$?
check "quantize --keep-split NAME-00001-of-00003.gguf OUT.gguf: OUT-00001-of-00003.gguf .. OUT-00003-of-00003.gguf" \
  bash -c "[ $rc -eq 0 ] && [ -f '$tmp/kq-00001-of-00003.gguf' ] && [ -f '$tmp/kq-00003-of-00003.gguf' ] && grep -q 'wrote $tmp/kq-00002-of-00003.gguf' '$tmp/err'"
"$cli" run -m "$tmp/q8.gguf" -p "Once upon a time" -n 64 --temp 0 -t 2 > "$tmp/a" 2> /dev/null
"$cli" run -m "$tmp/kq-00001-of-00003.gguf" -p "Once upon a time" -n 64 --temp 0 -t 2 > "$tmp/b" 2> /dev/null; rc=$?
check "  ... which generate the one-file Q8_0 model's greedy text" \
  bash -c "[ $rc -eq 0 ] && [ \$(wc -w < '$tmp/a') -gt 25 ] && cmp -s '$tmp/a' '$tmp/b'"
"$cli" quantize "$tmp/s260-00001-of-00003.gguf" "$tmp/one.gguf" Q8_0 2 > /dev/null 2>&1; rc=$?
check "quantize of a split model without --keep-split: one file, the unsplit model's quantization" \
  bash -c "[ $rc -eq 0 ] && cmp -s '$tmp/one.gguf' '$tmp/q8.gguf'"
"$cli" gguf-split --split-max-tensors 12 "$model" "$tmp/s4" > /dev/null 2>&1
cp "$tmp/s4-00002-of-00004.gguf" "$tmp/s260-00002-of-00003.gguf"
"$cli" run -m "$tmp/s260-00001-of-00003.gguf" -p "Once" -n 2 > /dev/null 2> "$tmp/err"; rc=$?
check "run with shard 2 of another split (split.count 4) in place -> exit 1 naming the shard and both counts" \
  bash -c "[ $rc -eq 1 ] && grep -qF '$tmp/s260-00002-of-00003.gguf: split.no = 1, split.count = 4; ' '$tmp/err'"
rm -f "$tmp/s260-00002-of-00003.gguf"
"$cli" run -m "$tmp/s260-00001-of-00003.gguf" -p "Once" -n 2 > /dev/null 2> "$tmp/err"; rc=$?
check "run with shard 2 missing -> exit 1 naming the missing file" \
  bash -c "[ $rc -eq 1 ] && grep -qF 'shard 2 of 3 of $tmp/s260-00001-of-00003.gguf: ' '$tmp/err' && grep -qF '$tmp/s260-00002-of-00003.gguf' '$tmp/err'"
rm -f "$tmp"/s260-* "$tmp"/s4-* "$tmp"/kq-* "$tmp/q8.gguf" "$tmp/one.gguf"

# Context shift against llama-completion --context-shift (tests/data/context_shift/make_reference.sh):
# 700 greedy tokens in a 256-token context shift it 3-4 times; the text must be llama.cpp's, word for word.
for keep in 0 3; do
  "$cli" run -m "$model" -p "Once upon a time" -n 700 -c 256 --temp 0 -t 2 --keep $keep --display-prompt \
    > "$tmp/out" 2> "$tmp/err"; rc=$?
  check "run -c 256 -n 700 --keep $keep: llama-completion's text through its context shifts" \
    node -e "const fs = require('fs'); const ours = fs.readFileSync('$tmp/out', 'utf8').trim();
const want = fs.readFileSync('tests/data/context_shift/stories260K.keep$keep.txt', 'utf8').trim();
process.exit($rc === 0 && ours === want && /shifted [3-9] times/.test(fs.readFileSync('$tmp/err', 'utf8')) ? 0 : 1)"
done
"$cli" run -m "$model" -p "Once upon a time" -n 700 -c 256 --temp 0 -t 2 --no-context-shift > "$tmp/out" 2> "$tmp/err"; rc=$?
check "run --no-context-shift: stops when the context fills (finish: length, 251 tokens, as llama-completion)" \
  bash -c "[ $rc -eq 0 ] && grep -q 'generation: 251 tokens.*finish: length' '$tmp/err' && ! grep -q shifted '$tmp/err'"
head -c 3000 tests/data/perplexity/story.txt > "$tmp/long.txt"
"$cli" run -m "$model" -f "$tmp/long.txt" -n 4 -c 128 --temp 0 --no-context-shift > /dev/null 2> "$tmp/err"; rc=$?
check "run: a prompt longer than -c with --no-context-shift -> exit 1 naming both lengths and -c" \
  bash -c "[ $rc -eq 1 ] && grep -q 'the prompt has [0-9]* tokens but the context holds 128.*-c' '$tmp/err'"
"$cli" run -m "$model" -f "$tmp/long.txt" -n 4 -c 128 --temp 0 --keep 5 > /dev/null 2> "$tmp/err"; rc=$?
check "run: a prompt longer than -c is cut after the kept tokens (as llama-server) and generation goes on" \
  bash -c "[ $rc -eq 0 ] && grep -q 'generation: 4 tokens' '$tmp/err' && grep -q 'left out' '$tmp/err'"

# --help for every command, --version.
for c in run chat logits inspect tokenize template quantize bench synth perplexity imatrix serve; do
  "$cli" $c --help > "$tmp/out" 2>&1; rc=$?
  check "$c --help -> exit 0 with its usage" bash -c "[ $rc -eq 0 ] && grep -q 'usage: oxidize $c' '$tmp/out'"
done
"$cli" --version > "$tmp/out" 2>&1; rc=$?
check "--version" bash -c "[ $rc -eq 0 ] && grep -q '^oxidize [0-9]' '$tmp/out'"

# The chat REPL.
printf '/help\nOnce upon \\\na time\n/save %s\n/clear\n/load %s\n/system Be kind.\n/nope\n/exit\nnot read\n' \
  "$tmp/conv.json" "$tmp/conv.json" | "$cli" chat -m "$model" -n 8 --temp 0 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "chat: /help /save /clear /load /system /exit -> exit 0" rc_is $rc 0
check "  ... /help lists the commands" has "$tmp/err" "/save FILE"
check "  ... a trailing \\ continues the line" \
  node -e "const m=JSON.parse(require('fs').readFileSync('$tmp/conv.json','utf8')); process.exit(m[0].content==='Once upon \na time' && m.length===2 && m[1].role==='assistant' ? 0 : 1)"
check "  ... /load reads it back" has "$tmp/err" "loaded 2 messages"
check "  ... an unknown /command is an error, not the end" has "$tmp/err" "unknown command '/nope'"
check "  ... input after /exit is not read" bash -c "[ \$(grep -c 'tokens, .* t/s' '$tmp/err') -eq 1 ]"
for i in $(seq 12); do echo 'Tell me a story about a little dog.'; done > "$tmp/turns"
"$cli" chat -m "$model" -c 128 -n 24 --temp 0 < "$tmp/turns" > /dev/null 2> "$tmp/err"; rc=$?
check "chat: a conversation longer than the context shifts the KV cache and goes on" \
  bash -c "[ $rc -eq 0 ] && grep -q 'context full: shifted out' '$tmp/err' && [ \$(grep -c 'tokens, .* t/s' '$tmp/err') -eq 12 ]"
check "  ... every turn after the first builds on the cached conversation (some tokens cached)" \
  bash -c "[ \$(grep -c 'prompt: [0-9]* new, [1-9][0-9]* cached,' '$tmp/err') -eq 11 ]"
printf 'caf\xe9 \\\nau lait\n/save %s\n' "$tmp/bad.json" | "$cli" chat -m "$model" -n 4 --temp 0 > /dev/null 2> "$tmp/err"; rc=$?
check "chat: /save of text that is not UTF-8 warns and writes valid JSON" \
  bash -c "[ $rc -eq 0 ] && grep -q 'saved as U+FFFD' '$tmp/err' && node -e \"JSON.parse(require('fs').readFileSync('$tmp/bad.json','utf8'))\""
mkfifo "$tmp/fifo"
"$cli" chat -m "$model" -n 8 < "$tmp/fifo" > /dev/null 2> "$tmp/err" &
pid=$!
exec 3> "$tmp/fifo"
sleep 1
kill -INT $pid
# A chat that ignores the Ctrl-C (background jobs inherit SIGINT ignored) is failed, not waited for.
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
if kill -9 $pid 2>/dev/null; then wait $pid; rc=999; else wait $pid; rc=$?; fi
exec 3>&-
check "chat: Ctrl-C at the prompt exits cleanly (exit 0)" rc_is $rc 0
# Ctrl-C during a reply stops that reply, not the chat: the next line is still read (a second
# Ctrl-C exits, which the test above covers at the prompt). The reply would otherwise run for ever.
mkfifo "$tmp/fifo_reply"
"$cli" chat -m "$model" -c 256 -n -1 --ignore-eos < "$tmp/fifo_reply" > "$tmp/out" 2> "$tmp/err" &
pid=$!
exec 4> "$tmp/fifo_reply"
echo 'Tell me a story.' >&4
for _ in $(seq 100); do [ -s "$tmp/out" ] && break; sleep 0.1; done
kill -INT $pid
sleep 1
alive=0; kill -0 $pid 2>/dev/null && alive=1
echo '/exit' >&4
exec 4>&-
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
if kill -9 $pid 2>/dev/null; then wait $pid; rc=999; else wait $pid; rc=$?; fi
check "chat: Ctrl-C during a reply stops the reply and the chat goes on to the next line (exit 0)" \
  bash -c "[ $alive -eq 1 ] && [ $rc -eq 0 ] && grep -q ', stopped\]' '$tmp/err'"


# --prompt-cache FILE (llama.cpp's session file): the second run with the same prompt reuses all but
# its last token and prints the same greedy text; a state of another model or a damaged one is refused.
pc=$tmp/prompt.state
story="Once upon a time, there was a little girl named Lily"
"$cli" run -m "$model" -p "$story" -n 24 --temp 0 > "$tmp/plain" 2> /dev/null
"$cli" run -m "$model" -p "$story" -n 24 --temp 0 --prompt-cache "$pc" > "$tmp/first" 2> "$tmp/err"; rc=$?
check "run --prompt-cache FILE (absent): exit 0, FILE written, the same text as without" \
  bash -c "[ $rc -eq 0 ] && [ -s '$pc' ] && cmp -s '$tmp/plain' '$tmp/first' && grep -q 'does not exist; it will be created' '$tmp/err' && grep -q 'prompt cache: saved [0-9]* tokens' '$tmp/err'"
n_prompt=$(sed -n 's/^prompt cache: reused 0 of \([0-9]*\) prompt tokens$/\1/p' "$tmp/err")
"$cli" run -m "$model" -p "$story" -n 24 --temp 0 --prompt-cache "$pc" > "$tmp/second" 2> "$tmp/err"; rc=$?
check "  ... a second run reuses all but the last prompt token (stderr says so)" \
  bash -c "[ $rc -eq 0 ] && [ -n '$n_prompt' ] && grep -q \"^prompt cache: reused $((n_prompt - 1)) of $n_prompt prompt tokens\$\" '$tmp/err'"
check "  ... and prints the same greedy text" cmp -s "$tmp/plain" "$tmp/second"
check "  ... a full match is not written again" bash -c "! grep -q 'prompt cache: saved' '$tmp/err'"
cp "$pc" "$tmp/saved.state"
"$cli" run -m "$model" -p "Once upon a time, there was a dog" -n 4 --temp 0 --prompt-cache "$pc" --prompt-cache-ro \
  > /dev/null 2> "$tmp/err"; rc=$?
check "  ... --prompt-cache-ro reuses the matching prefix and leaves FILE as it was" \
  bash -c "[ $rc -eq 0 ] && grep -q 'prompt cache: reused [1-9][0-9]* of' '$tmp/err' && cmp -s '$pc' '$tmp/saved.state'"
"$cli" run -m "$model" -p "$story" -n 8 --temp 0 --ignore-eos --prompt-cache "$tmp/all.state" --prompt-cache-all \
  > /dev/null 2> "$tmp/err"; rc=$?
check "  ... --prompt-cache-all saves the generated tokens too" \
  bash -c "[ $rc -eq 0 ] && grep -q \"^prompt cache: saved $((n_prompt + 7)) tokens\" '$tmp/err'"
"$cli" run -m "$shared/models/llama-2-tiny-random.gguf" -p "$story" -n 4 --prompt-cache "$pc" > /dev/null 2> "$tmp/err"; rc=$?
check "  ... a state saved from another model -> exit 1 with the reason" \
  bash -c "[ $rc -eq 1 ] && grep -q -- '--prompt-cache .*: state file was saved from another model (hash [0-9a-f]*, this model [0-9a-f]*)' '$tmp/err'"
"$cli" run -m "$model" -p "$story" -n 4 -ctk f32 --prompt-cache "$pc" > /dev/null 2> "$tmp/err"; rc=$?
check "  ... other cache types (-ctk f32) -> exit 1 naming both" \
  bash -c "[ $rc -eq 1 ] && grep -q 'holds a f16/f16 KV cache (K/V) but this session.s is f32/f16' '$tmp/err'"
head -c 1000 "$tmp/saved.state" > "$tmp/cut.state"
"$cli" run -m "$model" -p "$story" -n 4 --prompt-cache "$tmp/cut.state" > /dev/null 2> "$tmp/err"; rc=$?
check "  ... a truncated FILE -> exit 1 naming the offset and what was expected" \
  bash -c "[ $rc -eq 1 ] && grep -q 'truncated at offset [0-9]*: expected .* but the state ends at 1000' '$tmp/err'"
"$cli" run -m "$model" -p "$story" -n 4 -c 8 --prompt-cache "$tmp/saved.state" > /dev/null 2> "$tmp/err"; rc=$?
check "  ... more tokens than -c -> exit 1 naming both" \
  bash -c "[ $rc -eq 1 ] && grep -q \"holds $n_prompt tokens .*context of 8; raise the context size (-c\" '$tmp/err'"
"$cli" run -m "$model" -p "$story" -n 4 --prompt-cache-ro > /dev/null 2> "$tmp/err"; rc=$?
check "  ... --prompt-cache-ro without --prompt-cache -> exit 1" \
  bash -c "[ $rc -eq 1 ] && grep -q 'needs --prompt-cache FILE' '$tmp/err'"

# Structured output (--grammar, -j): what comes out parses; bad grammars and schemas name the problem.
"$cli" run -m "$model" -p "Once upon a time" -n 200 --temp 0.9 --seed 7 \
  -j '{"type":"object","properties":{"name":{"type":"string","maxLength":20},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false}' \
  > "$tmp/out" 2> /dev/null; rc=$?
check "run -j SCHEMA: the output is JSON that validates (python json + the schema's own checks)" \
  bash -c "[ $rc -eq 0 ] && /usr/bin/python3 -c \"import json,sys; d=json.load(open('$tmp/out')); assert set(d)=={'name','age'} and isinstance(d['age'],int) and 0<=d['age']<=120 and len(d['name'])<=20\""
"$cli" run -m "$model" -p "Once" -n 40 --temp 0.8 --seed 3 --grammar 'root ::= ("yes" | "no") " " [a-z]+ "."' > "$tmp/out" 2> /dev/null; rc=$?
check "run --grammar: the output is a sentence of the grammar" bash -c "[ $rc -eq 0 ] && grep -Eqx '(yes|no) [a-z]+\.' '$tmp/out'"
"$cli" run -m "$model" -p x -n 4 --grammar 'root ::= "a' > /dev/null 2> "$tmp/err"; rc=$?
check "run --grammar with an unterminated string -> exit 1 naming line and column" \
  bash -c "[ $rc -eq 1 ] && grep -q -- '--grammar: grammar: line 1, column 10: unterminated string literal' '$tmp/err'"
"$cli" run -m "$model" -p x -n 4 --grammar 'root ::= root "a"' > /dev/null 2> "$tmp/err"; rc=$?
check "run --grammar left-recursive -> exit 1 (never a hang)" bash -c "[ $rc -eq 1 ] && grep -qi 'left.recursi' '$tmp/err'"
"$cli" run -m "$model" -p x -n 4 -j '{"type":"object","propertyNames":{}}' > /dev/null 2> "$tmp/err"; rc=$?
check "run -j with an unsupported keyword -> exit 1 naming it" bash -c "[ $rc -eq 1 ] && grep -q \"unsupported keyword 'propertyNames'\" '$tmp/err'"
"$cli" run -m "$model" -p x -n 4 -j '{}' --grammar 'root ::= "a"' > /dev/null 2> "$tmp/err"; rc=$?
check "run -j and --grammar together -> exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'give one of --grammar' '$tmp/err'"
# Chat templates (issue #20): inspect says which one and whence; --chat-template NAME|FILE overrides it.
"$cli" inspect "$model" > "$tmp/out" 2>&1; rc=$?
check "inspect: a 'chat template:' line (stories260K has none: llama2 guessed from its architecture)" \
  bash -c "[ $rc -eq 0 ] && grep -q '^chat template: llama2 (guessed from general.architecture = llama;' '$tmp/out'"
echo '[{"role": "user", "content": "Hi"}]' > "$tmp/msgs.json"
"$cli" template -m "$model" --messages "$tmp/msgs.json" --add-generation-prompt > "$tmp/out" 2> "$tmp/err"; rc=$?
check "template -m (no template in the file): the guessed llama2, after BOS" \
  bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/out')\" = '<s>[INST] Hi [/INST]' ]"
"$cli" template -m "$model" --chat-template chatml --messages "$tmp/msgs.json" --add-generation-prompt > "$tmp/out" 2> "$tmp/err"; rc=$?
check "template --chat-template chatml: the built-in ChatML" \
  bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/out')\" = \"\$(printf '<s><|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n')\" ]"
printf '{%% for m in messages %%}<<{{ m.content }}>>{%% endfor %%}' > "$tmp/t.jinja"
"$cli" template --chat-template "$tmp/t.jinja" --messages "$tmp/msgs.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "template --chat-template FILE: the file's Jinja" bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$tmp/out')\" = '<<Hi>>' ]"
"$cli" run -m "$model" --chat -p Hi --chat-template nosuch -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "run --chat-template nosuch -> exit 1 listing the built-in names" \
  bash -c "[ $rc -eq 1 ] && grep -q 'nosuch: not a built-in template nor a file' '$tmp/err' && grep -q 'chatml, llama2, llama2-sys' '$tmp/err' && grep -q 'gpt-oss' '$tmp/err'"
"$cli" run -m "$model" --chat -p Hi --chat-template gemma -n 4 --temp 0 > /dev/null 2> "$tmp/err"; rc=$?
check "run --chat --chat-template gemma -> exit 0" rc_is $rc 0
echo hi | "$cli" chat -m "$model" --chat-template llama3 -n 4 --temp 0 > /dev/null 2> "$tmp/err"; rc=$?
check "chat --chat-template llama3: exit 0, the banner names it" \
  bash -c "[ $rc -eq 0 ] && grep -q 'chat template: llama3 (built-in, chosen over the model' '$tmp/err'"
"$cli" logits -m "$model" --chat-template chatml > /dev/null 2> "$tmp/err"; rc=$?
check "logits --chat-template (renders no chat) -> rejected by name" bash -c "[ $rc -eq 1 ] && grep -q \"'--chat-template'\" '$tmp/err'"

"$cli" run -m "$model" -p x -n 1 --chat-template chatml > /dev/null 2> "$tmp/err"; rc=$?
check "run --chat-template without --chat -> exit 1 (not silently ignored)" bash -c "[ $rc -eq 1 ] && grep -q 'give --chat too' '$tmp/err'"
# Tool calls (--tools-file, --tool-choice): with a forced choice a grammar makes the reply a call
# whatever the weights; the reply is printed as one OpenAI assistant message in JSON.
cat > "$tmp/tools.json" <<'JSON'
[{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city",
  "parameters": {"type": "object", "properties": {"location": {"type": "string", "enum": ["Paris", "Tokyo"]}},
  "required": ["location"], "additionalProperties": false}}}]
JSON
# node: the first line of $1 is an assistant message with one get_weather call whose arguments parse.
one_call() {
  node -e '
    const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]);
    const c = m.tool_calls;
    if (m.role !== "assistant" || m.content !== null || c.length !== 1 || c[0].type !== "function" ||
        c[0].function.name !== "get_weather" || !c[0].id) process.exit(1);
    if (!["Paris", "Tokyo"].includes(JSON.parse(c[0].function.arguments).location)) process.exit(1);' "$1"
}
qwen=$shared/templates/Qwen-Qwen2.5-7B-Instruct.jinja
"$cli" run -m "$model" --chat -p "Weather in Paris?" --chat-template "$qwen" -c 2048 --tools-file "$tmp/tools.json" \
  --tool-choice get_weather --no-parallel-tool-calls --temp 0.8 --seed 4 -n 200 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "run --tools-file --tool-choice NAME (Hermes template): one parsed call, finish tool_calls" \
  bash -c "[ $rc -eq 0 ] && grep -q 'finish: tool_calls' '$tmp/err'" && check "  ... the JSON message holds the call" one_call "$tmp/out"
"$cli" run -m "$model" --chat -p "Weather in Paris?" --tools-file "$tmp/tools.json" --tool-choice required \
  --no-parallel-tool-calls --temp 0 -n 200 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "run --tools-file --tool-choice required (no tool template: generic JSON): one parsed call" \
  bash -c "[ $rc -eq 0 ] && grep -q 'finish: tool_calls' '$tmp/err'" && check "  ... the JSON message holds the call" one_call "$tmp/out"
printf 'Weather in Paris?\n/tool call_1 {"temperature": 21}\n' | "$cli" chat -m "$model" --chat-template "$qwen" -c 2048 \
  --tools-file "$tmp/tools.json" --tool-choice required --no-parallel-tool-calls --temp 0 -n 200 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "chat --tools-file: each reply's calls as a JSON line; /tool answers one" \
  bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^{\"tool_calls\":\[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"' '$tmp/out') -eq 2 ]"
"$cli" run -m "$model" -p x --tools-file "$tmp/tools.json" -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "run --tools-file without --chat -> exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'needs --chat' '$tmp/err'"
"$cli" run -m "$model" --chat -p x --tool-choice required -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "run --tool-choice without --tools-file -> exit 1 (not ignored)" bash -c "[ $rc -eq 1 ] && grep -q 'need --tools-file' '$tmp/err'"
"$cli" run -m "$model" --chat -p x --tools-file "$tmp/tools.json" --tool-choice nosuch -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "run --tool-choice NAME not in the tools -> exit 1 naming it" bash -c "[ $rc -eq 1 ] && grep -q \"'nosuch', which is not in tools\" '$tmp/err'"
echo '[{"type": "function", "function": {"description": "no name"}}]' > "$tmp/bad_tools.json"
"$cli" run -m "$model" --chat -p x --tools-file "$tmp/bad_tools.json" -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "run --tools-file with a nameless tool -> exit 1 naming the field" bash -c "[ $rc -eq 1 ] && grep -q 'tools\[0\].function.name' '$tmp/err'"
"$cli" run -m "$model" --chat -p x --tools-file "$tmp/tools.json" --grammar 'root ::= "a"' -n 1 > /dev/null 2> "$tmp/err"; rc=$?
check "run --tools-file with --grammar -> exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'cannot be combined' '$tmp/err'"
# Embeddings and reranking (issue #24): llama-embedding's flags, its output shapes, and the errors.
"$cli" embed -m "$model" -p hello > /dev/null 2> "$tmp/err"; rc=$?
check "embed a generative model without --pooling -> exit 1 naming --pooling" \
  bash -c "[ $rc -eq 1 ] && grep -q -- '--pooling' '$tmp/err'"
"$cli" embed -m "$model" -p $'hello\nworld' --pooling mean --embd-output-format array > "$tmp/out" 2> "$tmp/err"; rc=$?
check "embed --pooling mean --embd-output-format array: two vectors of 64" \
  bash -c "[ $rc -eq 0 ] && python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); sys.exit(0 if len(v)==2 and len(v[0])==64 else 1)' '$tmp/out'"
"$cli" embed -m "$model" -p $'hello\nworld' --pooling last --embd-output-format json+ > "$tmp/out" 2> "$tmp/err"; rc=$?
check "embed --embd-output-format json+: OpenAI's list and the cosine matrix" \
  bash -c "[ $rc -eq 0 ] && python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); sys.exit(0 if v[\"object\"]==\"list\" and len(v[\"cosineSimilarity\"])==2 else 1)' '$tmp/out'"
"$cli" embed -m "$model" -p $'hello\n\nworld' --pooling mean > /dev/null 2> "$tmp/err"; rc=$?
check "embed with an empty input line -> exit 1 naming input 1" bash -c "[ $rc -eq 1 ] && grep -q 'input 1 is empty' '$tmp/err'"
"$cli" embed -m "$model" -p "one two three four five six seven eight nine ten" --pooling mean -c 4 > /dev/null 2> "$tmp/err"; rc=$?
check "embed an input longer than -c -> exit 1 naming both lengths" \
  bash -c "[ $rc -eq 1 ] && grep -q 'tokens, longer than the context of 4 tokens' '$tmp/err'"
"$cli" embed -m "$model" -p hello --pooling avg > /dev/null 2> "$tmp/err"; rc=$?
check "embed --pooling avg -> exit 1 listing the pooling types" bash -c "[ $rc -eq 1 ] && grep -q 'none, mean, cls, last, rank' '$tmp/err'"
"$cli" embed -m "$model" -p hello --pooling mean --embd-output-format yaml > /dev/null 2> "$tmp/err"; rc=$?
check "embed --embd-output-format yaml -> exit 1" bash -c "[ $rc -eq 1 ] && grep -q 'unknown format' '$tmp/err'"
printf 'a\nb\n' > "$tmp/docs.txt"
"$cli" rerank -m "$model" --query q -f "$tmp/docs.txt" > /dev/null 2> "$tmp/err"; rc=$?
check "rerank with a model without a classification head -> exit 1 naming cls" \
  bash -c "[ $rc -eq 1 ] && grep -q 'classification head' '$tmp/err'"
"$cli" rerank -m "$model" -f "$tmp/docs.txt" > /dev/null 2> "$tmp/err"; rc=$?
check "rerank without --query -> exit 1" bash -c "[ $rc -eq 1 ] && grep -q -- '--query' '$tmp/err'"
check "rerank: a synth cross-encoder's scores within 1e-4 of llama.cpp's, best first, in llama.cpp's order" \
  bash tests/embeddings/rerank_cli.sh "$cli"

# Sliding-window layers keep only their window (the zoo's gemma3: a window of 8 on layer 0 of 2):
# `bench -o json` reports fewer KV bytes than with --swa-full, and a generation far past the window
# (prompt batches of 4, 120 tokens, context shifts at -c 96) gives the same ids either way.
swa_model=$shared/zoo/models/gemma3.gguf
if [ -f "$swa_model" ]; then
  kv_bytes() { tr -d ' \n' < "$1" | grep -o '"kv_bytes":[0-9]*' | cut -d: -f2; }
  "$cli" bench -m "$swa_model" -p 0 -n 4 -d 252 -r 1 -t 1 -b 4 -o json > "$tmp/swa.json" 2> "$tmp/err"; rc=$?
  "$cli" bench -m "$swa_model" -p 0 -n 4 -d 252 -r 1 -t 1 -b 4 -o json --swa-full > "$tmp/full.json" 2>> "$tmp/err"
  window=$(kv_bytes "$tmp/swa.json"); full=$(kv_bytes "$tmp/full.json")
  check "bench -o json: kv_bytes of a sliding-window model ($window) below --swa-full's ($full)" \
    bash -c "[ $rc -eq 0 ] && [ -n '$window' ] && [ -n '$full' ] && [ '$window' -lt '$full' ]"
  for flag in "" --swa-full; do
    # shellcheck disable=SC2086 # flag: empty or one word
    "$cli" run -m "$swa_model" -p "$story" -n 120 -c 96 -b 4 --temp 0 --ignore-eos --ids $flag > "$tmp/swa$flag.ids" 2> "$tmp/err"
  done
  check "run far past the window with context shifts: the same ids as --swa-full" \
    bash -c "[ \$(wc -w < '$tmp/swa.ids') -eq 120 ] && cmp -s '$tmp/swa.ids' '$tmp/swa--swa-full.ids'"
fi

check_summary
