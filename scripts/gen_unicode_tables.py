#!/usr/bin/env python3
"""Generates core/tokenizer/unicode_tables.cpp from the Unicode Character Database.

Reads Debian's unicode-data files (default /usr/share/unicode; installed by scripts/setup):
  UnicodeData.txt  general category, simple lower-case mapping, canonical decompositions
  PropList.txt     White_Space
and writes compact range tables (see core/tokenizer/unicode.h for how they are read).
Rerunnable: the output depends only on the input files.

usage: scripts/gen_unicode_tables.py [--ucd DIR] [--out FILE]
"""
import argparse
import os
import sys

# Order must match ox::tok::GeneralCategory in core/tokenizer/unicode.h.
CATEGORIES = ["Cn", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No",
              "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So",
              "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co"]
MAX_CP = 0x110000
WHITESPACE_BIT = 0x80

# Hangul syllables decompose algorithmically (Unicode ch. 3.12), not through UnicodeData.txt.
HANGUL_S_BASE, HANGUL_L_BASE, HANGUL_N_COUNT, HANGUL_S_COUNT = 0xAC00, 0x1100, 588, 11172


def read_unicode_data(path):
    """Returns (category per code point, simple lowercase map, canonical decomposition map)."""
    cat = [0] * MAX_CP  # Cn
    lower = {}
    decomp = {}
    range_start = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(";")
            if len(fields) < 15:
                continue
            cp = int(fields[0], 16)
            name, gc = fields[1], fields[2]
            code = CATEGORIES.index(gc)
            if name.endswith(", First>"):
                range_start = cp
                continue
            if name.endswith(", Last>"):
                for c in range(range_start, cp + 1):
                    cat[c] = code
                range_start = None
                continue
            cat[cp] = code
            if fields[13]:
                lower[cp] = int(fields[13], 16)
            d = fields[5]
            if d and not d.startswith("<"):
                decomp[cp] = [int(x, 16) for x in d.split()]
    return cat, lower, decomp


def read_white_space(path):
    ws = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            rng, prop = [x.strip() for x in line.split(";")]
            if prop != "White_Space":
                continue
            if ".." in rng:
                a, b = [int(x, 16) for x in rng.split("..")]
            else:
                a = b = int(rng, 16)
            ws.update(range(a, b + 1))
    return ws


def nfd_first(cp, decomp):
    """First code point of the full canonical decomposition (NFD) of cp."""
    if HANGUL_S_BASE <= cp < HANGUL_S_BASE + HANGUL_S_COUNT:
        return HANGUL_L_BASE + (cp - HANGUL_S_BASE) // HANGUL_N_COUNT
    while cp in decomp:
        cp = decomp[cp][0]
    return cp


def emit_array(out, ctype, name, values, per_line=12):
    out.append("extern const %s %s[] = {" % (ctype, name))
    for i in range(0, len(values), per_line):
        out.append("    " + ", ".join(values[i:i + per_line]) + ",")
    out.append("};")
    out.append("extern const uint32_t %s_count = %d;" % (name, len(values)))
    out.append("")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ucd", default="/usr/share/unicode")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "core", "tokenizer", "unicode_tables.cpp"))
    args = ap.parse_args()

    ucd_readme = os.path.join(args.ucd, "ReadMe.txt")
    version = "unknown"
    if os.path.exists(ucd_readme):
        with open(ucd_readme, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# Date:"):
                    version = line[len("# Date:"):].strip()
                    break

    cat, lower, decomp = read_unicode_data(os.path.join(args.ucd, "UnicodeData.txt"))
    ws = read_white_space(os.path.join(args.ucd, "PropList.txt"))

    # Category + whitespace: one byte per run of equal values, indexed by the run's first code point.
    starts, values = [], []
    prev = None
    for cp in range(MAX_CP):
        v = cat[cp] | (WHITESPACE_BIT if cp in ws else 0)
        if v != prev:
            starts.append(cp)
            values.append(v)
            prev = v

    lower_pairs = sorted((cp, lc) for cp, lc in lower.items() if lc != cp)

    # NFD first code point, as runs (first, last, value) of consecutive code points with the same value.
    nfd_runs = []
    for cp in range(MAX_CP):
        first = nfd_first(cp, decomp)
        if first == cp:
            continue
        if nfd_runs and nfd_runs[-1][1] == cp - 1 and nfd_runs[-1][2] == first:
            nfd_runs[-1][1] = cp
        else:
            nfd_runs.append([cp, cp, first])

    out = [
        "// GENERATED by scripts/gen_unicode_tables.py from the Unicode Character Database (UCD date: %s)."
        % version,
        "// Do not edit by hand: rerun the script. Layout is documented in core/tokenizer/unicode.h.",
        "#include <cstdint>",
        "",
        "namespace ox::tok::tables {",
        "",
        "// Runs of equal (general category | 0x80 if White_Space); run k covers [starts[k], starts[k+1]).",
    ]
    emit_array(out, "uint32_t", "kCategoryRunStarts", ["0x%X" % s for s in starts])
    emit_array(out, "uint8_t", "kCategoryRunValues", ["%d" % v for v in values], per_line=24)
    out.append("// Simple lower-case mapping (UnicodeData field 13): pairs (code point, lower case), sorted.")
    emit_array(out, "uint32_t", "kLowercasePairs", ["0x%X, 0x%X" % p for p in lower_pairs], per_line=6)
    out.append("// First code point of the canonical decomposition (NFD): triples (first, last, value), sorted.")
    emit_array(out, "uint32_t", "kNfdFirstRuns", ["0x%X, 0x%X, 0x%X" % tuple(r) for r in nfd_runs], per_line=4)
    out.append("}  // namespace ox::tok::tables")
    out.append("")

    # Counts above are numbers of emitted elements; pairs/triples are counted in elements of the pair.
    text = "\n".join(out)
    text = text.replace("kLowercasePairs_count = %d;" % len(lower_pairs),
                        "kLowercasePairs_count = %d;  // pairs" % len(lower_pairs))
    text = text.replace("kNfdFirstRuns_count = %d;" % len(nfd_runs),
                        "kNfdFirstRuns_count = %d;  // triples" % len(nfd_runs))
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s: %d category runs, %d lower-case pairs, %d NFD runs"
          % (os.path.normpath(args.out), len(starts), len(lower_pairs), len(nfd_runs)), file=sys.stderr)


if __name__ == "__main__":
    main()
