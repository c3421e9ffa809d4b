# Sourced by the make_reference.sh scripts (run from the repository root): build_greedy_ref LLAMA OUT
# compiles greedy_ref.cpp against the libllama that bench/build_llama_cpp.sh built in LLAMA.
build_greedy_ref() {
  local llama=$1 out=$2 bin=$1/build/bin
  g++ -O1 -std=c++17 -I"$llama/src/include" -I"$llama/src/ggml/include" tests/data/format_parity/greedy_ref.cpp \
    -L"$bin" -lllama -lggml -lggml-base -Wl,-rpath,"$PWD/$bin" -o "$out"
}
