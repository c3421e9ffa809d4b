# Writes the relaxed decode bodies of Q2_K and Q3_K, q2_k_pairs.wat and q3_k_pairs.wat, which share
# their loop, their activation reads and their float steps and differ in how a sub-block's weights
# and scales are read (step_planes, scales_* below). The four 64-element steps of a super-block are
# a loop (steps below).
#   python3 kernels/simd128/relaxed/gen_q2_q3_pairs.py kernels/simd128/relaxed
import os
import sys


def L(x):
    return f"(local.get ${x})"


def K(offset):
    """a constant of q2_q3_constants (relaxed_slots.cpp), read where it is used"""
    return f"(v128.load offset={offset} {L('k')})"


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


def block_inner(q2):
    """one super-block of both rows, from the scales to the float step"""
    scales = scales_q2 if q2 else scales_q3
    inner = []
    if not q2:
        inner += [f"(local.set $b0 (v128.load offset=260 align=1 {L('yb')}))",
                  f"(local.set $b1 (v128.load offset=276 align=1 {L('yb')}))"]
    inner += scales(0) + scales(1)
    inner += steps(q2)
    inner += ["(local.set $dot0 (i32x4.shr_s (local.get $dot0) (i32.const 2)))",
              "(local.set $dot1 (i32x4.shr_s (local.get $dot1) (i32.const 2)))"]
    if q2:
        inner += [f"(local.set $b0 (v128.load offset=260 align=1 {L('yb')}))",
                  f"(local.set $b1 (v128.load offset=276 align=1 {L('yb')}))"] + mins_q2(0) + mins_q2(1)
    inner.append(finish_q2() if q2 else finish_q3())
    return inner


def step_planes(q2, r):
    """row r's four sub-blocks 8h + 2j + t of step (h, t): Q2_K planes 0 and 2 as 0..3, 1 and 3 as 4 *
    (0..3) (the mask of the bits in place), the scales of planes 0 and 2 taken 4x to match (scales_q2);
    Q3_K u = low2 | hbit << 2 (hmask[16t ..] bits 4h + j) the same way, planes 0 and 2 in place at
    bits 0-2, 1 and 3 at bits 2-4 (every shift by bytes of i16 lanes; the masks keep only bits that
    come from the same byte)"""
    out = [f"(local.set $v (v128.load align=1 {L(f'q{r}')}))",
           f"(local.set $v4 (i16x8.shr_u {L('v')} (i32.const 4)))"]
    if q2:
        u = [f"(v128.and {L('v')} {L('m3')})", f"(v128.and {L('v')} {L('m12')})",
             f"(v128.and {L('v4')} {L('m3')})", f"(v128.and {L('v4')} {L('m12')})"]
    else:
        out.append(f"(local.set $hb (i16x8.shr_u (v128.load align=1 (i32.add {L(f'x{r}')} {L('toff')})) {L('hs')}))")
        u = [f"(v128.or (v128.and {L('v')} {L('m3')}) (v128.and (i16x8.shl {L('hb')} (i32.const 2)) {L('m4')}))",
             f"(v128.or (v128.and {L('v')} {L('m12')}) (v128.and (i16x8.shl {L('hb')} (i32.const 3)) {L('m16')}))",
             f"(v128.or (v128.and {L('v4')} {L('m3')}) (v128.and {L('hb')} {L('m4')}))",
             f"(v128.or (v128.and {L('v4')} {L('m12')}) (v128.and (i16x8.shl {L('hb')} (i32.const 1)) {L('m16')}))"]
    for j in range(4):
        out.append(f"(local.set $dot{r} (i32x4.add {L(f'dot{r}')} (i32x4.dot_i16x8_s\n"
                   f"                (i16x8.dot_i8x16_i7x16_s {L(f'a{j}')} {u[j]})\n"
                   f"                (i8x16.relaxed_swizzle {L(f's{r}')} {L(f'pk{j}')}))))")
    return out


def steps(q2):
    """The four 64-element steps (h, t) = (it >> 1, it & 1) of a super-block as a loop over $it,
    pointers $q0, $q1 at qs + 16it, $ap at yb + 128h + 16t ($toff = 16t, $hs = 4h: Q3_K's hmask
    bytes and bits). Written out as halves (the t steps written out, the halves a loop), V8 (node 20)
    issued a half's 12 weight and activation loads and its 20 constant loads first and spilled them,
    some 30 stores and 30 reloads a half; a step loads 6 (Q3_K 8), and the constants are locals set
    once (constants()), which V8 at most reloads. The scale of sub-block 8h + 2j + t sits at byte 2j
    of sc{r} in step it: each step moves byte 2j + 1 (from step 1 to 2, byte 8 + 2j) to byte 2j with
    one shuffle, so the picks are those of i16 lanes 0, 2, 4, 6 in every step (and Q3_K's 4x of
    planes 0 and 2 the same lanes of 320)."""
    out = [f"(local.set $q{r} (i32.add {L(f'x{r}')} (i32.const {16 if q2 else 32})))" for r in range(2)]
    out += [f"(local.set $ap {L('yb')})", "(local.set $it (i32.const 0))",
            "(local.set $toff (i32.const 0))", "(local.set $hs (i32.const 0))", "(loop $steps"]
    if q2:
        step = [f"(local.set $s{r} (i16x8.extend_low_i8x16_u {L(f'sc{r}')}))" for r in range(2)]
    else:
        step = [f"(local.set $s{r} (i16x8.mul (i16x8.extend_low_i8x16_s {L(f'sc{r}')}) {L('x4')}))" for r in range(2)]
    step += [f"(local.set $a{j} (v128.load offset={4 + 32 * j} align=1 {L('ap')}))" for j in range(4)]
    step += step_planes(q2, 0) + step_planes(q2, 1)
    step += [f"(local.set $sc{r} (i8x16.shuffle 1 8 3 10 5 12 7 14 9 0 11 0 13 0 15 0 {L(f'sc{r}')} {L(f'sc{r}')}))"
             for r in range(2)]
    step += ["(local.set $q0 (i32.add (local.get $q0) (i32.const 16)))",
             "(local.set $q1 (i32.add (local.get $q1) (i32.const 16)))",
             "(local.set $it (i32.add (local.get $it) (i32.const 1)))",
             "(local.set $toff (i32.shl (i32.and (local.get $it) (i32.const 1)) (i32.const 4)))",
             "(local.set $hs (i32.shl (i32.and (local.get $it) (i32.const 2)) (i32.const 1)))",
             "(local.set $ap (i32.add (local.get $yb) (i32.add (i32.shl (local.get $hs) (i32.const 5)) (local.get $toff))))",
             "(br_if $steps (i32.ne (local.get $it) (i32.const 4))))"]
    return out + ["  " + line for line in step]


def constants(q2):
    """the loop's constants as locals, set once"""
    pairs = [('m3', 0), ('m12', 16)] + [(f'pk{j}', 128 + 32 * j) for j in range(4)]  # pick(2j)
    if not q2:
        pairs += [('m4', 288), ('m16', 304), ('x4', 320)]
    return "".join(f"\n    (local.set ${n} {K(o)})" for n, o in pairs)


def body(fmt):
    q2 = fmt == 'q2_k'
    block = 84 if q2 else 110
    inner = block_inner(q2)
    consts = ("\n    (local $it i32) (local $toff i32) (local $m3 v128) (local $m12 v128) (local $m4 v128) (local $m16 v128)"
              "\n    (local $x4 v128) (local $pk0 v128) (local $pk1 v128) (local $pk2 v128) (local $pk3 v128)" + constants(q2))
    ind = "            "
    inner_text = "\n".join(ind + line for line in inner)
    if q2:
        store = f"""        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.sub (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32.sub (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))"""
    else:
        store = f"""        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32x4.extract_lane 0 (local.get $acc)))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32x4.extract_lane 1 (local.get $acc)))"""
    return f"""{HEADERS[fmt]}
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb super-blocks per row; rows r and r + pairs (r < pairs) of the matrix at w with rows
  ;; w_stride bytes apart; y the token's Q8_K blocks (292 bytes: f32 d, qs[256] at 4, bsums[16] at
  ;; 260); k the table q2_q3_constants (relaxed_slots.cpp); out[r] and out[r + pairs] receive the
  ;; dots. `act` (the split activations of the C++ body) is not read.
  (func (export "{fmt}_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32)
    (param $act i32) (param $k i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $end i32)
    (local $q0 i32) (local $q1 i32) (local $ap i32) (local $hs i32)
    (local $acc v128) (local $dot0 v128) (local $dot1 v128) (local $min0 v128) (local $min1 v128)
    (local $sc0 v128) (local $sc1 v128) (local $s0 v128) (local $s1 v128) (local $b0 v128) (local $b1 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $v v128) (local $v4 v128)
    (local $hb v128) (local $p v128) (local $t v128) (local $ab v128) (local $cd v128) (local $hd v128)
    (local $ex v128) (local $tiny v128){consts}
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $rows
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $w) (i32.mul (i32.add (local.get $r) (local.get $pairs)) (local.get $w_stride))))
        (local.set $yb (local.get $y))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const {block}))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
{inner_text}
            (local.set $x0 (i32.add (local.get $x0) (i32.const {block})))
            (local.set $x1 (i32.add (local.get $x1) (i32.const {block})))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
{store}
        (br_if $rows (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
"""


if __name__ == '__main__':
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for fmt in ('q2_k', 'q3_k'):
        with open(os.path.join(out_dir, f"{fmt}_pairs.wat"), 'w') as f:
            f.write(body(fmt))
