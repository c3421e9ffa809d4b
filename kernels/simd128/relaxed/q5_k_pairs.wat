;; Q5_K x Q8_K decode of row pairs with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s: q4_k_pairs.wat
;; (read it first) with each quant's fifth bit put in from qh before the dot. Spliced in place of
;; ox_simd128_q5_k_pairs (relaxed_slots.cpp; see kernels/simd128/relaxed_slots.h for the contract).
;; wabt 1.0.32 spells relaxed_dot without "relaxed_" (i16x8.dot_i8x16_i7x16_s).
;;
;; Same result, bit for bit, as the C++ body (kquant::rows2_q5_k, the rows2_k4 of Q4_K with Q5_K's
;; weights): every integer sum is exact, and the float steps run in the same order. The quants
;; (0..31) are the i7 operand, so the relaxed dot is deterministic; a pair of products (at most
;; 2 * 128 * 31) cannot saturate its i16 lane, and a sub-block's four per lane stay below 32767.
;;
;; Block layout (176 bytes): d, dmin (fp16) at 0, 2; 12 bytes of scales and mins at 4; qh[32] at 16;
;; qs[128] at 48. Element 64c + l (l < 32) is the low nibble of qs[32c + l] plus 16 * bit 2c of
;; qh[l], element 64c + 32 + l the high nibble plus 16 * bit 2c + 1. A 16-bit shift moves bit b of
;; every byte to bit 4 (left by 4 - b, right by b - 4: for shifts up to 4 no bit crosses into bit 4
;; or 12 from the other byte of the lane) and the 0x10 mask (table offset 288) keeps it.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb super-blocks per row; rows r and r + pairs (r < pairs) of the matrix at w with rows
  ;; w_stride bytes apart; y the token's Q8_K blocks; k the constant table (relaxed_constants in
  ;; relaxed_slots.cpp); out[r] and out[r + pairs] receive the dots. `act` (the pre-split
  ;; activations of the C++ body) is not read.
  (func (export "q5_k_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32)
    (param $act i32) (param $k i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $end i32)
    (local $m4 v128) (local $acc v128) (local $sum0 v128) (local $sum1 v128) (local $sc0 v128) (local $sc1 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $qa v128) (local $qb v128)
    (local $p0 v128) (local $p1 v128) (local $v0 v128) (local $v1 v128) (local $t v128) (local $u v128)
    (local $low v128) (local $high v128) (local $mins v128) (local $h v128) (local $ex v128) (local $tiny v128)
    (local $bsum32 v128) (local $ab v128) (local $cd v128)
    (local $ha v128) (local $hb v128) (local $m16 v128)
    (local.set $m4 (v128.load (local.get $k)))
    (local.set $m16 (v128.load offset=288 (local.get $k)))
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $rows
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $w) (i32.mul (i32.add (local.get $r) (local.get $pairs)) (local.get $w_stride))))
        (local.set $yb (local.get $y))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 176))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; Scales and mins of both blocks (unpack_k4_scales2): per block the 12 bytes a0|a1|a2
            ;; hold scales 0-3 = a0 & 63, mins 0-3 = a1 & 63, scales 4-7 = (a2 & 15) | (a0 >> 6) << 4,
            ;; mins 4-7 = (a2 >> 4) | (a1 >> 6) << 4.
            (local.set $v0 (v128.load offset=4 align=1 (local.get $x0)))
            (local.set $v1 (v128.load offset=4 align=1 (local.get $x1)))
            (local.set $t (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $v0) (local.get $v1)))
            (local.set $u (i8x16.shuffle 8 9 10 11 8 9 10 11 24 25 26 27 24 25 26 27 (local.get $v0) (local.get $v1)))
            (local.set $low (v128.and (local.get $t) (v128.load offset=16 (local.get $k))))
            (local.set $high (v128.or
              (i8x16.shuffle 0 1 2 3 20 21 22 23 8 9 10 11 28 29 30 31
                (v128.and (local.get $u) (local.get $m4))
                (v128.and (i32x4.shr_u (local.get $u) (i32.const 4)) (local.get $m4)))
              (v128.and (i32x4.shr_u (local.get $t) (i32.const 2)) (v128.load offset=32 (local.get $k)))))
            (local.set $t (i8x16.shuffle 0 1 2 3 16 17 18 19 8 9 10 11 24 25 26 27 (local.get $low) (local.get $high)))
            (local.set $mins (i8x16.shuffle 4 5 6 7 20 21 22 23 12 13 14 15 28 29 30 31 (local.get $low) (local.get $high)))
            (local.set $sc0 (i16x8.extend_low_i8x16_u (local.get $t)))
            (local.set $sc1 (i16x8.extend_high_i8x16_u (local.get $t)))
            ;; A sub-block's products add up in i16 (four per lane, at most 4 * 128 * 31) and meet its
            ;; scale in one i32x4.dot_i16x8_s against the scale in every lane (relaxed_swizzle of the
            ;; i16 scales by the table's pick of that lane; the pick indices are always in range).
            (local.set $sum0 (v128.const i32x4 0 0 0 0))
            (local.set $sum1 (v128.const i32x4 0 0 0 0))
            ;; chunk 0: sub-blocks 0 (low nibbles of qs[0..31], qh bit 0) and 1 (high nibbles, qh bit 1)
            (local.set $a0 (v128.load offset=4 align=1 (local.get $yb)))
            (local.set $a1 (v128.load offset=20 align=1 (local.get $yb)))
            (local.set $a2 (v128.load offset=36 align=1 (local.get $yb)))
            (local.set $a3 (v128.load offset=52 align=1 (local.get $yb)))
            (local.set $p0 (v128.load offset=128 (local.get $k)))
            (local.set $p1 (v128.load offset=144 (local.get $k)))
            (local.set $qa (v128.load offset=48 align=1 (local.get $x0)))
            (local.set $qb (v128.load offset=64 align=1 (local.get $x0)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x0)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x0)))
            (local.set $sum0 (i32x4.add (local.get $sum0) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 4)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 4)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 3)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p1))))))
            (local.set $qa (v128.load offset=48 align=1 (local.get $x1)))
            (local.set $qb (v128.load offset=64 align=1 (local.get $x1)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x1)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x1)))
            (local.set $sum1 (i32x4.add (local.get $sum1) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 4)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 4)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 3)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 3)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p1))))))
            ;; chunk 1: sub-blocks 2 (low nibbles of qs[32..63], qh bit 2) and 3 (high nibbles, qh bit 3)
            (local.set $a0 (v128.load offset=68 align=1 (local.get $yb)))
            (local.set $a1 (v128.load offset=84 align=1 (local.get $yb)))
            (local.set $a2 (v128.load offset=100 align=1 (local.get $yb)))
            (local.set $a3 (v128.load offset=116 align=1 (local.get $yb)))
            (local.set $p0 (v128.load offset=160 (local.get $k)))
            (local.set $p1 (v128.load offset=176 (local.get $k)))
            (local.set $qa (v128.load offset=80 align=1 (local.get $x0)))
            (local.set $qb (v128.load offset=96 align=1 (local.get $x0)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x0)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x0)))
            (local.set $sum0 (i32x4.add (local.get $sum0) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 2)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 1)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p1))))))
            (local.set $qa (v128.load offset=80 align=1 (local.get $x1)))
            (local.set $qb (v128.load offset=96 align=1 (local.get $x1)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x1)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x1)))
            (local.set $sum1 (i32x4.add (local.get $sum1) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 2)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 2)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $ha) (i32.const 1)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shl (local.get $hb) (i32.const 1)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p1))))))
            ;; chunk 2: sub-blocks 4 (low nibbles of qs[64..95], qh bit 4) and 5 (high nibbles, qh bit 5)
            (local.set $a0 (v128.load offset=132 align=1 (local.get $yb)))
            (local.set $a1 (v128.load offset=148 align=1 (local.get $yb)))
            (local.set $a2 (v128.load offset=164 align=1 (local.get $yb)))
            (local.set $a3 (v128.load offset=180 align=1 (local.get $yb)))
            (local.set $p0 (v128.load offset=192 (local.get $k)))
            (local.set $p1 (v128.load offset=208 (local.get $k)))
            (local.set $qa (v128.load offset=112 align=1 (local.get $x0)))
            (local.set $qb (v128.load offset=128 align=1 (local.get $x0)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x0)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x0)))
            (local.set $sum0 (i32x4.add (local.get $sum0) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (local.get $ha) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (local.get $hb) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $ha) (i32.const 1)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $hb) (i32.const 1)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p1))))))
            (local.set $qa (v128.load offset=112 align=1 (local.get $x1)))
            (local.set $qb (v128.load offset=128 align=1 (local.get $x1)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x1)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x1)))
            (local.set $sum1 (i32x4.add (local.get $sum1) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (local.get $ha) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (local.get $hb) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $ha) (i32.const 1)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $hb) (i32.const 1)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p1))))))
            ;; chunk 3: sub-blocks 6 (low nibbles of qs[96..127], qh bit 6) and 7 (high nibbles, qh bit 7)
            (local.set $a0 (v128.load offset=196 align=1 (local.get $yb)))
            (local.set $a1 (v128.load offset=212 align=1 (local.get $yb)))
            (local.set $a2 (v128.load offset=228 align=1 (local.get $yb)))
            (local.set $a3 (v128.load offset=244 align=1 (local.get $yb)))
            (local.set $p0 (v128.load offset=224 (local.get $k)))
            (local.set $p1 (v128.load offset=240 (local.get $k)))
            (local.set $qa (v128.load offset=144 align=1 (local.get $x0)))
            (local.set $qb (v128.load offset=160 align=1 (local.get $x0)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x0)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x0)))
            (local.set $sum0 (i32x4.add (local.get $sum0) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $ha) (i32.const 2)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $hb) (i32.const 2)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $ha) (i32.const 3)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $hb) (i32.const 3)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc0) (local.get $p1))))))
            (local.set $qa (v128.load offset=144 align=1 (local.get $x1)))
            (local.set $qb (v128.load offset=160 align=1 (local.get $x1)))
            (local.set $ha (v128.load offset=16 align=1 (local.get $x1)))
            (local.set $hb (v128.load offset=32 align=1 (local.get $x1)))
            (local.set $sum1 (i32x4.add (local.get $sum1) (i32x4.add
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a0)
                    (v128.or (v128.and (local.get $qa) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $ha) (i32.const 2)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a1)
                    (v128.or (v128.and (local.get $qb) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $hb) (i32.const 2)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p0)))
              (i32x4.dot_i16x8_s
                (i16x8.add
                  (i16x8.dot_i8x16_i7x16_s (local.get $a2)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qa) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $ha) (i32.const 3)) (local.get $m16))))
                  (i16x8.dot_i8x16_i7x16_s (local.get $a3)
                    (v128.or (v128.and (i16x8.shr_u (local.get $qb) (i32.const 4)) (local.get $m4))
                    (v128.and (i16x8.shr_u (local.get $hb) (i32.const 3)) (local.get $m16)))))
                (i8x16.relaxed_swizzle (local.get $sc1) (local.get $p1))))))
            ;; sum_j m_j * (bsums[2j] + bsums[2j + 1]) of each row: the 32-element sums as i16
            ;; (at most 32 * 128), against the mins widened to i16
            (local.set $bsum32 (i16x8.narrow_i32x4_s
              (i32x4.extadd_pairwise_i16x8_s (v128.load offset=260 align=1 (local.get $yb)))
              (i32x4.extadd_pairwise_i16x8_s (v128.load offset=276 align=1 (local.get $yb)))))
            ;; [row 0 sum, row 0 min term, row 1 sum, row 1 min term] (hsum4x4_i32), exact
            (local.set $ab (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $sum0)
                (local.tee $t (i32x4.dot_i16x8_s (local.get $bsum32) (i16x8.extend_low_i8x16_u (local.get $mins)))))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $sum0) (local.get $t))))
            (local.set $cd (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $sum1)
                (local.tee $t (i32x4.dot_i16x8_s (local.get $bsum32) (i16x8.extend_high_i8x16_u (local.get $mins)))))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $sum1) (local.get $t))))
            ;; [d0, dmin0, d1, dmin1] from fp16 (fp16x4_to_f32 in util.h: no subnormal float operand)
            (local.set $h (i32x4.extend_low_i16x8_u
              (v128.load32_lane align=1 1 (local.get $x1) (v128.load32_zero align=1 (local.get $x0)))))
            (local.set $ex (v128.and (local.get $h) (v128.load offset=80 (local.get $k))))
            (local.set $tiny (i32x4.eq (local.get $ex) (v128.const i32x4 0 0 0 0)))
            ;; acc += totals * ([d0, dmin0, d1, dmin1] * y.d)
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (f32x4.convert_i32x4_s (i32x4.add
                (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $ab) (local.get $cd))
                (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $ab) (local.get $cd))))
              (f32x4.mul
                (v128.or
                  (v128.or
                    (f32x4.sub
                      (i32x4.add
                        (i32x4.add (i32x4.shr_u (i32x4.shl (local.get $h) (i32.const 17)) (i32.const 4))
                                   (v128.load offset=48 (local.get $k)))
                        (v128.and (local.get $tiny) (v128.load offset=64 (local.get $k))))
                      (v128.and (local.get $tiny) (v128.load offset=112 (local.get $k))))
                    (v128.and (i32x4.eq (local.get $ex) (v128.load offset=80 (local.get $k))) (v128.load offset=96 (local.get $k))))
                  (i32x4.shl (i32x4.shr_u (local.get $h) (i32.const 15)) (i32.const 31)))
                (f32x4.splat (f32.load align=1 (local.get $yb)))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 176)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 176)))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.sub (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32.sub (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc))))
        (br_if $rows (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
