# Sourced by the CLI test scripts: the shared model path, a temporary folder removed on exit, and
# check NAME COMMAND... which counts and prints one result line; check_summary ends the script with
# "N passed, N failed" and its exit status.
shared=${OXIDIZE_SHARED:-../shared}
model=$shared/models/stories260K.gguf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}
check_summary() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
