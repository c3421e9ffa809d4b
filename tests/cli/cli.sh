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
"$cli" run -m "$model" -r "Lily" --temp 0 -n 64 > "$tmp/out" 2> "$tmp/err"; rc=$?
check "-r TEXT stops generation at TEXT" bash -c "[ $rc -eq 0 ] && ! grep -q 'Lily' '$tmp/out' && grep -q 'finish: stop' '$tmp/err'"

# --help for every command, --version.
for c in run chat logits inspect tokenize template quantize bench synth; do
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
check "chat: a conversation longer than the context drops old turns and goes on" \
  bash -c "[ $rc -eq 0 ] && grep -q 'context full' '$tmp/err' && [ \$(grep -c 'tokens, .* t/s' '$tmp/err') -eq 12 ]"
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

check_summary
