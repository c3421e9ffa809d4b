;; IQ4_XS x Q8_K decode, rows r and r + pairs together, with relaxed SIMD's
;; i16x8.relaxed_dot_i8x16_i7x16_s (one pmaddubsw on x86). Spliced in place of ox_simd128_iq4_xs_pairs
;; (relaxed_slots.cpp) in the relaxed copy of the module (see kernels/simd128/relaxed_slots.h for the
;; contract). wabt 1.0.32 spells relaxed_dot without "relaxed_" (i16x8.dot_i8x16_i7x16_s).
;;
;; Each codebook value is 16 q + r(q) - 139 with its nibble q and r(q) (0..26,
;; a relaxed swizzle of rtab) the i7 operands and the activations as stored the i8 operand. Per
;; sub-block the two dots (at most 4 products a lane: 7680 and 13312) meet its scale ls - 32 in
;; i32x4.dot_i16x8_s against the splat scale, into N (the nibble part) and R; the offset comes off
;; through the bsums, C = sum over sub-blocks of (ls - 32) * (its two bsums). A row's super-block sum
;; 16 N + R - 139 C is then kquant::rows2_iq4_xs's exact integer, and the float step after it (d
;; from fp16 by fp16x4_to_f32's steps, times y.d, times the converted sum, added to the row's lane)
;; is the C++ body's, in the same order: the same bits.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb super-blocks per row; rows r and r + pairs (r < pairs) of the matrix at w (rows w_stride
  ;; bytes apart) against the Q8_K blocks at y; k the constant table (relaxed_constants in
  ;; relaxed_slots.cpp); out[r] and out[r + pairs] receive the dots. `act` is not read.
  (func (export "iq4_xs_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32) (param $act i32)
    (param $k i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $end i32) (local $ib i32) (local $p i32)
    (local $l0 i32) (local $h0 i32) (local $l1 i32) (local $h1 i32) (local $dist i32) (local $ls i32) (local $bs i32)
    (local $c0 i32) (local $c1 i32)
    (local $rtab v128) (local $m4 v128) (local $acc v128) (local $alo v128) (local $ahi v128) (local $nlo v128)
    (local $nhi v128) (local $q v128) (local $n0 v128) (local $n1 v128) (local $r0 v128) (local $r1 v128)
    (local $sc v128) (local $tot v128) (local $h v128) (local $ex v128) (local $tiny v128) (local $dx v128)
    (local.set $m4 (v128.load (local.get $k)))
    ;; kIQ4NLValues[q] - 16 q + 139 (0..26)
    (local.set $rtab (v128.const i8x16 12 19 24 26 26 24 21 17 12 8 4 1 0 0 4 12))
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $dist (i32.mul (local.get $pairs) (local.get $w_stride)))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $row
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $x0) (local.get $dist)))
        (local.set $yb (local.get $y))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 136))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; each row's scales: 4-bit halves of scales_l (offset 4, sub-block ib at bits 4 ib of
            ;; the u32) and 2-bit highs of scales_h (offset 2, bits 2 ib), shifted out as ib goes
            (local.set $l0 (i32.load offset=4 align=1 (local.get $x0)))
            (local.set $h0 (i32.load16_u offset=2 align=1 (local.get $x0)))
            (local.set $l1 (i32.load offset=4 align=1 (local.get $x1)))
            (local.set $h1 (i32.load16_u offset=2 align=1 (local.get $x1)))
            (local.set $n0 (v128.const i32x4 0 0 0 0))
            (local.set $n1 (v128.const i32x4 0 0 0 0))
            (local.set $r0 (v128.const i32x4 0 0 0 0))
            (local.set $r1 (v128.const i32x4 0 0 0 0))
            (local.set $c0 (i32.const 0))
            (local.set $c1 (i32.const 0))
            (local.set $ib (i32.const 0))
            (loop $sub_blocks
              ;; the activations of sub-block ib (qs at 4 + 32 ib) as stored, the i8 operand, and the
              ;; sum of its quants (bsums at 260 + 4 ib)
              (local.set $p (i32.add (local.get $yb) (i32.shl (local.get $ib) (i32.const 5))))
              (local.set $alo (v128.load offset=4 align=1 (local.get $p)))
              (local.set $ahi (v128.load offset=20 align=1 (local.get $p)))
              (local.set $p (i32.add (local.get $yb) (i32.shl (local.get $ib) (i32.const 2))))
              (local.set $bs (i32.add (i32.load16_s offset=260 align=1 (local.get $p)) (i32.load16_s offset=262 align=1 (local.get $p))))
              (local.set $p (i32.shl (local.get $ib) (i32.const 4)))
              ;; row 0: qs at 8 + 16 ib, low nibbles elements 0..15, high 16..31
              (local.set $q (v128.load offset=8 align=1 (i32.add (local.get $x0) (local.get $p))))
              (local.set $nlo (v128.and (local.get $q) (local.get $m4)))
              (local.set $nhi (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4)))
              (local.set $ls (i32.sub (i32.or (i32.and (local.get $l0) (i32.const 15))
                                              (i32.shl (i32.and (local.get $h0) (i32.const 3)) (i32.const 4)))
                                      (i32.const 32)))
              (local.set $c0 (i32.add (local.get $c0) (i32.mul (local.get $ls) (local.get $bs))))
              (local.set $sc (i16x8.splat (local.get $ls)))
              (local.set $n0 (i32x4.add (local.get $n0) (i32x4.dot_i16x8_s (local.get $sc)
                (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $alo) (local.get $nlo))
                           (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (local.get $nhi))))))
              (local.set $r0 (i32x4.add (local.get $r0) (i32x4.dot_i16x8_s (local.get $sc)
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $alo) (i8x16.relaxed_swizzle (local.get $rtab) (local.get $nlo)))
                  (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (i8x16.relaxed_swizzle (local.get $rtab) (local.get $nhi)))))))
              ;; row 1: qs at 8 + 16 ib, low nibbles elements 0..15, high 16..31
              (local.set $q (v128.load offset=8 align=1 (i32.add (local.get $x1) (local.get $p))))
              (local.set $nlo (v128.and (local.get $q) (local.get $m4)))
              (local.set $nhi (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4)))
              (local.set $ls (i32.sub (i32.or (i32.and (local.get $l1) (i32.const 15))
                                              (i32.shl (i32.and (local.get $h1) (i32.const 3)) (i32.const 4)))
                                      (i32.const 32)))
              (local.set $c1 (i32.add (local.get $c1) (i32.mul (local.get $ls) (local.get $bs))))
              (local.set $sc (i16x8.splat (local.get $ls)))
              (local.set $n1 (i32x4.add (local.get $n1) (i32x4.dot_i16x8_s (local.get $sc)
                (i16x8.add (i16x8.dot_i8x16_i7x16_s (local.get $alo) (local.get $nlo))
                           (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (local.get $nhi))))))
              (local.set $r1 (i32x4.add (local.get $r1) (i32x4.dot_i16x8_s (local.get $sc)
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $alo) (i8x16.relaxed_swizzle (local.get $rtab) (local.get $nlo)))
                  (i16x8.dot_i8x16_i7x16_s (local.get $ahi) (i8x16.relaxed_swizzle (local.get $rtab) (local.get $nhi)))))))
              (local.set $l0 (i32.shr_u (local.get $l0) (i32.const 4)))
              (local.set $h0 (i32.shr_u (local.get $h0) (i32.const 2)))
              (local.set $l1 (i32.shr_u (local.get $l1) (i32.const 4)))
              (local.set $h1 (i32.shr_u (local.get $h1) (i32.const 2)))
              (br_if $sub_blocks (i32.ne (local.tee $ib (i32.add (local.get $ib) (i32.const 1))) (i32.const 8))))
            ;; each row's total 16 N + R - 139 C, lane 0 = row 0's, lane 1 = row 1's (lanes 2 and 3
            ;; are not read)
            (local.set $n0 (i32x4.add (i32x4.shl (local.get $n0) (i32.const 4)) (local.get $r0)))
            (local.set $n1 (i32x4.add (i32x4.shl (local.get $n1) (i32.const 4)) (local.get $r1)))
            (local.set $tot (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $n0) (local.get $n1))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $n0) (local.get $n1))))
            (local.set $tot (i32x4.sub
              (i32x4.add (local.get $tot) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $tot) (local.get $tot)))
              (i32x4.replace_lane 1 (i32x4.splat (i32.mul (local.get $c0) (i32.const 139)))
                                    (i32.mul (local.get $c1) (i32.const 139)))))
            ;; [d0, d1, 0, 0] from fp16 by fp16x4_to_f32's steps (util.h; exact for every half)
            (local.set $h
              (v128.load16_lane align=1 2 (local.get $x1)
                (v128.load16_lane align=1 0 (local.get $x0) (v128.const i32x4 0 0 0 0))))
            (local.set $ex (v128.and (local.get $h) (v128.load offset=80 (local.get $k))))
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
                (i32x4.shl (i32x4.shr_u (local.get $h) (i32.const 15)) (i32.const 31))))
            ;; acc += totals * (d * y.d)
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (f32x4.convert_i32x4_s (local.get $tot))
              (f32x4.mul (local.get $dx) (f32x4.splat (f32.load (local.get $yb)))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 136)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 136)))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        ;; out[r] = lane 0, out[r + pairs] = lane 1
        (local.set $p (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))))
        (f32.store align=1 (local.get $p) (f32x4.extract_lane 0 (local.get $acc)))
        (f32.store align=1 (i32.add (local.get $p) (i32.shl (local.get $pairs) (i32.const 2)))
          (f32x4.extract_lane 1 (local.get $acc)))
        (br_if $row (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
