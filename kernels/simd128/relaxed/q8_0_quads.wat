;; Q8_0 x Q8_0 decode, four rows at a time, with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s (one
;; pmaddubsw on x86). Spliced in place of ox_simd128_q8_0_quads (gemm_block32.cpp) in the relaxed copy
;; of the module (see kernels/simd128/relaxed_slots.h for the contract); the float steps and the loop
;; are q4_0_quads.wat's. wabt 1.0.32 spells relaxed_dot without "relaxed_" (i16x8.dot_i8x16_i7x16_s).
;;
;; Both operands are signed bytes here, so neither is an i7 operand as it stands. The activation is
;; split instead, once per block for the four rows: a = (a & 0x7F) - 128 * s with s its sign bit
;; (0 or 1), both parts in 0..127, so each row's block is two relaxed dots per 16 weights, the
;; weights the i8 operand as stored, with defined results for every byte of either (-128 included):
;; a lane of the first holds two products of at most 128 * 127 (32512, no saturation), of the second
;; two of at most 128. The first widens to i32 per row (two lanes would not fit i16); the second adds
;; in i16 across the block's halves and the four rows (at most 16 * 128) like q4_0_quads' fold, and
;; comes off times 128. All exact, so the totals are decode_groups<Q8_0>'s and the float steps after
;; them (the same as q4_0_quads.wat's, in the same order) give the C++ body's bits.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb blocks per row; group g < groups is rows g * g_step + j * j_step (j < 4) of the matrix at w
  ;; (rows w_stride bytes apart); a the token's Q8_0 blocks, d each block's scale (f32); k the
  ;; constant table (relaxed_constants in relaxed_slots.cpp); out[row] receives each row's dot.
  ;; `act` (the split quants of the C++ body) and `sum` are not read.
  (func (export "q8_0_quads")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $groups i32) (param $g_step i32)
    (param $j_step i32) (param $a i32) (param $act i32) (param $d i32) (param $sum i32) (param $k i32)
    (param $out i32) (result i32)
    (local $g i32) (local $r0 i32) (local $jb i32) (local $x0 i32) (local $x1 i32) (local $x2 i32) (local $x3 i32)
    (local $ab i32) (local $db i32) (local $end i32)
    (local $m7 v128) (local $acc v128) (local $alo v128) (local $ahi v128) (local $slo v128) (local $shi v128)
    (local $wlo v128) (local $whi v128) (local $n0 v128) (local $n1 v128) (local $n2 v128) (local $n3 v128)
    (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128) (local $t01 v128) (local $t23 v128)
    (local $tot v128) (local $h v128) (local $ex v128) (local $tiny v128) (local $dx v128)
    (local.set $m7 (v128.load offset=304 (local.get $k)))
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
                (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 34))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; the activation block's quants 0..15 and 16..31 as their low seven bits (alo, ahi) and
            ;; sign bits (slo, shi; a 16-bit shift by 7 puts each byte's bit 7 at its bit 0)
            (local.set $alo (v128.load offset=2 align=1 (local.get $ab)))
            (local.set $ahi (v128.load offset=18 align=1 (local.get $ab)))
            (local.set $slo (v128.and (i16x8.shr_u (local.get $alo) (i32.const 7)) (v128.load offset=320 (local.get $k))))
            (local.set $shi (v128.and (i16x8.shr_u (local.get $ahi) (i32.const 7)) (v128.load offset=320 (local.get $k))))
            (local.set $alo (v128.and (local.get $alo) (local.get $m7)))
            (local.set $ahi (v128.and (local.get $ahi) (local.get $m7)))
            ;; per row j: s_j = its dot with the low seven bits as i32x4 partial sums, n_j = its dot
            ;; with the sign bits as i16 lanes
            (local.set $wlo (v128.load offset=2 align=1 (local.get $x0)))
            (local.set $whi (v128.load offset=18 align=1 (local.get $x0)))
            (local.set $n0 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $slo))
              (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $shi))))
            (local.set $s0 (i32x4.add
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $alo)))
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $ahi)))))
            (local.set $wlo (v128.load offset=2 align=1 (local.get $x1)))
            (local.set $whi (v128.load offset=18 align=1 (local.get $x1)))
            (local.set $n1 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $slo))
              (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $shi))))
            (local.set $s1 (i32x4.add
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $alo)))
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $ahi)))))
            (local.set $wlo (v128.load offset=2 align=1 (local.get $x2)))
            (local.set $whi (v128.load offset=18 align=1 (local.get $x2)))
            (local.set $n2 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $slo))
              (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $shi))))
            (local.set $s2 (i32x4.add
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $alo)))
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $ahi)))))
            (local.set $wlo (v128.load offset=2 align=1 (local.get $x3)))
            (local.set $whi (v128.load offset=18 align=1 (local.get $x3)))
            (local.set $n3 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $slo))
              (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $shi))))
            (local.set $s3 (i32x4.add
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $wlo) (local.get $alo)))
              (i32x4.extadd_pairwise_i16x8_s (i16x8.dot_i8x16_i7x16_s (local.get $whi) (local.get $ahi)))))
            ;; lane j = row j's total: the s_j summed across (hsum4x4_i32), less 128 times the n_j
            ;; folded as q4_0_quads folds its rows ([row 0 lanes 0..3 + 4..7, row 1 likewise], the same
            ;; of rows 2 and 3, then the lane pairs added once more and widened)
            (local.set $t01 (i16x8.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $n0) (local.get $n1))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $n0) (local.get $n1))))
            (local.set $t23 (i16x8.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $n2) (local.get $n3))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $n2) (local.get $n3))))
            (local.set $s0 (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $s0) (local.get $s1))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $s0) (local.get $s1))))
            (local.set $s2 (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $s2) (local.get $s3))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $s2) (local.get $s3))))
            (local.set $tot (i32x4.sub
              (i32x4.add
                (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $s0) (local.get $s2))
                (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $s0) (local.get $s2)))
              (i32x4.shl
                (i32x4.extadd_pairwise_i16x8_s (i16x8.add
                  (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t01) (local.get $t23))
                  (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t01) (local.get $t23))))
                (i32.const 7))))
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
            (local.set $x0 (i32.add (local.get $x0) (i32.const 34)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 34)))
            (local.set $x2 (i32.add (local.get $x2) (i32.const 34)))
            (local.set $x3 (i32.add (local.get $x3) (i32.const 34)))
            (local.set $ab (i32.add (local.get $ab) (i32.const 34)))
            (local.set $db (i32.add (local.get $db) (i32.const 4)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
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
