;; TQ2_0 x Q8_K decode, rows r and r + pairs together, with relaxed SIMD's
;; i16x8.relaxed_dot_i8x16_i7x16_s: the 2-bit codes as stored (0..3) are the i7 operand, the
;; activation quants the i8 one, 16 products in one instruction where the SIMD128 body
;; (tq2_0_pairs_simd128 in tq_dot.cpp) needs the activations split into even / odd i16 and two
;; multiplies. Hand-written because this toolchain's clang 14 cannot emit relaxed SIMD;
;; wasm/tools/splice_relaxed.mjs puts its body in place of ox_simd128_tq2_0_pairs in the relaxed copy
;; of the module (see kernels/simd128/relaxed_slots.h for the contract). wabt 1.0.32 spells
;; relaxed_dot without "relaxed_" (i16x8.dot_i8x16_i7x16_s).
;;
;; Same result, bit for bit, as the SIMD128 body and as the reference (vec_dot_tq2_0_q8_k): per block
;; sum(code * a) - sum(a) is the reference's sum((code - 1) * a), exactly (a lane of a relaxed dot
;; holds two products of at most 3 * 128, and 16 dots are added per block: 12288 at most); then the
;; same scalar float steps: fp16 d by util.h's fp16() (an integer path, no subnormal float operand),
;; times the activation block's d, times the converted total, added to the row's sum in block order.
;; Byte m of qs[32j + 16h ..] holds elements 128j + 32l + 16h + m at bits 2l..2l+1: a u16 shift by 2l
;; and a mask of 3 per byte gives them (the mask drops what the shift moves across bytes).
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb blocks (66 bytes: qs[64], fp16 d) per row of the matrix at w, rows w_stride bytes apart; y the
  ;; token's Q8_K blocks (292 bytes: f32 d, qs[256], bsums); a_sum[i] the sum of block i's quants;
  ;; out[r] and out[r + pairs] receive the dots. `act` (the SIMD128 body's split quants) is not read.
  (func (export "tq2_0_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32) (param $act i32)
    (param $a_sum i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $sb i32) (local $end i32)
    (local $h i32) (local $ex i32) (local $tiny i32) (local $s0 i32) (local $s1 i32)
    (local $sum0 f32) (local $sum1 f32) (local $dw f32) (local $yd f32)
    (local $m3 v128) (local $q0 v128) (local $q1 v128) (local $a v128) (local $p0 v128) (local $p1 v128) (local $t v128)
    (local.set $m3 (v128.const i8x16 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3 3))
    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $row
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $w) (i32.mul (i32.add (local.get $r) (local.get $pairs)) (local.get $w_stride))))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 66))))
        (local.set $yb (local.get $y))
        (local.set $sb (local.get $a_sum))
        (local.set $sum0 (f32.const 0))
        (local.set $sum1 (f32.const 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            (local.set $p0 (v128.const i32x4 0 0 0 0))
            (local.set $p1 (v128.const i32x4 0 0 0 0))
            ;; qs[0..15] of both rows: elements 0+32l+0..
            (local.set $q0 (v128.load offset=0 align=1 (local.get $x0)))
            (local.set $q1 (v128.load offset=0 align=1 (local.get $x1)))
            (local.set $a (v128.load offset=4 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q0) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q1) (local.get $m3)))))
            (local.set $a (v128.load offset=36 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 2)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 2)) (local.get $m3)))))
            (local.set $a (v128.load offset=68 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 4)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 4)) (local.get $m3)))))
            (local.set $a (v128.load offset=100 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 6)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 6)) (local.get $m3)))))
            ;; qs[16..31] of both rows: elements 0+32l+16..
            (local.set $q0 (v128.load offset=16 align=1 (local.get $x0)))
            (local.set $q1 (v128.load offset=16 align=1 (local.get $x1)))
            (local.set $a (v128.load offset=20 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q0) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q1) (local.get $m3)))))
            (local.set $a (v128.load offset=52 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 2)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 2)) (local.get $m3)))))
            (local.set $a (v128.load offset=84 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 4)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 4)) (local.get $m3)))))
            (local.set $a (v128.load offset=116 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 6)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 6)) (local.get $m3)))))
            ;; qs[32..47] of both rows: elements 128+32l+0..
            (local.set $q0 (v128.load offset=32 align=1 (local.get $x0)))
            (local.set $q1 (v128.load offset=32 align=1 (local.get $x1)))
            (local.set $a (v128.load offset=132 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q0) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q1) (local.get $m3)))))
            (local.set $a (v128.load offset=164 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 2)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 2)) (local.get $m3)))))
            (local.set $a (v128.load offset=196 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 4)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 4)) (local.get $m3)))))
            (local.set $a (v128.load offset=228 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 6)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 6)) (local.get $m3)))))
            ;; qs[48..63] of both rows: elements 128+32l+16..
            (local.set $q0 (v128.load offset=48 align=1 (local.get $x0)))
            (local.set $q1 (v128.load offset=48 align=1 (local.get $x1)))
            (local.set $a (v128.load offset=148 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q0) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (local.get $q1) (local.get $m3)))))
            (local.set $a (v128.load offset=180 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 2)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 2)) (local.get $m3)))))
            (local.set $a (v128.load offset=212 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 4)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 4)) (local.get $m3)))))
            (local.set $a (v128.load offset=244 align=1 (local.get $yb)))
            (local.set $p0 (i16x8.add (local.get $p0) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q0) (i32.const 6)) (local.get $m3)))))
            (local.set $p1 (i16x8.add (local.get $p1) (i16x8.dot_i8x16_i7x16_s (local.get $a) (v128.and (i16x8.shr_u (local.get $q1) (i32.const 6)) (local.get $m3)))))
            ;; [row 0's lanes 0 + 2, 1 + 3, row 1's likewise] as i32, then each row's total less sum(a)
            (local.set $p0 (i32x4.extadd_pairwise_i16x8_s (local.get $p0)))
            (local.set $p1 (i32x4.extadd_pairwise_i16x8_s (local.get $p1)))
            (local.set $t (i32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $p0) (local.get $p1))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $p0) (local.get $p1))))
            (local.set $s0 (i32.sub (i32.add (i32x4.extract_lane 0 (local.get $t)) (i32x4.extract_lane 1 (local.get $t)))
                                    (i32.load (local.get $sb))))
            (local.set $s1 (i32.sub (i32.add (i32x4.extract_lane 2 (local.get $t)) (i32x4.extract_lane 3 (local.get $t)))
                                    (i32.load (local.get $sb))))
            (local.set $yd (f32.load (local.get $yb)))
            ;; sum += (fp16(d) * y.d) * float(total), row 0 then row 1
            (local.set $h (i32.load16_u offset=64 align=1 (local.get $x0)))
            (local.set $ex (i32.and (local.get $h) (i32.const 0x7C00)))
            (local.set $tiny (i32.sub (i32.const 0) (i32.eqz (local.get $ex))))
            (local.set $dw (f32.reinterpret_i32 (i32.or (i32.or
              (i32.reinterpret_f32 (f32.sub
                (f32.reinterpret_i32 (i32.add (i32.add (i32.shl (i32.and (local.get $h) (i32.const 0x7FFF)) (i32.const 13))
                                                       (i32.const 0x38000000))
                                              (i32.and (local.get $tiny) (i32.const 0x800000))))
                (f32.reinterpret_i32 (i32.and (local.get $tiny) (i32.const 0x38800000)))))
              (select (i32.const 0x7F800000) (i32.const 0) (i32.eq (local.get $ex) (i32.const 0x7C00))))
              (i32.shl (i32.and (local.get $h) (i32.const 0x8000)) (i32.const 16)))))
            (local.set $sum0 (f32.add (local.get $sum0)
              (f32.mul (f32.mul (local.get $dw) (local.get $yd)) (f32.convert_i32_s (local.get $s0)))))
            (local.set $h (i32.load16_u offset=64 align=1 (local.get $x1)))
            (local.set $ex (i32.and (local.get $h) (i32.const 0x7C00)))
            (local.set $tiny (i32.sub (i32.const 0) (i32.eqz (local.get $ex))))
            (local.set $dw (f32.reinterpret_i32 (i32.or (i32.or
              (i32.reinterpret_f32 (f32.sub
                (f32.reinterpret_i32 (i32.add (i32.add (i32.shl (i32.and (local.get $h) (i32.const 0x7FFF)) (i32.const 13))
                                                       (i32.const 0x38000000))
                                              (i32.and (local.get $tiny) (i32.const 0x800000))))
                (f32.reinterpret_i32 (i32.and (local.get $tiny) (i32.const 0x38800000)))))
              (select (i32.const 0x7F800000) (i32.const 0) (i32.eq (local.get $ex) (i32.const 0x7C00))))
              (i32.shl (i32.and (local.get $h) (i32.const 0x8000)) (i32.const 16)))))
            (local.set $sum1 (f32.add (local.get $sum1)
              (f32.mul (f32.mul (local.get $dw) (local.get $yd)) (f32.convert_i32_s (local.get $s1)))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 66)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 66)))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (local.set $sb (i32.add (local.get $sb) (i32.const 4)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2))) (local.get $sum0))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
                   (local.get $sum1))
        (br_if $row (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
