;; Q5_0 x Q8_0 decode, four rows at a time, with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s (one
;; pmaddubsw on x86: 16 products per instruction where SIMD128 alone multiplies 8, and no widening
;; to i16 first). q4_0_quads.wat's loop with each weight's value built whole, 0..31 (nibble + 16 *
;; its qh bit), as the i7 operand: the row's four qh bytes are splat, each byte's own qh byte
;; picked by a swizzle (in range, so relaxed_swizzle is defined), tested against its bit (and, eq)
;; and 16 put in where it is set. Hand-written because this toolchain's clang 14 cannot emit
;; relaxed SIMD; wasm/tools/splice_relaxed.mjs puts this body in place of ox_simd128_q5_0_quads
;; (gemm_block32.cpp) in the relaxed copy of the module (see kernels/simd128/relaxed_slots.h for the
;; contract). wabt 1.0.32 spells relaxed_dot without "relaxed_" (i16x8.dot_i8x16_i7x16_s).
;;
;; Same result, bit for bit, as the C++ body (decode_groups<Q5_0>, which adds the fifth bits by
;; table instead): a block's integer total is values . a - 16 * sum(a), exact; then the same float
;; steps in the same order (the four rows' fp16 d converted exactly, times the activation block's
;; d, times the converted totals, added to the accumulator). A relaxed-dot lane holds two products
;; (at most 2 * 128 * 31), a row's two halves four and the first fold of two rows eight (31744 <
;; 32767) before the pairs widen to i32, so nothing saturates for any activation byte.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb blocks per row; group g < groups is rows g * g_step + j * j_step (j < 4) of the matrix at w
  ;; (rows w_stride bytes apart); a the token's Q8_0 blocks, d each block's scale (f32) and
  ;; sum the sum of its quants (i32); k the constant table (relaxed_constants
  ;; in relaxed_slots.cpp: 0 the nibble mask, 288 16 in each byte, 336 / 352 the qh byte of each
  ;; element of 0..15 / 16..31, 368 its bit); out[row] receives each row's dot. `act` (the split
  ;; quants of the C++ body), `s` and `fifth` (its tables) are not read.
  (func (export "q5_0_quads")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $groups i32) (param $g_step i32)
    (param $j_step i32) (param $a i32) (param $act i32) (param $d i32) (param $s i32) (param $sum i32)
    (param $fifth i32) (param $k i32) (param $out i32) (result i32)
    (local $g i32) (local $r0 i32) (local $jb i32) (local $x0 i32) (local $x1 i32) (local $x2 i32) (local $x3 i32)
    (local $ab i32) (local $db i32) (local $sb i32) (local $end i32)
    (local $m4 v128) (local $acc v128) (local $alo v128) (local $ahi v128) (local $q v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128) (local $t01 v128) (local $t23 v128)
    (local $tot v128) (local $h v128) (local $special v128) (local $exp_mask v128) (local $half_bits v128) (local $half_scale v128) (local $dx v128)
    (local $hb v128) (local $lo v128) (local $hi v128)
    (local $slo v128) (local $shi v128) (local $bits v128) (local $c16 v128)
    (local.set $m4 (v128.load (local.get $k)))
    (local.set $exp_mask (v128.load offset=80 (local.get $k)))
    (local.set $half_bits (v128.load offset=256 (local.get $k)))
    (local.set $half_scale (v128.load offset=272 (local.get $k)))
    (local.set $c16 (v128.load offset=288 (local.get $k)))
    (local.set $slo (v128.load offset=336 (local.get $k)))
    (local.set $shi (v128.load offset=352 (local.get $k)))
    (local.set $bits (v128.load offset=368 (local.get $k)))
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $g (i32.const 0))
    (block $groups_done
      (br_if $groups_done (i32.le_s (local.get $groups) (i32.const 0)))
      (loop $group
        (local.set $r0 (i32.mul (local.get $g) (local.get $g_step)))
        (local.set $jb (i32.mul (local.get $j_step) (local.get $w_stride)))
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r0) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $x0) (local.get $jb)))
        (local.set $x2 (i32.add (local.get $x1) (local.get $jb)))
        (local.set $x3 (i32.add (local.get $x2) (local.get $jb)))
        (local.set $ab (local.get $a))
        (local.set $db (local.get $d))
        (local.set $sb (local.get $sum))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 22))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $special (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; the activation block's quants 0..15 and 16..31
            (local.set $alo (v128.load offset=2 align=1 (local.get $ab)))
            (local.set $ahi (v128.load offset=18 align=1 (local.get $ab)))
            ;; per row: elements 0..15 against alo, 16..31 against ahi, as i16 pairs; element e's value is its
            ;; nibble or 16 where bit e of qh is set (byte e % 16 of a swizzle of qh bytes 0, 1 / 2, 3)
            (local.set $q (v128.load offset=6 align=1 (local.get $x0)))
            (local.set $hb (v128.load32_splat offset=2 align=1 (local.get $x0)))
            (local.set $lo (v128.or (v128.and (local.get $q) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $slo)))))))
            (local.set $hi (v128.or (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $shi)))))))
            (local.set $p0 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $alo) (local.get $lo))
                                        (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (local.get $hi))))
            (local.set $q (v128.load offset=6 align=1 (local.get $x1)))
            (local.set $hb (v128.load32_splat offset=2 align=1 (local.get $x1)))
            (local.set $lo (v128.or (v128.and (local.get $q) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $slo)))))))
            (local.set $hi (v128.or (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $shi)))))))
            (local.set $p1 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $alo) (local.get $lo))
                                        (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (local.get $hi))))
            ;; fold: [row 0 lanes 0..3 + 4..7, row 1 likewise], the same of rows 2 and 3, then
            ;; [rows 0..3, lane pairs] widened and added: lane j = row j's total
            (local.set $t01 (i16x8.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $p0) (local.get $p1))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $p0) (local.get $p1))))
            (local.set $q (v128.load offset=6 align=1 (local.get $x2)))
            (local.set $hb (v128.load32_splat offset=2 align=1 (local.get $x2)))
            (local.set $lo (v128.or (v128.and (local.get $q) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $slo)))))))
            (local.set $hi (v128.or (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $shi)))))))
            (local.set $p2 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $alo) (local.get $lo))
                                        (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (local.get $hi))))
            (local.set $q (v128.load offset=6 align=1 (local.get $x3)))
            (local.set $hb (v128.load32_splat offset=2 align=1 (local.get $x3)))
            (local.set $lo (v128.or (v128.and (local.get $q) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $slo)))))))
            (local.set $hi (v128.or (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (v128.and (local.get $c16) (i8x16.eq (local.get $bits)
                (v128.and (local.get $bits) (i8x16.relaxed_swizzle (local.get $hb) (local.get $shi)))))))
            (local.set $p3 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $alo) (local.get $lo))
                                        (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (local.get $hi))))
            (local.set $t23 (i16x8.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $p2) (local.get $p3))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $p2) (local.get $p3))))
            (local.set $t01 (i32x4.extadd_pairwise_i16x8_s (local.get $t01)))
            (local.set $t23 (i32x4.extadd_pairwise_i16x8_s (local.get $t23)))
            (local.set $tot (i32x4.add
              (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t01) (local.get $t23))
              (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t01) (local.get $t23))))
            ;; Q5_0's offset: 16 * sum(a) off every row's total
            (local.set $tot (i32x4.sub (local.get $tot)
              (i32x4.splat (i32.shl (i32.load (local.get $sb)) (i32.const 4)))))
            ;; the four rows' d from fp16 by Fp16Fast's short path (util.h: shifted into f32 position,
            ;; times 2^112), exact for every finite half, zero and subnormal ones included; an Inf or
            ;; NaN (exponent 31) is noted in `special`, and the group is left to the caller.
            (local.set $h
              (v128.load16_lane align=1 6 (local.get $x3)
                (v128.load16_lane align=1 4 (local.get $x2)
                  (v128.load16_lane align=1 2 (local.get $x1)
                    (v128.load16_lane align=1 0 (local.get $x0) (v128.const i32x4 0 0 0 0))))))
            (local.set $special (i32x4.max_u (local.get $special) (v128.and (local.get $h) (local.get $exp_mask))))
            (local.set $dx
              (f32x4.mul
                (v128.and (i32x4.shr_s (i32x4.shl (local.get $h) (i32.const 16)) (i32.const 3)) (local.get $half_bits))
                (local.get $half_scale)))
            ;; acc += totals * (d * a.d)
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (f32x4.convert_i32x4_s (local.get $tot))
              (f32x4.mul (local.get $dx) (f32x4.splat (f32.load (local.get $db)))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 22)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 22)))
            (local.set $x2 (i32.add (local.get $x2) (i32.const 22)))
            (local.set $x3 (i32.add (local.get $x3) (i32.const 22)))
            (local.set $ab (i32.add (local.get $ab) (i32.const 34)))
            (local.set $db (i32.add (local.get $db) (i32.const 4)))
            (local.set $sb (i32.add (local.get $sb) (i32.const 4)))
                        (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        ;; a half with exponent 31 among the group's scales: return its index, nothing stored
        (if (v128.any_true (i32x4.eq (local.get $special) (local.get $exp_mask)))
          (then (return (local.get $g))))
        ;; out[r0 + j * j_step] = lane j
        (local.set $jb (i32.shl (local.get $j_step) (i32.const 2)))
        (local.set $r0 (i32.add (local.get $out) (i32.shl (local.get $r0) (i32.const 2))))
        (f32.store align=1 (local.get $r0) (f32x4.extract_lane 0 (local.get $acc)))
        (f32.store align=1 (local.tee $r0 (i32.add (local.get $r0) (local.get $jb))) (f32x4.extract_lane 1 (local.get $acc)))
        (f32.store align=1 (local.tee $r0 (i32.add (local.get $r0) (local.get $jb))) (f32x4.extract_lane 2 (local.get $acc)))
        (f32.store align=1 (i32.add (local.get $r0) (local.get $jb)) (f32x4.extract_lane 3 (local.get $acc)))
        (br_if $group (i32.lt_s (local.tee $g (i32.add (local.get $g) (i32.const 1))) (local.get $groups)))))
    (local.get $groups))
)
