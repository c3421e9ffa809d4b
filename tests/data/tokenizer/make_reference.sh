#!/usr/bin/env bash
# Tokenizer references for hard text: writes hard_cases.inp (the texts below, in llama.cpp's
# test-tokenizer-0 format) and hard_cases.NAME.out (llama.cpp's ids for each, from tokenize_ref.cpp
# built here against llama.cpp's libllama) for the WordPiece (bert-bge) and Unigram
# (nomic-bert-moe) vocabularies in ../shared/vocab. tests/core/tokenizer/hard_cases_test.cpp checks
# oxidize against them.
# Usage: tests/data/tokenizer/make_reference.sh   (needs llama.cpp built by bench/build_llama_cpp.sh)
set -euo pipefail
cd "$(dirname "$0")/../../.."
llama=${LLAMA_CPP:-build/llama.cpp}
[ -d "$llama/build/bin" ] || llama=/work/main/build/llama.cpp  # a worktree without its own build
bin=$llama/build/bin
here=tests/data/tokenizer
shared=${OXIDIZE_SHARED:-../shared}
vocabs=(bert-bge nomic-bert-moe)
[ -f "$bin/libllama.so" ] || { echo "no $bin/libllama.so" >&2; exit 1; }
version=$(git -C $llama/src describe --tags --always 2>/dev/null || echo unknown)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O1 -std=c++17 -I$llama/src/include -I$llama/src/ggml/include $here/tokenize_ref.cpp -L$bin -lllama -lggml \
  -lggml-base -Wl,-rpath,"$(cd $bin && pwd)" -o "$tmp/tokenize_ref"

# The texts, as Python bytes/str literals (escapes keep invisible characters visible here).
python3 - "$here/hard_cases.inp" <<'PY'
import sys
cases = [
    # Devanagari: vowel signs (Mc/Mn), anusvara, chandrabindu, virama, conjuncts
    "मैं हिंदी बोलता हूँ",
    "नमस्ते दुनिया क्षत्रिय प्रार्थना",
    "आमि बाংलाय़ गान गाइ",
    "আমি বাংলায় গান গাই",
    "தமிழ் மொழி",
    # Thai (above/below vowels are Mn), Lao
    "สวัสดีครับ ภาษาไทยง่ายนิดเดียว",
    # Arabic with harakat, superscript alef, tatweel; Hebrew with niqqud
    "بِسْمِ ٱللَّٰهِ ٱلرَّحْمَٰنِ ٱلرَّحِيمِ",
    "العـــربية ١٢٣ ؟،",
    "שָׁלוֹם עוֹלָם",
    # Latin accents, NFC and NFD; stacked combining marks; special casing
    "Café naïve résumé Ångström Œuvre São Paulo Kraków Zoë",
    "Cafe\u0301 nai\u0308ve re\u0301sume\u0301 A\u030angstro\u0308m",
    "Z\u0351\u036b\u0343\u036a\u0302a\u0310\u0357l\u0352g\u0311o\u0489\u20dd",
    "İstanbul ıi DŽ ǅ ǆ ΣΑΣ ς ß ẞ Ⅻ ⓐⒶ ﬁ",
    "Ελληνικά ά ὰ ᾳ Tiếng Việt có dấu й и\u0306 ё",
    # Korean syllables and conjoining jamo; Japanese with combining (han)dakuten
    "안녕하세요 세계! 한국어 텍스트",
    "\u1100\u1161\u11a8 \u1112\u1161\u11ab",
    "か\u3099き\u3099 は\u309a ガギ パ",
    # CJK mixed with Latin, fullwidth forms, CJK punctuation
    "我爱Python编程和machine learning。東京タワーは333m！",
    "ＨＥＬＬＯ　ｗｏｒｌｄ！ １２３ 「引用」、『書名』",
    "𠀀𠀁𪜀 𫝀 𬺰",
    # Emoji: ZWJ sequences, variation selectors, skin tones, keycaps, flags, tags
    "👨\u200d👩\u200d👧\u200d👦 ❤\ufe0f 👍🏽 🏳\ufe0f\u200d🌈 ☕\ufe0e 1\ufe0f\u20e3 🇯🇵 🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "hello👋world 🤖robot🚀",
    # Punctuation and symbol runs, ASCII and not
    "Hello!!! What?!... (test) [x] {y} <z> \"q\" 'a' `b` ~@#$%^&*_+-=|\\/",
    "«quote» „German“ — dash – ‘single’ … ¿Qué? ¡Hola! ‰ † ‡ • ¶ §",
    "© ® ™ € £ ¥ ° ± × ÷ → ∑ √ ∞ ≠ ≤ ½ ² ³",
    "don't can't it's e-mail co-op U.S.A. 3.14159 1,000,000 2024-01-01 v1.2.3 a_b",
    "[CLS] hello [SEP] [MASK] [UNK] [PAD] <s> </s> <unk>",
    "\u2581hello \u2581 \u2581\u2581x ##ing ##",
    # Control and format characters, NUL, soft hyphen, zero-width characters, BOM
    "a\x01b\x07c\x1bd\x7fe\x85f\u200bg\u200ch\u200di\ufeffj\u00adk\u2060l\u200em\u202an",
    "ab\x00cd\x00 \x00",
    "\ufffd x \ufffd\ufffd y\ufffdz",
    # Whitespace variants
    "a\u00a0b\u2003c\u3000d\u2028e\u2029f\tg\rh\x0bi\x0cj\u1680k\u202fl\u205fm",
    "  leading and trailing  ",
    "\n\n\n",
    " ",
    "",
    "line one\nline two\r\n\tindented",
    # Long words: past the longest token, all-unknown, unknown at the very end
    "a" * 150,
    "pneumonoultramicroscopicsilicovolcanoconiosis " * 3,
    "supercalifragilisticexpialidocious" * 5 + "☃",
    "ꙮ" * 120,
    "antidisestablishmentarianism" * 4 + " short",
    "𝐇𝐞𝐥𝐥𝐨 𝕎𝕠𝕣𝕝𝕕 ℌ𝔢𝔩𝔩𝔬",
]
raw = [
    # Bad UTF-8: stray bytes, truncated sequences, overlong, surrogate, 5-byte lead. (A 4-byte
    # sequence past U+10FFFF, e.g. F4 90 80 80, is left out: llama.cpp's WordPiece aborts on it.)
    b"\xff\xfe abc \xc3( \xe2\x82 end",
    b"\xc0\xaf \xed\xa0\x80 \xf8\x88\x80\x80\x80 ok",
]
data = [c.encode("utf-8") for c in cases] + raw
with open(sys.argv[1], "wb") as f:
    for d in data:
        f.write(d + b"\n__ggml_vocab_test__\n")
PY

for v in "${vocabs[@]}"; do
  "$tmp/tokenize_ref" "$shared/vocab/ggml-vocab-$v.gguf" "$here/hard_cases.inp" > "$here/hard_cases.$v.out"
  echo "$v: $(wc -l < "$here/hard_cases.$v.out") cases (llama.cpp $version)"
done
# bert-bge under other BertNormalizer / special-token settings, as metadata overrides. Each output is
# named after its settings: hard_cases.bert-bge[.special].KEY-VALUE....out, KEY without its
# "tokenizer.ggml." prefix.
variants=(
  "tokenizer.ggml.normalizer.lowercase=false"
  "tokenizer.ggml.normalizer.strip_accents=false"
  "tokenizer.ggml.normalizer.lowercase=false tokenizer.ggml.normalizer.strip_accents=true"
  "--special"
  "--special tokenizer.ggml.add_bos_token=false tokenizer.ggml.add_sep_token=false"
)
for args in "${variants[@]}"; do
  name=$(echo "$args" | sed -e 's/--special/special/' -e 's/tokenizer\.ggml\.//g' -e 's/=/-/g' -e 's/ /./g')
  # shellcheck disable=SC2086
  "$tmp/tokenize_ref" "$shared/vocab/ggml-vocab-bert-bge.gguf" "$here/hard_cases.inp" $args > "$here/hard_cases.bert-bge.$name.out"
  echo "bert-bge $args: hard_cases.bert-bge.$name.out"
done
echo "llama.cpp $version" > "$here/hard_cases.version"
