# Writes the relaxed decode bodies of Q2_K and Q3_K, q2_k_pairs.wat and q3_k_pairs.wat, which share
# their loop, their activation reads and their float steps and differ in how a sub-block's weights
# and scales are read (planes_* below). The four 64-element steps of a half super-block are
# written out, the two halves a loop. And those of the interleaved layouts (core/quant/interleave.h)
# that the relaxed module decodes instead, q2_k_il_pairs.wat and q3_k_il_pairs.wat (il_body_*):
# the four 16-byte quant vectors of a block written out, no inner loop.
#   python3 kernels/simd128/relaxed/gen_q2_q3_pairs.py kernels/simd128/relaxed
import os
import sys


def L(x):
    return f"(local.get ${x})"


# Where relaxed_constants (relaxed_slots.cpp) keeps each constant these bodies read, by the offset
# they were written against: Q2_K's / Q3_K's own at 384..496, the rest shared with the other bodies
# (the nibble mask at 0, 0x10 at 288, 0x30 at 32; fp16x4_to_f32's and the lane swizzles at 48..240).
SHARED = {0: 384, 16: 400, 32: 416, 256: 432, 272: 0, 288: 448, 304: 288, 320: 464, 336: 480, 352: 32,
          368: 496}


def K(offset):
    """a constant of relaxed_constants (relaxed_slots.cpp), read where it is used"""
    return f"(v128.load offset={SHARED.get(offset, offset)} {L('k')})"


def pick(j):
    """swizzle indices copying i16 lane j into every lane"""
    return K(128 + 16 * j)


def fp16x4(h):
    """fp16x4_to_f32 (util.h) of the i32x4 local h: no subnormal float operand"""
    return f"""(v128.or
                  (v128.or
                    (f32x4.sub
                      (i32x4.add
                        (i32x4.add (i32x4.shr_u (i32x4.shl {L(h)} (i32.const 17)) (i32.const 4)) {K(48)})
                        (v128.and (local.tee $tiny (i32x4.eq (local.tee $ex (v128.and {L(h)} {K(80)}))
                                                             (v128.const i32x4 0 0 0 0)))
                                  {K(64)}))
                      (v128.and {L('tiny')} {K(112)}))
                    (v128.and (i32x4.eq {L('ex')} {K(80)}) {K(96)}))
                  (i32x4.shl (i32x4.shr_u {L(h)} (i32.const 15)) (i32.const 31)))"""


def acc_dot(r, a, u, s, j):
    """dot{r} += (a . u in i16 pairs) . (i16 lane j of s in every lane)"""
    return (f"(local.set $dot{r} (i32x4.add {L(f'dot{r}')} (i32x4.dot_i16x8_s\n"
            f"                (i16x8.dot_i8x16_i7x16_s {L(a)} {u})\n"
            f"                (i8x16.relaxed_swizzle {L(s)} {pick(j)}))))")


def planes_q2(r, h, t):
    """Q2_K, row r, bytes qs[32h + 16t ..]: planes 0 and 2 as 0..3, 1 and 3 as 4 * (0..3) (the mask
    of the bits in place); the scales of planes 0 and 2 are taken 4x to match (scales_q2)"""
    x = f"q{r}"
    out = [f"(local.set $v (v128.load offset={16 + 16 * t} align=1 {L(x)}))",
           f"(local.set $v4 (i16x8.shr_u {L('v')} (i32.const 4)))"]
    u = [f"(v128.and {L('v')} {K(0)})", f"(v128.and {L('v')} {K(16)})",
         f"(v128.and {L('v4')} {K(0)})", f"(v128.and {L('v4')} {K(16)})"]
    for j in range(4):
        out.append(acc_dot(r, f"a{j}", u[j], f"s{r}", 2 * j + t))
    return out


def planes_q3(r, h, t):
    """Q3_K, row r, bytes qs[32h + 16t ..] and hmask[16t ..] (bits 4h + j): u = low2 | hbit << 2 with
    planes 0 and 2 in place at bits 0-2 (1x), 1 and 3 at bits 2-4 (4x); scales_q3 takes the
    scales of planes 0 and 2 4x to match. Every shift is by bytes of i16 lanes; the masks keep only
    bits that come from the same byte."""
    out = [f"(local.set $v (v128.load offset={32 + 16 * t} align=1 {L(f'q{r}')}))",
           f"(local.set $v4 (i16x8.shr_u {L('v')} (i32.const 4)))",
           f"(local.set $hb (i16x8.shr_u (v128.load offset={16 * t} align=1 {L(f'x{r}')}) {L('hs')}))"]
    u = [f"(v128.or (v128.and {L('v')} {K(0)}) (v128.and (i16x8.shl {L('hb')} (i32.const 2)) {K(288)}))",
         f"(v128.or (v128.and {L('v')} {K(16)}) (v128.and (i16x8.shl {L('hb')} (i32.const 3)) {K(304)}))",
         f"(v128.or (v128.and {L('v4')} {K(0)}) (v128.and {L('hb')} {K(288)}))",
         f"(v128.or (v128.and {L('v4')} {K(16)}) (v128.and (i16x8.shl {L('hb')} (i32.const 1)) {K(304)}))"]
    for j in range(4):
        out.append(acc_dot(r, f"a{j}", u[j], f"s{r}", 2 * j + t))
    return out


def scales_q2(r):
    """row r's scales as bytes sc{r}, scale k 4x where k % 4 < 2; the sum starts at 0"""
    x = f"x{r}"
    return [f"(local.set $p (v128.load align=1 {L(x)}))",
            f"(local.set $sc{r} (v128.or (v128.and (i16x8.shl {L('p')} (i32.const 2)) {K(32)}) (v128.and {L('p')} {K(256)})))",
            f"(local.set $dot{r} (v128.const i32x4 0 0 0 0))"]


def mins_q2(r):
    """row r's min term min{r} (read after the loop, so that it is not live through it)"""
    x = f"x{r}"
    return [f"(local.set $t (v128.and (i16x8.shr_u (v128.load align=1 {L(x)}) (i32.const 4)) {K(272)}))",
            f"(local.set $min{r} (i32x4.add (i32x4.dot_i16x8_s {L('b0')} (i16x8.extend_low_i8x16_u {L('t')}))\n"
            f"                                  (i32x4.dot_i16x8_s {L('b1')} (i16x8.extend_high_i8x16_u {L('t')}))))"]


def half_scales_q2(r):
    return [f"(local.set $s{r} (i16x8.extend_low_i8x16_u {L(f'sc{r}')}))"]


def scales_q3(r):
    """row r's 16 scales (q3_k_scales in util.h) as bytes sc{r}, and the sum's start: the bias
    4 * sum_k sc_k * bsums_k, 4x as the sum (which the shift down 2 at the end brings to 1x), negated.
    The 16 bytes at 94 (qs[62..63], scales a0 | a1 | a2, d) stay inside the block: the low nibbles of
    a0, a1 then their high nibbles; the two bits of a2's bytes for byte group g moved to bits 6-7 by
    an i16 multiply by 2^(6 - 2g), then down to 4-5."""
    x = f"x{r}"
    return [f"(local.set $p (v128.load offset=94 align=1 {L(x)}))",
            f"(local.set $sc{r} (i8x16.sub (v128.or\n"
            f"              (v128.and (i8x16.shuffle 2 3 4 5 6 7 8 9 18 19 20 21 22 23 24 25 {L('p')} (i16x8.shr_u {L('p')} (i32.const 4)))\n"
            f"                        {K(272)})\n"
            f"              (v128.and (i16x8.shr_u (i16x8.mul (i8x16.shuffle 10 11 12 13 10 11 12 13 10 11 12 13 10 11 12 13 {L('p')} {L('p')})\n"
            f"                                                {K(336)}) (i32.const 2))\n"
            f"                        {K(352)}))\n"
            f"              {K(368)}))",
            f"(local.set $dot{r} (i32x4.sub (v128.const i32x4 0 0 0 0) (i32x4.shl (i32x4.add\n"
            f"              (i32x4.dot_i16x8_s {L('b0')} (i16x8.extend_low_i8x16_s {L(f'sc{r}')}))\n"
            f"              (i32x4.dot_i16x8_s {L('b1')} (i16x8.extend_high_i8x16_s {L(f'sc{r}')}))) (i32.const 4))))"]


def half_scales_q3(r):
    return [f"(local.set $s{r} (i16x8.mul (i16x8.extend_low_i8x16_s {L(f'sc{r}')}) {K(320)}))"]


def finish_q2():
    """[row 0 sum, row 0 min term, row 1 sum, row 1 min term] (hsum4x4_i32), times [d0, dmin0, d1, dmin1] * y.d"""
    return f"""(local.set $ab (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 {L('dot0')} {L('min0')})
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 {L('dot0')} {L('min0')})))
            (local.set $cd (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 {L('dot1')} {L('min1')})
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 {L('dot1')} {L('min1')})))
            (local.set $hd (i32x4.extend_low_i16x8_u
              (v128.load32_lane offset=80 align=1 1 {L('x1')} (v128.load32_zero offset=80 align=1 {L('x0')}))))
            (local.set $acc (f32x4.add {L('acc')} (f32x4.mul
              (f32x4.convert_i32x4_s (i32x4.add
                (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 {L('ab')} {L('cd')})
                (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 {L('ab')} {L('cd')})))
              (f32x4.mul
                {fp16x4('hd')}
                (f32x4.splat (f32.load align=1 {L('yb')}))))))"""


def finish_q3():
    """[row 0 total, row 1 total] in lanes 0 and 1, times [d0, d1] * y.d"""
    return f"""(local.set $ab (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 {L('dot0')} {L('dot1')})
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 {L('dot0')} {L('dot1')})))
            (local.set $hd (v128.load16_lane offset=108 align=1 2 {L('x1')}
              (v128.load16_lane offset=108 align=1 0 {L('x0')} (v128.const i32x4 0 0 0 0))))
            (local.set $acc (f32x4.add {L('acc')} (f32x4.mul
              (f32x4.convert_i32x4_s (i32x4.add {L('ab')} (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 {L('ab')} {L('ab')})))
              (f32x4.mul
                {fp16x4('hd')}
                (f32x4.splat (f32.load align=1 {L('yb')}))))))"""


HEADERS = {
    'q2_k': """;; Q2_K x Q8_K decode of row pairs with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s, written by
;; kernels/simd128/relaxed/gen_q2_q3_pairs.py. Spliced in place of ox_simd128_q2_k_pairs
;; (relaxed_slots.cpp; kernels/simd128/relaxed_slots.h for the contract); wabt 1.0.32 spells the
;; instruction i16x8.dot_i8x16_i7x16_s.
;;
;; Same bits as the C++ body (kquant::rows2_q2_k in rows2_q2_q3.h): its integer sums are exact and
;; so are these, and the float steps are the same instructions in the same order. The 2-bit quants
;; are the i7 operand, planes 1 and 3 (bits 2-3 of their byte) kept in place as 4 * q (at most 12)
;; and planes 0 and 2 as q, whose scales are taken 4x instead, so every sub-block's term is 4x and
;; the sum is shifted down by 2 (exactly) at the end of each block. A relaxed-dot lane holds two
;; products (at most 2 * 12 * 128), a dot_i16x8 lane at most 2 * 3072 * 60.
;;
;; Block layout (84 bytes): scales[16] at 0 (low nibble the scale of sub-block k, high nibble its
;; min), qs[64] at 16 (byte l of qs[32h + 16t ..] holds elements 128h + 32j + 16t + l at bits 2j..2j+1:
;; sub-block 8h + 2j + t), d, dmin (fp16) at 80, 82.""",
    'q3_k': """;; Q3_K x Q8_K decode of row pairs with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s, written by
;; kernels/simd128/relaxed/gen_q2_q3_pairs.py. Spliced in place of ox_simd128_q3_k_pairs
;; (relaxed_slots.cpp; kernels/simd128/relaxed_slots.h for the contract); wabt 1.0.32 spells the
;; instruction i16x8.dot_i8x16_i7x16_s.
;;
;; Same bits as the C++ body (kquant::rows2_q3_k in rows2_q2_q3.h): its integer sums are exact and
;; so are these, and the float steps are the same instructions in the same order. The weight is
;; u = low2 | hbit << 2 (0..7), q = u - 4, the -4 taken off as 4 * sum_k sc_k * bsums_k (llama.cpp's
;; bsums); u is the i7 operand, planes 1 and 3 built in place as 4 * u (at most 28) and planes 0
;; and 2 as u, whose scales are taken 4x instead, so every sub-block's term is 4x and the sum is
;; shifted down by 2 (exactly) before the bias comes off. A relaxed-dot lane holds two products (at
;; most 2 * 28 * 128), a dot_i16x8 lane at most 2 * 7168 * 128.
;;
;; Block layout (110 bytes): hmask[32] at 0 (hmask[16t + l] bit 4h + j: the high bit of element
;; 128h + 32j + 16t + l), qs[64] at 32 (as Q2_K's), 16 6-bit scales packed in 12 bytes at 96
;; (q3_k_scales in util.h; scale - 32), d (fp16) at 108.""",
}


def body(fmt):
    q2 = fmt == 'q2_k'
    block = 84 if q2 else 110
    planes = planes_q2 if q2 else planes_q3
    scales = scales_q2 if q2 else scales_q3
    half_scales = half_scales_q2 if q2 else half_scales_q3
    inner = []
    if not q2:
        inner += [f"(local.set $b0 (v128.load offset=260 align=1 {L('yb')}))",
                  f"(local.set $b1 (v128.load offset=276 align=1 {L('yb')}))"]
    inner += scales(0) + scales(1)
    # The halves h as a loop (pointers $q0, $q1 at x + 32h, $ap at yb + 128h, hmask shifted by $hs = 4h):
    # written out, the two halves make one block in which V8's scheduler lengthens the live ranges
    # until it spills (Q3_K ran slower than V8's baseline compiler).
    inner += [f"(local.set $q0 {L('x0')})", f"(local.set $q1 {L('x1')})", f"(local.set $ap {L('yb')})",
              "(local.set $hs (i32.const 0))", "(loop $halves"]
    body = half_scales(0) + half_scales(1)
    for t in range(2):
        body.append(f";; elements 128h + 32j + {16 * t}..: sub-blocks 8h + {t} + 2j")
        for j in range(4):
            body.append(f"(local.set $a{j} (v128.load offset={4 + 32 * j + 16 * t} align=1 {L('ap')}))")
        body += planes(0, None, t) + planes(1, None, t)
    body += [f"(local.set $sc{r} (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 {L(f'sc{r}')} {L(f'sc{r}')}))"
             for r in range(2)]
    body += [f"(local.set $q0 (i32.add {L('q0')} (i32.const 32)))", f"(local.set $q1 (i32.add {L('q1')} (i32.const 32)))",
             f"(local.set $ap (i32.add {L('ap')} (i32.const 128)))",
             f"(br_if $halves (i32.eq (local.tee $hs (i32.add {L('hs')} (i32.const 4))) (i32.const 4))))"]
    inner += ["  " + line for line in body]
    inner += ["(local.set $dot0 (i32x4.shr_s (local.get $dot0) (i32.const 2)))",
              "(local.set $dot1 (i32x4.shr_s (local.get $dot1) (i32.const 2)))"]
    if q2:
        inner += [f"(local.set $b0 (v128.load offset=260 align=1 {L('yb')}))",
                  f"(local.set $b1 (v128.load offset=276 align=1 {L('yb')}))"] + mins_q2(0) + mins_q2(1)
    inner.append(finish_q2() if q2 else finish_q3())
    return module(HEADERS[fmt], f"{fmt}_pairs", q2, block, inner, act_param="act",
                  act_doc="""  ;; nb super-blocks per row; rows r and r + pairs (r < pairs) of the matrix at w with rows
  ;; w_stride bytes apart; y the token's Q8_K blocks (292 bytes: f32 d, qs[256] at 4, bsums[16] at
  ;; 260); k the table relaxed_constants (relaxed_slots.cpp); out[r] and out[r + pairs] receive the
  ;; dots. `act` (the split activations of the C++ body) is not read.""",
                  locals_="""    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $end i32)
    (local $q0 i32) (local $q1 i32) (local $ap i32) (local $hs i32)
    (local $acc v128) (local $dot0 v128) (local $dot1 v128) (local $min0 v128) (local $min1 v128)
    (local $sc0 v128) (local $sc1 v128) (local $s0 v128) (local $s1 v128) (local $b0 v128) (local $b1 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $v v128) (local $v4 v128)
    (local $hb v128) (local $p v128) (local $t v128) (local $ab v128) (local $cd v128) (local $hd v128)
    (local $ex v128) (local $tiny v128)""")


def module(header, name, q2, block, inner, act_param, act_doc, locals_, y_il=False):
    """the module around a body: the loop over row pairs and blocks (pointers x0, x1 and yb, and
    yi into y_il where the body reads it), the stores of the two rows' dots"""
    ind = "            "
    inner_text = "\n".join(ind + line for line in inner)
    yi_init = "\n        (local.set $yi (local.get $y_il))" if y_il else ""
    yi_step = "\n            (local.set $yi (i32.add (local.get $yi) (i32.const 292)))" if y_il else ""
    if q2:
        store = """        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.sub (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32.sub (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))"""
    else:
        store = """        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32x4.extract_lane 0 (local.get $acc)))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32x4.extract_lane 1 (local.get $acc)))"""
    return f"""{header}
(module
  (import "env" "memory" (memory 1 65536 shared))
{act_doc}
  (func (export "{name}")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32)
    (param ${act_param} i32) (param $k i32) (param $out i32)
{locals_}
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $rows
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $w) (i32.mul (i32.add (local.get $r) (local.get $pairs)) (local.get $w_stride))))
        (local.set $yb (local.get $y)){yi_init}
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const {block}))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
{inner_text}
            (local.set $x0 (i32.add (local.get $x0) (i32.const {block})))
            (local.set $x1 (i32.add (local.get $x1) (i32.const {block})))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292))){yi_step}
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
{store}
        (br_if $rows (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
"""



# The interleaved layout Q2_K_IL (core/quant/interleave.h): qs vector b (bytes 16b.. of qs) at bits
# 2j..2j+1 of byte 2m + e holds element 2p + e of sub-block 8g + m, g = j & 1, p = 2b + (j >> 1), and
# the activations y_il vector 8g + p the same elements of y. Planes 0 and 2 of every vector are
# sub-blocks 0..7, planes 1 and 3 (masked in place, 4x) 8..15, so each group's eight products sum in
# i16 (at most 8 * 2 * 3 * 128 and, 4x, 4 * that) and meet its eight scales in one i32x4.dot_i16x8_s.
def il_body_q2():
    out = []
    for r in range(2):
        out += [f"(local.set $p{r} (v128.and (v128.load align=1 {L(f'x{r}')}) {K(272)}))"]
    for b in range(4):
        out.append(f";; qs[{16 * b}..{16 * b + 15}]: sub-blocks 0..7 and 8..15, elements {4 * b}..{4 * b + 3}")
        for n, v in enumerate((2 * b, 2 * b + 1, 8 + 2 * b, 9 + 2 * b)):
            out.append(f"(local.set $a{n} (v128.load offset={4 + 16 * v} align=1 {L('yi')}))")
        for r in range(2):
            out += [f"(local.set $v (v128.load offset={16 + 16 * b} align=1 {L(f'x{r}')}))",
                    f"(local.set $v4 (i16x8.shr_u {L('v')} (i32.const 4)))"]
            terms = {'e': [("a0", f"(v128.and {L('v')} {K(0)})"), ("a1", f"(v128.and {L('v4')} {K(0)})")],
                     'o': [("a2", f"(v128.and {L('v')} {K(16)})"), ("a3", f"(v128.and {L('v4')} {K(16)})")]}
            for acc, ts in terms.items():
                prods = [f"(i16x8.dot_i8x16_i7x16_s {L(a)} {u})" for a, u in ts]
                s_ = f"(i16x8.add {prods[0]}\n                 {prods[1]})"
                if b > 0:
                    s_ = f"(i16x8.add {L(f'{acc}{r}')} {s_})"
                out.append(f"(local.set ${acc}{r} {s_})")
    for r in range(2):
        out.append(f"(local.set $dot{r} (i32x4.add\n"
                   f"              (i32x4.dot_i16x8_s {L(f'e{r}')} (i16x8.extend_low_i8x16_u {L(f'p{r}')}))\n"
                   f"              (i32x4.dot_i16x8_s (i16x8.shr_s {L(f'o{r}')} (i32.const 2)) (i16x8.extend_high_i8x16_u {L(f'p{r}')}))))")
    out += [f"(local.set $b0 (v128.load offset=260 align=1 {L('yb')}))",
            f"(local.set $b1 (v128.load offset=276 align=1 {L('yb')}))"] + mins_q2(0) + mins_q2(1)
    out.append(finish_q2())
    return out


# Q3_K_IL: qs as Q2_K_IL's and the high bit of plane j of qs vector b at bit 4 (b / 2) + j of hmask
# vector b % 2, so u = low2 | hbit << 2 is built as in planes_q3 (hmask shifted by 4 (b / 2)). Group
# 0 sums at most 8 * 2 * 7 * 128 in i16; group 1 (4x) sums vectors 0..1 and 2..3 apart (at most
# 4 * 2 * 28 * 128 each), each shifted down 2. The -4 comes off each sub-block's i16 sum as 4 * its
# bsum (the result at most 16 * 4 * 128) before the scales.
def il_body_q3():
    out = [f"(local.set $b0 (i16x8.shl (v128.load offset=260 align=1 {L('yb')}) (i32.const 2)))",
           f"(local.set $b1 (i16x8.shl (v128.load offset=276 align=1 {L('yb')}) (i32.const 2)))"]
    for r in range(2):
        out += scales_q3(r)[:2]
    for b in range(4):
        out.append(f";; qs[{16 * b}..{16 * b + 15}]: sub-blocks 0..7 and 8..15, elements {4 * b}..{4 * b + 3}")
        for n, v in enumerate((2 * b, 2 * b + 1, 8 + 2 * b, 9 + 2 * b)):
            out.append(f"(local.set $a{n} (v128.load offset={4 + 16 * v} align=1 {L('yi')}))")
        for r in range(2):
            hb = f"(v128.load offset={16 * (b % 2)} align=1 {L(f'x{r}')})"
            if b >= 2:
                hb = f"(i16x8.shr_u {hb} (i32.const 4))"
            out += [f"(local.set $v (v128.load offset={32 + 16 * b} align=1 {L(f'x{r}')}))",
                    f"(local.set $v4 (i16x8.shr_u {L('v')} (i32.const 4)))",
                    f"(local.set $hb {hb})"]
            u = [f"(v128.or (v128.and {L('v')} {K(0)}) (v128.and (i16x8.shl {L('hb')} (i32.const 2)) {K(288)}))",
                 f"(v128.or (v128.and {L('v')} {K(16)}) (v128.and (i16x8.shl {L('hb')} (i32.const 3)) {K(304)}))",
                 f"(v128.or (v128.and {L('v4')} {K(0)}) (v128.and {L('hb')} {K(288)}))",
                 f"(v128.or (v128.and {L('v4')} {K(16)}) (v128.and (i16x8.shl {L('hb')} (i32.const 1)) {K(304)}))"]
            oacc = 'oa' if b < 2 else 'ob'
            for acc, ts, first in (('e', [("a0", u[0]), ("a1", u[2])], b == 0),
                                   (oacc, [("a2", u[1]), ("a3", u[3])], b % 2 == 0)):
                prods = [f"(i16x8.dot_i8x16_i7x16_s {L(a)} {x})" for a, x in ts]
                s_ = f"(i16x8.add {prods[0]}\n                 {prods[1]})"
                if not first:
                    s_ = f"(i16x8.add {L(f'{acc}{r}')} {s_})"
                out.append(f"(local.set ${acc}{r} {s_})")
    for r in range(2):
        out.append(f"(local.set $dot{r} (i32x4.add\n"
                   f"              (i32x4.dot_i16x8_s (i16x8.sub {L(f'e{r}')} {L('b0')}) (i16x8.extend_low_i8x16_s {L(f'sc{r}')}))\n"
                   f"              (i32x4.dot_i16x8_s (i16x8.sub (i16x8.add (i16x8.shr_s {L(f'oa{r}')} (i32.const 2)) (i16x8.shr_s {L(f'ob{r}')} (i32.const 2))) {L('b1')})\n"
                   f"                                 (i16x8.extend_high_i8x16_s {L(f'sc{r}')}))))")
    out.append(finish_q3())
    return out


def il_module(fmt):
    q2 = fmt == 'q2_k'
    return module(HEADERS[fmt + '_il'], f"{fmt}_il_pairs", q2, 84 if q2 else 110, il_body_q2() if q2 else il_body_q3(),
                  act_param="y_il", y_il=True,
                  act_doc=f"""  ;; nb super-blocks per row; rows r and r + pairs (r < pairs) of the {fmt.upper()}_IL matrix at w with rows
  ;; w_stride bytes apart; y the token's Q8_K blocks (292 bytes: f32 d, qs[256] at 4, bsums[16] at
  ;; 260), y_il the same with its quants in the layout's order (acts_q2_k_il); k the table
  ;; relaxed_constants (relaxed_slots.cpp); out[r] and out[r + pairs] receive the dots.""",
                  locals_="""    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $yi i32) (local $end i32)
    (local $acc v128) (local $dot0 v128) (local $dot1 v128) (local $min0 v128) (local $min1 v128)
    (local $p0 v128) (local $p1 v128) (local $e0 v128) (local $e1 v128) (local $o0 v128) (local $o1 v128)
    (local $b0 v128) (local $b1 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $v v128) (local $v4 v128)
    (local $t v128) (local $ab v128) (local $cd v128) (local $hd v128) (local $ex v128) (local $tiny v128)
    (local $hb v128) (local $p v128) (local $sc0 v128) (local $sc1 v128) (local $oa0 v128) (local $oa1 v128)
    (local $ob0 v128) (local $ob1 v128)""")


HEADERS['q3_k_il'] = """;; Q3_K_IL x Q8_K decode of row pairs with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s, written by
;; kernels/simd128/relaxed/gen_q2_q3_pairs.py. Spliced in place of ox_simd128_q3_k_il_pairs
;; (relaxed_slots.cpp; kernels/simd128/relaxed_slots.h for the contract); wabt 1.0.32 spells the
;; instruction i16x8.dot_i8x16_i7x16_s.
;;
;; Same bits as kquant::rows2_q3_k (rows2_q2_q3.h) on the rows in natural order: the integer sums are
;; exact, and the float steps are its instructions in its order. Layout (core/quant/interleave.h):
;; Q3_K's 110-byte block with qs as Q2_K_IL's and hmask to match, against y_il in Q2_K_IL's order.
;; u = low2 | hbit << 2 (0..7) is the i7 operand, planes 1 and 3 built in place as 4 * u (at most
;; 28): group 0's i16 sum is at most 8 * 2 * 7 * 128, group 1's two halves (4 vectors each) at most
;; 4 * 2 * 28 * 128 before each is shifted down 2, exactly. The -4 (q = u - 4) comes off each
;; sub-block's i16 sum as 4 * its bsum; then one i32x4.dot_i16x8_s per group of eight scales.
;;
;; Block layout (110 bytes): hmask[32] at 0, qs[64] at 32, 16 6-bit scales packed in 12 bytes at 96
;; (q3_k_scales in util.h; scale - 32), d (fp16) at 108."""


HEADERS['q2_k_il'] = """;; Q2_K_IL x Q8_K decode of row pairs with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s, written by
;; kernels/simd128/relaxed/gen_q2_q3_pairs.py. Spliced in place of ox_simd128_q2_k_il_pairs
;; (relaxed_slots.cpp; kernels/simd128/relaxed_slots.h for the contract); wabt 1.0.32 spells the
;; instruction i16x8.dot_i8x16_i7x16_s.
;;
;; Same bits as kquant::rows2_q2_k (rows2_q2_q3.h) on the rows in natural order: the integer sums are
;; exact, and the float steps are its instructions in its order. Layout (core/quant/interleave.h):
;; Q2_K's 84-byte block with qs permuted so that 16-bit lane m of every weight plane is sub-block
;; 8g + m (planes 0 and 2: g = 0; planes 1 and 3: g = 1), against y_il in the same order. Planes 1
;; and 3 are masked in place, 4 * q (at most 12): their group's i16 sum (at most 8 * 2 * 12 * 128)
;; is shifted down 2, exactly, before it meets the scales of sub-blocks 8..15 in one
;; i32x4.dot_i16x8_s; planes 0 and 2 meet those of sub-blocks 0..7 in another."""

if __name__ == '__main__':
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for fmt in ('q2_k', 'q3_k'):
        with open(os.path.join(out_dir, f"{fmt}_pairs.wat"), 'w') as f:
            f.write(body(fmt))
    for fmt in ('q2_k', 'q3_k'):
        with open(os.path.join(out_dir, f"{fmt}_il_pairs.wat"), 'w') as f:
            f.write(il_module(fmt))
