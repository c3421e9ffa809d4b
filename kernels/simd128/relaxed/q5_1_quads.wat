;; Q5_1 x Q8_1 decode, four rows at a time, with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s (one
;; pmaddubsw on x86: 16 products per instruction where SIMD128 alone multiplies 8). q4_0_quads.wat's
;; loop for Q5_1's blocks (d, m, qh, qs) against Q8_1's (d, s, qs), the nibbles the i7 operand, with
;; the fifth bits added as the C++ body adds them: per activation block four 256-entry tables
;; (fifth_bit_sums in gemm_block32.cpp: entry v = the sum of the block's quants 8p..8p+7 whose bit
;; is set in v), looked up by the row's four qh bytes in scalar code beside the vector work. (Q5_0's
;; body builds each value whole in vector code instead; for Q5_1, whose min term adds a second
;; scale conversion, that measured slower in Chromium 156: 255 against 230 us for a 2048 x 2048
;; matrix.) wasm/tools/splice_relaxed.mjs puts this body in place of ox_simd128_q5_1_quads
;; (gemm_block32.cpp) in the relaxed copy of the module (see kernels/simd128/relaxed_slots.h).
;;
;; Same result, bit for bit, as the C++ body (decode_groups<Q5_1>): a block's integer total is
;; nibbles . a + 16 * (its four table entries), exact; acc += converted totals * (d * a.d), then
;; acc += m * s, the rows' fp16 d and m converted exactly. The four rows fold into i16 lanes of at
;; most 16 products (16 * 128 * 15 = 30720 < 32767) before they widen, so nothing saturates.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb blocks per row; group g < groups is rows g * g_step + j * j_step (j < 4) of the matrix at w
  ;; (rows w_stride bytes apart); a the token's Q8_1 blocks, d each block's scale (f32) and s its s
  ;; field (f32); fifth the fifth-bit tables (2048 bytes per block); k the constant table
  ;; (relaxed_constants in relaxed_slots.cpp); out[row] receives each row's dot. `act` (the split
  ;; quants of the C++ body) and `sum` are not read.
  (func (export "q5_1_quads")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $groups i32) (param $g_step i32)
    (param $j_step i32) (param $a i32) (param $act i32) (param $d i32) (param $s i32) (param $sum i32)
    (param $fifth i32) (param $k i32) (param $out i32) (result i32)
    (local $g i32) (local $r0 i32) (local $jb i32) (local $x0 i32) (local $x1 i32) (local $x2 i32) (local $x3 i32)
    (local $ab i32) (local $db i32) (local $sb i32) (local $t i32) (local $end i32)
    (local $m4 v128) (local $acc v128) (local $alo v128) (local $ahi v128) (local $q v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128) (local $t01 v128) (local $t23 v128)
    (local $tot v128) (local $h v128) (local $special v128) (local $exp_mask v128) (local $half_bits v128) (local $half_scale v128) (local $dx v128)
    (local.set $m4 (v128.load (local.get $k)))
    (local.set $exp_mask (v128.load offset=80 (local.get $k)))
    (local.set $half_bits (v128.load offset=256 (local.get $k)))
    (local.set $half_scale (v128.load offset=272 (local.get $k)))
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
        (local.set $sb (local.get $s))
        (local.set $t (local.get $fifth))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 24))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $special (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; the activation block's quants 0..15 and 16..31
            (local.set $alo (v128.load offset=4 align=1 (local.get $ab)))
            (local.set $ahi (v128.load offset=20 align=1 (local.get $ab)))
            ;; per row: low nibbles (elements 0..15) against alo, high nibbles against ahi, as i16 pairs
            (local.set $q (v128.load offset=8 align=1 (local.get $x0)))
            (local.set $p0 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $alo) (v128.and (local.get $q) (local.get $m4)))
              (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4)))))
            (local.set $q (v128.load offset=8 align=1 (local.get $x1)))
            (local.set $p1 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $alo) (v128.and (local.get $q) (local.get $m4)))
              (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4)))))
            (local.set $q (v128.load offset=8 align=1 (local.get $x2)))
            (local.set $p2 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $alo) (v128.and (local.get $q) (local.get $m4)))
              (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4)))))
            (local.set $q (v128.load offset=8 align=1 (local.get $x3)))
            (local.set $p3 (i16x8.add
              (i16x8.dot_i8x16_i7x16_s (local.get $alo) (v128.and (local.get $q) (local.get $m4)))
              (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4)))))
            ;; fold: [row 0 lanes 0..3 + 4..7, row 1 likewise], the same of rows 2 and 3, then
            ;; [rows 0..3, lane pairs] added once more and widened: lane j = row j's nibble dot
            (local.set $t01 (i16x8.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $p0) (local.get $p1))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $p0) (local.get $p1))))
            (local.set $t23 (i16x8.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $p2) (local.get $p3))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $p2) (local.get $p3))))
            (local.set $tot (i32x4.extadd_pairwise_i16x8_s (i16x8.add
              (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t01) (local.get $t23))
              (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t01) (local.get $t23)))))
            ;; + 16 * row j's fifth-bit sum: its qh bytes 0..3 pick entries of tables 0..3 (512 bytes each)
            (local.set $tot (i32x4.add (local.get $tot) (i32x4.shl
              (i32x4.replace_lane 3
                (i32x4.replace_lane 2
                  (i32x4.replace_lane 1
                    (i32x4.splat
                      (i32.add
                        (i32.add
                          (i32.load16_s (i32.add (local.get $t) (i32.shl (i32.load8_u offset=4 (local.get $x0)) (i32.const 1))))
                          (i32.load16_s offset=512 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=5 (local.get $x0)) (i32.const 1)))))
                        (i32.add
                          (i32.load16_s offset=1024 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=6 (local.get $x0)) (i32.const 1))))
                          (i32.load16_s offset=1536 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=7 (local.get $x0)) (i32.const 1)))))))
                    (i32.add
                      (i32.add
                        (i32.load16_s (i32.add (local.get $t) (i32.shl (i32.load8_u offset=4 (local.get $x1)) (i32.const 1))))
                        (i32.load16_s offset=512 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=5 (local.get $x1)) (i32.const 1)))))
                      (i32.add
                        (i32.load16_s offset=1024 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=6 (local.get $x1)) (i32.const 1))))
                        (i32.load16_s offset=1536 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=7 (local.get $x1)) (i32.const 1)))))))
                  (i32.add
                    (i32.add
                      (i32.load16_s (i32.add (local.get $t) (i32.shl (i32.load8_u offset=4 (local.get $x2)) (i32.const 1))))
                      (i32.load16_s offset=512 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=5 (local.get $x2)) (i32.const 1)))))
                    (i32.add
                      (i32.load16_s offset=1024 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=6 (local.get $x2)) (i32.const 1))))
                      (i32.load16_s offset=1536 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=7 (local.get $x2)) (i32.const 1)))))))
                (i32.add
                  (i32.add
                    (i32.load16_s (i32.add (local.get $t) (i32.shl (i32.load8_u offset=4 (local.get $x3)) (i32.const 1))))
                    (i32.load16_s offset=512 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=5 (local.get $x3)) (i32.const 1)))))
                  (i32.add
                    (i32.load16_s offset=1024 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=6 (local.get $x3)) (i32.const 1))))
                    (i32.load16_s offset=1536 (i32.add (local.get $t) (i32.shl (i32.load8_u offset=7 (local.get $x3)) (i32.const 1)))))))
              (i32.const 4))))
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
            ;; the four rows' m from fp16 by Fp16Fast's short path (util.h: shifted into f32 position,
            ;; times 2^112), exact for every finite half, zero and subnormal ones included; an Inf or
            ;; NaN (exponent 31) is noted in `special`, and the group is left to the caller.
            (local.set $h
              (v128.load16_lane offset=2 align=1 6 (local.get $x3)
                (v128.load16_lane offset=2 align=1 4 (local.get $x2)
                  (v128.load16_lane offset=2 align=1 2 (local.get $x1)
                    (v128.load16_lane offset=2 align=1 0 (local.get $x0) (v128.const i32x4 0 0 0 0))))))
            (local.set $special (i32x4.max_u (local.get $special) (v128.and (local.get $h) (local.get $exp_mask))))
            (local.set $dx
              (f32x4.mul
                (v128.and (i32x4.shr_s (i32x4.shl (local.get $h) (i32.const 16)) (i32.const 3)) (local.get $half_bits))
                (local.get $half_scale)))
            ;; acc += m * s
            (local.set $acc (f32x4.add (local.get $acc)
              (f32x4.mul (local.get $dx) (f32x4.splat (f32.load (local.get $sb))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 24)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 24)))
            (local.set $x2 (i32.add (local.get $x2) (i32.const 24)))
            (local.set $x3 (i32.add (local.get $x3) (i32.const 24)))
            (local.set $ab (i32.add (local.get $ab) (i32.const 36)))
            (local.set $db (i32.add (local.get $db) (i32.const 4)))
            (local.set $sb (i32.add (local.get $sb) (i32.const 4)))
            (local.set $t (i32.add (local.get $t) (i32.const 2048)))
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
