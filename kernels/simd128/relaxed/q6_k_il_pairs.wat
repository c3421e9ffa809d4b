;; Q6_K_IL x Q8_K decode of row pairs (core/quant/interleave.h): as q6_k_pairs.wat, with one
;; i32x4.dot_i16x8_s per two 16-quant sub-blocks instead of one per sub-block, and no splat of a
;; scale per sub-block. In the interleaved layout the even 16-bit lanes of a plane's two vectors
;; hold sub-block 8h + 2j and the odd lanes 8h + 2j + 1, and y_il (kernels/simd128/interleave.h:
;; acts_q6_k_il) pairs with them lane for lane; so the two relaxed dots add up in one i16 vector (a
;; lane at most 4 * 128 * 63 = 32256) and meet the scale pair [s_8h+2j, s_8h+2j+1] of every i32
;; lane, a 4-byte splat of the i16 scales. Spliced in place of ox_simd128_q6_k_il_pairs
;; (kernels/simd128/relaxed_slots.h); wabt 1.0.32 spells the relaxed dot i16x8.dot_i8x16_i7x16_s.
;;
;; Same bits as the scalar reference (quant::vec_dot_q6_k_il_q8_k, what the SIMD128 body of the
;; slot runs): per block the exact integer sum (sum of sc * q * y less 32 * sum of sc * bsums, its
;; lanes added exactly), then (d * y.d) * float(isum) added to the row's float sum in block order.
;; The quants q (0..63) are the i7 operand, so the relaxed dot is deterministic.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb super-blocks per row; rows r and r + pairs of w (rows w_stride bytes apart) against y_il, the
  ;; token's Q8_K blocks in the layout's order (y, in Q8_K's order, is for the SIMD128 body); k the
  ;; constant table (relaxed_slots.cpp); out[r] and out[r + pairs] receive the dots.
  (func (export "q6_k_il_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32)
    (param $y_il i32) (param $k i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $end i32) (local $h i32)
    (local $q0 i32) (local $q0h i32) (local $q0s i32) (local $q1 i32) (local $q1h i32) (local $q1s i32) (local $ap i32)
    (local $m4 v128) (local $top2 v128) (local $ex v128) (local $tiny v128) (local $acc v128)
    (local $dot0 v128) (local $dot1 v128) (local $sc0 v128) (local $sc1 v128) (local $a0 v128) (local $a1 v128)
    (local $l0 v128) (local $l1 v128) (local $h0 v128) (local $h1 v128) (local $b0 v128) (local $b1 v128)
    (local $t v128) (local $u v128) (local $hd v128)
    ;; constants from memory once: V8 rebuilds a v128.const at every use inside a loop
    (local.set $m4 (v128.load (local.get $k)))
    (local.set $top2 (v128.load offset=32 (local.get $k)))
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $rows
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $w) (i32.mul (i32.add (local.get $r) (local.get $pairs)) (local.get $w_stride))))
        (local.set $yb (local.get $y_il))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 210))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            (local.set $dot0 (v128.const i32x4 0 0 0 0))
            (local.set $dot1 (v128.const i32x4 0 0 0 0))
            (local.set $q0 (local.get $x0))
            (local.set $q0h (local.get $x0))
            (local.set $q0s (local.get $x0))
            (local.set $q1 (local.get $x1))
            (local.set $q1h (local.get $x1))
            (local.set $q1s (local.get $x1))
            (local.set $ap (local.get $yb))
            (local.set $h (i32.const 2))
            ;; Half h: plane j of bytes l takes nibble j / 2 of ql[64h + 32(j & 1) + l] and bits 2j, 2j + 1
            ;; of qh[32h + l], moved to bits 4-5 (i16 shifts: what crosses into the other byte is masked off).
            (loop $halves
              ;; the half's eight scales of each row as i16
              (local.set $sc0 (i16x8.extend_low_i8x16_s (v128.load64_zero offset=192 align=1 (local.get $q0s))))
              (local.set $sc1 (i16x8.extend_low_i8x16_s (v128.load64_zero offset=192 align=1 (local.get $q1s))))
              ;; plane 0: sub-blocks 8h + 0 (even lanes) and 8h + 1 (odd lanes)
              (local.set $a0 (v128.load offset=4 align=1 (local.get $ap)))
              (local.set $a1 (v128.load offset=20 align=1 (local.get $ap)))
              (local.set $l0 (v128.load offset=0 align=1 (local.get $q0)))
              (local.set $l1 (v128.load offset=16 align=1 (local.get $q0)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q0h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q0h)))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l0) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 4)) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l1) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 4)) (local.get $top2)))))
                (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $sc0) (local.get $sc0)))))
              (local.set $l0 (v128.load offset=0 align=1 (local.get $q1)))
              (local.set $l1 (v128.load offset=16 align=1 (local.get $q1)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q1h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q1h)))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l0) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 4)) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l1) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 4)) (local.get $top2)))))
                (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $sc1) (local.get $sc1)))))
              ;; plane 1: sub-blocks 8h + 2 (even lanes) and 8h + 3 (odd lanes)
              (local.set $a0 (v128.load offset=36 align=1 (local.get $ap)))
              (local.set $a1 (v128.load offset=52 align=1 (local.get $ap)))
              (local.set $l0 (v128.load offset=32 align=1 (local.get $q0)))
              (local.set $l1 (v128.load offset=48 align=1 (local.get $q0)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q0h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q0h)))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l0) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 2)) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l1) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 2)) (local.get $top2)))))
                (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $sc0) (local.get $sc0)))))
              (local.set $l0 (v128.load offset=32 align=1 (local.get $q1)))
              (local.set $l1 (v128.load offset=48 align=1 (local.get $q1)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q1h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q1h)))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l0) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 2)) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l1) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 2)) (local.get $top2)))))
                (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $sc1) (local.get $sc1)))))
              ;; plane 2: sub-blocks 8h + 4 (even lanes) and 8h + 5 (odd lanes)
              (local.set $a0 (v128.load offset=68 align=1 (local.get $ap)))
              (local.set $a1 (v128.load offset=84 align=1 (local.get $ap)))
              (local.set $l0 (v128.load offset=0 align=1 (local.get $q0)))
              (local.set $l1 (v128.load offset=16 align=1 (local.get $q0)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q0h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q0h)))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (i16x8.shr_u (local.get $l0) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h0) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (i16x8.shr_u (local.get $l1) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h1) (local.get $top2)))))
                (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $sc0) (local.get $sc0)))))
              (local.set $l0 (v128.load offset=0 align=1 (local.get $q1)))
              (local.set $l1 (v128.load offset=16 align=1 (local.get $q1)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q1h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q1h)))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (i16x8.shr_u (local.get $l0) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h0) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (i16x8.shr_u (local.get $l1) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h1) (local.get $top2)))))
                (i8x16.shuffle 8 9 10 11 8 9 10 11 8 9 10 11 8 9 10 11 (local.get $sc1) (local.get $sc1)))))
              ;; plane 3: sub-blocks 8h + 6 (even lanes) and 8h + 7 (odd lanes)
              (local.set $a0 (v128.load offset=100 align=1 (local.get $ap)))
              (local.set $a1 (v128.load offset=116 align=1 (local.get $ap)))
              (local.set $l0 (v128.load offset=32 align=1 (local.get $q0)))
              (local.set $l1 (v128.load offset=48 align=1 (local.get $q0)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q0h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q0h)))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (i16x8.shr_u (local.get $l0) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h0) (i32.const 2)) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (i16x8.shr_u (local.get $l1) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h1) (i32.const 2)) (local.get $top2)))))
                (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $sc0) (local.get $sc0)))))
              (local.set $l0 (v128.load offset=32 align=1 (local.get $q1)))
              (local.set $l1 (v128.load offset=48 align=1 (local.get $q1)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q1h)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q1h)))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (i16x8.shr_u (local.get $l0) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h0) (i32.const 2)) (local.get $top2))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (i16x8.shr_u (local.get $l1) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h1) (i32.const 2)) (local.get $top2)))))
                (i8x16.shuffle 12 13 14 15 12 13 14 15 12 13 14 15 12 13 14 15 (local.get $sc1) (local.get $sc1)))))
              (local.set $q0 (i32.add (local.get $q0) (i32.const 64)))
              (local.set $q1 (i32.add (local.get $q1) (i32.const 64)))
              (local.set $ap (i32.add (local.get $ap) (i32.const 128)))
              (local.set $q0h (i32.add (local.get $q0h) (i32.const 32)))
              (local.set $q1h (i32.add (local.get $q1h) (i32.const 32)))
              (local.set $q0s (i32.add (local.get $q0s) (i32.const 8)))
              (local.set $q1s (i32.add (local.get $q1s) (i32.const 8)))
              (br_if $halves (local.tee $h (i32.sub (local.get $h) (i32.const 1)))))
            ;; less 32 * sum_k sc_k * bsums_k (bsum_dot_s8, shifted by 5), as in q6_k_pairs.wat
            (local.set $b0 (v128.load offset=260 align=1 (local.get $yb)))
            (local.set $b1 (v128.load offset=276 align=1 (local.get $yb)))
            (local.set $t (v128.load offset=192 align=1 (local.get $x0)))
            (local.set $dot0 (i32x4.sub (local.get $dot0) (i32x4.shl (i32x4.add
              (i32x4.dot_i16x8_s (local.get $b0) (i16x8.extend_low_i8x16_s (local.get $t)))
              (i32x4.dot_i16x8_s (local.get $b1) (i16x8.extend_high_i8x16_s (local.get $t)))) (i32.const 5))))
            (local.set $t (v128.load offset=192 align=1 (local.get $x1)))
            (local.set $dot1 (i32x4.sub (local.get $dot1) (i32x4.shl (i32x4.add
              (i32x4.dot_i16x8_s (local.get $b0) (i16x8.extend_low_i8x16_s (local.get $t)))
              (i32x4.dot_i16x8_s (local.get $b1) (i16x8.extend_high_i8x16_s (local.get $t)))) (i32.const 5))))
            ;; [isum0, isum1, isum0, isum1]: the lanes of each row added (exact)
            (local.set $t (i32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $dot0) (local.get $dot1))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $dot0) (local.get $dot1))))
            (local.set $t (i32x4.add
              (i8x16.shuffle 0 1 2 3 8 9 10 11 0 1 2 3 8 9 10 11 (local.get $t) (local.get $t))
              (i8x16.shuffle 4 5 6 7 12 13 14 15 4 5 6 7 12 13 14 15 (local.get $t) (local.get $t))))
            ;; [d0, d1, 0, 0] from fp16 (fp16x4_to_f32 in util.h), times y.d; acc += that * float(isum)
            (local.set $hd (v128.load16_lane offset=208 align=1 2 (local.get $x1)
              (v128.load16_lane offset=208 align=1 0 (local.get $x0) (v128.const i32x4 0 0 0 0))))
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (f32x4.mul
                (v128.or
                  (v128.or
                    (f32x4.sub
                      (i32x4.add
                        (i32x4.add (i32x4.shr_u (i32x4.shl (local.get $hd) (i32.const 17)) (i32.const 4))
                                   (v128.load offset=48 (local.get $k)))
                        (v128.and (local.tee $tiny (i32x4.eq (local.tee $ex (v128.and (local.get $hd) (v128.load offset=80 (local.get $k))))
                                                             (v128.const i32x4 0 0 0 0)))
                                  (v128.load offset=64 (local.get $k))))
                      (v128.and (local.get $tiny) (v128.load offset=112 (local.get $k))))
                    (v128.and (i32x4.eq (local.get $ex) (v128.load offset=80 (local.get $k))) (v128.load offset=96 (local.get $k))))
                  (i32x4.shl (i32x4.shr_u (local.get $hd) (i32.const 15)) (i32.const 31)))
                (f32x4.splat (f32.load align=1 (local.get $yb))))
              (f32x4.convert_i32x4_s (local.get $t)))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 210)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 210)))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32x4.extract_lane 0 (local.get $acc)))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32x4.extract_lane 1 (local.get $acc)))
        (br_if $rows (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
