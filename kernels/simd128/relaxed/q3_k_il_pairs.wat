;; Q3_K_IL x Q8_K decode of row pairs with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s, written by
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
;; (q3_k_scales in util.h; scale - 32), d (fp16) at 108.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb super-blocks per row; rows r and r + pairs (r < pairs) of the Q3_K_IL matrix at w with rows
  ;; w_stride bytes apart; y the token's Q8_K blocks (292 bytes: f32 d, qs[256] at 4, bsums[16] at
  ;; 260), y_il the same with its quants in the layout's order (acts_q2_k_il); k the table
  ;; relaxed_constants (relaxed_slots.cpp); out[r] and out[r + pairs] receive the dots.
  (func (export "q3_k_il_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32)
    (param $y_il i32) (param $k i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $yi i32) (local $end i32)
    (local $acc v128) (local $dot0 v128) (local $dot1 v128) (local $min0 v128) (local $min1 v128)
    (local $p0 v128) (local $p1 v128) (local $e0 v128) (local $e1 v128) (local $o0 v128) (local $o1 v128)
    (local $b0 v128) (local $b1 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $v v128) (local $v4 v128)
    (local $t v128) (local $ab v128) (local $cd v128) (local $hd v128) (local $ex v128) (local $tiny v128)
    (local $hb v128) (local $p v128) (local $sc0 v128) (local $sc1 v128) (local $oa0 v128) (local $oa1 v128)
    (local $ob0 v128) (local $ob1 v128)
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $rows
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $w) (i32.mul (i32.add (local.get $r) (local.get $pairs)) (local.get $w_stride))))
        (local.set $yb (local.get $y))
        (local.set $yi (local.get $y_il))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 110))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            (local.set $b0 (i16x8.shl (v128.load offset=260 align=1 (local.get $yb)) (i32.const 2)))
            (local.set $b1 (i16x8.shl (v128.load offset=276 align=1 (local.get $yb)) (i32.const 2)))
            (local.set $p (v128.load offset=94 align=1 (local.get $x0)))
            (local.set $sc0 (i8x16.sub (v128.or
              (v128.and (i8x16.shuffle 2 3 4 5 6 7 8 9 18 19 20 21 22 23 24 25 (local.get $p) (i16x8.shr_u (local.get $p) (i32.const 4)))
                        (v128.load offset=0 (local.get $k)))
              (v128.and (i16x8.shr_u (i16x8.mul (i8x16.shuffle 10 11 12 13 10 11 12 13 10 11 12 13 10 11 12 13 (local.get $p) (local.get $p))
                                                (v128.load offset=480 (local.get $k))) (i32.const 2))
                        (v128.load offset=32 (local.get $k))))
              (v128.load offset=496 (local.get $k))))
            (local.set $p (v128.load offset=94 align=1 (local.get $x1)))
            (local.set $sc1 (i8x16.sub (v128.or
              (v128.and (i8x16.shuffle 2 3 4 5 6 7 8 9 18 19 20 21 22 23 24 25 (local.get $p) (i16x8.shr_u (local.get $p) (i32.const 4)))
                        (v128.load offset=0 (local.get $k)))
              (v128.and (i16x8.shr_u (i16x8.mul (i8x16.shuffle 10 11 12 13 10 11 12 13 10 11 12 13 10 11 12 13 (local.get $p) (local.get $p))
                                                (v128.load offset=480 (local.get $k))) (i32.const 2))
                        (v128.load offset=32 (local.get $k))))
              (v128.load offset=496 (local.get $k))))
            ;; qs[0..15]: sub-blocks 0..7 and 8..15, elements 0..3
            (local.set $a0 (v128.load offset=4 align=1 (local.get $yi)))
            (local.set $a1 (v128.load offset=20 align=1 (local.get $yi)))
            (local.set $a2 (v128.load offset=132 align=1 (local.get $yi)))
            (local.set $a3 (v128.load offset=148 align=1 (local.get $yi)))
            (local.set $v (v128.load offset=32 align=1 (local.get $x0)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (v128.load offset=0 align=1 (local.get $x0)))
            (local.set $e0 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k)))))))
            (local.set $oa0 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k)))))))
            (local.set $v (v128.load offset=32 align=1 (local.get $x1)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (v128.load offset=0 align=1 (local.get $x1)))
            (local.set $e1 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k)))))))
            (local.set $oa1 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k)))))))
            ;; qs[16..31]: sub-blocks 0..7 and 8..15, elements 4..7
            (local.set $a0 (v128.load offset=36 align=1 (local.get $yi)))
            (local.set $a1 (v128.load offset=52 align=1 (local.get $yi)))
            (local.set $a2 (v128.load offset=164 align=1 (local.get $yi)))
            (local.set $a3 (v128.load offset=180 align=1 (local.get $yi)))
            (local.set $v (v128.load offset=48 align=1 (local.get $x0)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (v128.load offset=16 align=1 (local.get $x0)))
            (local.set $e0 (i16x8.add (local.get $e0) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k))))))))
            (local.set $oa0 (i16x8.add (local.get $oa0) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k))))))))
            (local.set $v (v128.load offset=48 align=1 (local.get $x1)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (v128.load offset=16 align=1 (local.get $x1)))
            (local.set $e1 (i16x8.add (local.get $e1) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k))))))))
            (local.set $oa1 (i16x8.add (local.get $oa1) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k))))))))
            ;; qs[32..47]: sub-blocks 0..7 and 8..15, elements 8..11
            (local.set $a0 (v128.load offset=68 align=1 (local.get $yi)))
            (local.set $a1 (v128.load offset=84 align=1 (local.get $yi)))
            (local.set $a2 (v128.load offset=196 align=1 (local.get $yi)))
            (local.set $a3 (v128.load offset=212 align=1 (local.get $yi)))
            (local.set $v (v128.load offset=64 align=1 (local.get $x0)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (i16x8.shr_u (v128.load offset=0 align=1 (local.get $x0)) (i32.const 4)))
            (local.set $e0 (i16x8.add (local.get $e0) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k))))))))
            (local.set $ob0 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k)))))))
            (local.set $v (v128.load offset=64 align=1 (local.get $x1)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (i16x8.shr_u (v128.load offset=0 align=1 (local.get $x1)) (i32.const 4)))
            (local.set $e1 (i16x8.add (local.get $e1) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k))))))))
            (local.set $ob1 (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k)))))))
            ;; qs[48..63]: sub-blocks 0..7 and 8..15, elements 12..15
            (local.set $a0 (v128.load offset=100 align=1 (local.get $yi)))
            (local.set $a1 (v128.load offset=116 align=1 (local.get $yi)))
            (local.set $a2 (v128.load offset=228 align=1 (local.get $yi)))
            (local.set $a3 (v128.load offset=244 align=1 (local.get $yi)))
            (local.set $v (v128.load offset=80 align=1 (local.get $x0)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (i16x8.shr_u (v128.load offset=16 align=1 (local.get $x0)) (i32.const 4)))
            (local.set $e0 (i16x8.add (local.get $e0) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k))))))))
            (local.set $ob0 (i16x8.add (local.get $ob0) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k))))))))
            (local.set $v (v128.load offset=80 align=1 (local.get $x1)))
            (local.set $v4 (i16x8.shr_u (local.get $v) (i32.const 4)))
            (local.set $hb (i16x8.shr_u (v128.load offset=16 align=1 (local.get $x1)) (i32.const 4)))
            (local.set $e1 (i16x8.add (local.get $e1) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $v) (v128.load offset=384 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (v128.load offset=448 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $v4) (v128.load offset=384 (local.get $k))) (v128.and (local.get $hb) (v128.load offset=448 (local.get $k))))))))
            (local.set $ob1 (i16x8.add (local.get $ob1) (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (local.get $v) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (v128.load offset=288 (local.get $k)))))
                 (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (local.get $v4) (v128.load offset=400 (local.get $k))) (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (v128.load offset=288 (local.get $k))))))))
            (local.set $dot0 (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.sub (local.get $e0) (local.get $b0)) (i16x8.extend_low_i8x16_s (local.get $sc0)))
              (i32x4.dot_i16x8_s (i16x8.sub (i16x8.add (i16x8.shr_s (local.get $oa0) (i32.const 2)) (i16x8.shr_s (local.get $ob0) (i32.const 2))) (local.get $b1))
                                 (i16x8.extend_high_i8x16_s (local.get $sc0)))))
            (local.set $dot1 (i32x4.add
              (i32x4.dot_i16x8_s (i16x8.sub (local.get $e1) (local.get $b0)) (i16x8.extend_low_i8x16_s (local.get $sc1)))
              (i32x4.dot_i16x8_s (i16x8.sub (i16x8.add (i16x8.shr_s (local.get $oa1) (i32.const 2)) (i16x8.shr_s (local.get $ob1) (i32.const 2))) (local.get $b1))
                                 (i16x8.extend_high_i8x16_s (local.get $sc1)))))
            (local.set $ab (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $dot0) (local.get $dot1))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $dot0) (local.get $dot1))))
            (local.set $hd (v128.load16_lane offset=108 align=1 2 (local.get $x1)
              (v128.load16_lane offset=108 align=1 0 (local.get $x0) (v128.const i32x4 0 0 0 0))))
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (f32x4.convert_i32x4_s (i32x4.add (local.get $ab) (i8x16.shuffle 8 9 10 11 12 13 14 15 8 9 10 11 12 13 14 15 (local.get $ab) (local.get $ab))))
              (f32x4.mul
                (v128.or
                  (v128.or
                    (f32x4.sub
                      (i32x4.add
                        (i32x4.add (i32x4.shr_u (i32x4.shl (local.get $hd) (i32.const 17)) (i32.const 4)) (v128.load offset=48 (local.get $k)))
                        (v128.and (local.tee $tiny (i32x4.eq (local.tee $ex (v128.and (local.get $hd) (v128.load offset=80 (local.get $k))))
                                                             (v128.const i32x4 0 0 0 0)))
                                  (v128.load offset=64 (local.get $k))))
                      (v128.and (local.get $tiny) (v128.load offset=112 (local.get $k))))
                    (v128.and (i32x4.eq (local.get $ex) (v128.load offset=80 (local.get $k))) (v128.load offset=96 (local.get $k))))
                  (i32x4.shl (i32x4.shr_u (local.get $hd) (i32.const 15)) (i32.const 31)))
                (f32x4.splat (f32.load align=1 (local.get $yb)))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 110)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 110)))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (local.set $yi (i32.add (local.get $yi) (i32.const 292)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32x4.extract_lane 0 (local.get $acc)))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32x4.extract_lane 1 (local.get $acc)))
        (br_if $rows (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
