;; IQ4_NL x Q8_0 decode, four rows at a time, with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s (one
;; pmaddubsw on x86). Spliced in place of ox_simd128_iq4_nl_quads (gemm_block32.cpp) in the relaxed
;; copy of the module (see kernels/simd128/relaxed_slots.h for the contract); the loop and the float
;; steps are q4_0_quads.wat's. wabt 1.0.32 spells relaxed_dot without "relaxed_" (i16x8.dot_i8x16_i7x16_s).
;;
;; The codebook values (kIQ4NLValues, -127..113) are signed, and so are the activations, so neither
;; is an i7 operand as it stands. The caller splits each activation block once per call by sign
;; (gemm_block32.cpp's split_signs): |a| (0..127: no block holds -128 here) is the i7 operand, and
;; each row's value v (the relaxed swizzle of the codebook by its nibble, 0..15, so defined) is
;; flipped bitwise where a < 0: ~v = -v - 1, so the lane gives (-v - 1)(-a) = v a + a, and the
;; block's dot comes out as sum(v a) + neg_sum (the sum of its negative quants), which is taken off.
;; One relaxed dot per 16 products, where the split 16 q + r(q) - 139 of the nibble took two (this
;; body measured ~11% faster in Chromium on a 9.4 MB matrix in cache). An i16 lane holds two
;; products of at most 127 * 127 (32258), so each dot is widened at once (i32x4.dot_i16x8_s by
;; ones), the two halves of a row added in i32 and the four rows folded as hsum4x4_i32 does. All
;; exact, so the totals are decode_groups<IQ4_NL>'s integers, and the float steps after them are
;; the C++ body's in the same order: the same bits.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb blocks per row; group g < groups is rows g * g_step + j * j_step (j < 4) of the matrix at w
  ;; (rows w_stride bytes apart); signs the token's blocks split by sign (64 bytes each: |a| of
  ;; elements 0..15 and 16..31, then their sign masks), d and neg_sum each block's scale (f32) and
  ;; the sum of its negative quants (i32); k the constant table (relaxed_constants in
  ;; relaxed_slots.cpp); out[row] receives each row's dot. `act` (the split quants of the C++ body)
  ;; is not read.
  (func (export "iq4_nl_quads")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $groups i32) (param $g_step i32)
    (param $j_step i32) (param $signs i32) (param $act i32) (param $d i32) (param $neg_sum i32) (param $k i32)
    (param $out i32)
    (local $g i32) (local $r0 i32) (local $jb i32) (local $x0 i32) (local $x1 i32) (local $x2 i32) (local $x3 i32)
    (local $ab i32) (local $db i32) (local $sb i32) (local $end i32)
    (local $values v128) (local $m4 v128) (local $ones v128) (local $acc v128) (local $alo v128) (local $ahi v128)
    (local $slo v128) (local $shi v128) (local $q v128) (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128)
    (local $tot v128) (local $h v128) (local $ex v128) (local $tiny v128)
    (local $dx v128)
    (local.set $m4 (v128.load (local.get $k)))
    ;; kIQ4NLValues
    (local.set $values (v128.const i8x16 -127 -104 -83 -65 -49 -35 -22 -10 1 13 25 38 53 69 89 113))
    (local.set $ones (v128.const i16x8 1 1 1 1 1 1 1 1))
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
        (local.set $ab (local.get $signs))
        (local.set $db (local.get $d))
        (local.set $sb (local.get $neg_sum))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 18))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; the activation block split by sign
            (local.set $alo (v128.load (local.get $ab)))
            (local.set $ahi (v128.load offset=16 (local.get $ab)))
            (local.set $slo (v128.load offset=32 (local.get $ab)))
            (local.set $shi (v128.load offset=48 (local.get $ab)))
            ;; per row: the values of the low nibbles (elements 0..15) against |a| of 0..15, of the
            ;; high nibbles against 16..31, each flipped where its activation is negative; i32 lanes
            (local.set $q (v128.load offset=2 align=1 (local.get $x0)))
            (local.set $p0 (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (local.get $q) (local.get $m4))) (local.get $slo))
                (local.get $alo)) (local.get $ones))
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))) (local.get $shi))
                (local.get $ahi)) (local.get $ones))))
            (local.set $q (v128.load offset=2 align=1 (local.get $x1)))
            (local.set $p1 (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (local.get $q) (local.get $m4))) (local.get $slo))
                (local.get $alo)) (local.get $ones))
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))) (local.get $shi))
                (local.get $ahi)) (local.get $ones))))
            (local.set $q (v128.load offset=2 align=1 (local.get $x2)))
            (local.set $p2 (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (local.get $q) (local.get $m4))) (local.get $slo))
                (local.get $alo)) (local.get $ones))
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))) (local.get $shi))
                (local.get $ahi)) (local.get $ones))))
            (local.set $q (v128.load offset=2 align=1 (local.get $x3)))
            (local.set $p3 (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (local.get $q) (local.get $m4))) (local.get $slo))
                (local.get $alo)) (local.get $ones))
              (i32x4.dot_i16x8_s (i16x8.dot_i8x16_i7x16_s
                (v128.xor (i8x16.relaxed_swizzle (local.get $values) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))) (local.get $shi))
                (local.get $ahi)) (local.get $ones))))
            ;; fold: lane j = row j's total (hsum4x4_i32), less the negative quants' sum
            (local.set $p0 (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $p0) (local.get $p1))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $p0) (local.get $p1))))
            (local.set $p2 (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $p2) (local.get $p3))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $p2) (local.get $p3))))
            (local.set $tot (i32x4.sub
              (i32x4.add
                (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $p0) (local.get $p2))
                (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $p0) (local.get $p2)))
              (i32x4.splat (i32.load (local.get $sb)))))
            ;; the four rows' d from fp16: normal halves by Fp16Fast's short path (util.h: shifted into
            ;; f32 position, times 2^112); a zero, subnormal, Inf or NaN among them by fp16x4_to_f32's
            ;; (no subnormal float operand). Both exact, so the C++ body's bits either way.
            (local.set $h
              (v128.load16_lane align=1 6 (local.get $x3)
                (v128.load16_lane align=1 4 (local.get $x2)
                  (v128.load16_lane align=1 2 (local.get $x1)
                    (v128.load16_lane align=1 0 (local.get $x0) (v128.const i32x4 0 0 0 0))))))
            (local.set $ex (v128.and (local.get $h) (v128.load offset=80 (local.get $k))))
            (if (v128.any_true (v128.or (i32x4.eq (local.get $ex) (v128.const i32x4 0 0 0 0))
                                        (i32x4.eq (local.get $ex) (v128.load offset=80 (local.get $k)))))
              (then
                (local.set $tiny (i32x4.eq (local.get $ex) (v128.const i32x4 0 0 0 0)))
                (local.set $dx
                  (v128.or
                    (v128.or
                      (f32x4.sub
                        (i32x4.add
                          (i32x4.add (i32x4.shr_u (i32x4.shl (local.get $h) (i32.const 17)) (i32.const 4))
                                     (v128.load offset=48 (local.get $k)))
                          (v128.and (local.get $tiny) (v128.load offset=64 (local.get $k))))
                        (v128.and (local.get $tiny) (v128.load offset=112 (local.get $k))))
                      (v128.and (i32x4.eq (local.get $ex) (v128.load offset=80 (local.get $k))) (v128.load offset=96 (local.get $k))))
                    (i32x4.shl (i32x4.shr_u (local.get $h) (i32.const 15)) (i32.const 31)))))
              (else
                (local.set $dx
                  (f32x4.mul
                    (v128.and (i32x4.shr_s (i32x4.shl (local.get $h) (i32.const 16)) (i32.const 3))
                              (v128.load offset=256 (local.get $k)))
                    (v128.load offset=272 (local.get $k))))))
            ;; acc += totals * (d * a.d)
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (f32x4.convert_i32x4_s (local.get $tot))
              (f32x4.mul (local.get $dx) (f32x4.splat (f32.load (local.get $db)))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 18)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 18)))
            (local.set $x2 (i32.add (local.get $x2) (i32.const 18)))
            (local.set $x3 (i32.add (local.get $x3) (i32.const 18)))
            (local.set $ab (i32.add (local.get $ab) (i32.const 64)))
            (local.set $db (i32.add (local.get $db) (i32.const 4)))
            (local.set $sb (i32.add (local.get $sb) (i32.const 4)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        ;; out[r0 + j * j_step] = lane j
        (local.set $jb (i32.shl (local.get $j_step) (i32.const 2)))
        (local.set $r0 (i32.add (local.get $out) (i32.shl (local.get $r0) (i32.const 2))))
        (f32.store align=1 (local.get $r0) (f32x4.extract_lane 0 (local.get $acc)))
        (f32.store align=1 (local.tee $r0 (i32.add (local.get $r0) (local.get $jb))) (f32x4.extract_lane 1 (local.get $acc)))
        (f32.store align=1 (local.tee $r0 (i32.add (local.get $r0) (local.get $jb))) (f32x4.extract_lane 2 (local.get $acc)))
        (f32.store align=1 (i32.add (local.get $r0) (local.get $jb)) (f32x4.extract_lane 3 (local.get $acc)))
        (br_if $group (i32.lt_s (local.tee $g (i32.add (local.get $g) (i32.const 1))) (local.get $groups))))))
)
