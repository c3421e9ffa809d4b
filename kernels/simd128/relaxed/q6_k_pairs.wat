;; Q6_K x Q8_K decode of row pairs with relaxed SIMD's i16x8.relaxed_dot_i8x16_i7x16_s: the SIMD128
;; body (kquant::rows2_q6_k) multiplies a 16-element sub-block in two i16x8.mul and an add, this
;; one in one instruction (pmaddubsw on x86). Assembled by wabt's wat2wasm and spliced in place of
;; ox_simd128_q6_k_pairs (kernels/simd128/relaxed_slots.h); wabt 1.0.32 spells the instruction
;; i16x8.dot_i8x16_i7x16_s (final opcode 0xfd 0x112).
;;
;; Same bits as the C++ body. There the float step works per lane (each block adds its four i32
;; lanes times d into four float lanes, summed once at the end), so the lanes must match too, and
;; do: lane m of the relaxed dot pairs elements 2m and 2m + 1 as products16 does with its even and
;; odd halves, and the scale dot, the bias and the float steps are the same instructions in the
;; same order. The quants q (0..63, q - 32 being the weight) are the i7 operand, so the relaxed dot
;; is deterministic, and a pair of products (at most 2 * 128 * 63) cannot saturate its i16 lane.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; As q4_k_pairs.wat: nb super-blocks per row, rows r and r + pairs of w (rows w_stride bytes
  ;; apart) against the token's Q8_K blocks y, out[r] and out[r + pairs]; k the constant table
  ;; (relaxed_slots.cpp); `act` is not read.
  (func (export "q6_k_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32)
    (param $act i32) (param $k i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $end i32) (local $h i32)
    (local $q0 i32) (local $q0h i32) (local $q0s i32) (local $q1 i32) (local $q1h i32) (local $q1s i32) (local $ap i32)
    (local $m4 v128) (local $top2 v128) (local $ex v128) (local $tiny v128)
    (local $acc0 v128) (local $acc1 v128) (local $dot0 v128) (local $dot1 v128) (local $bias0 v128) (local $bias1 v128)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local $l00 v128) (local $l01 v128) (local $h0 v128) (local $l10 v128) (local $l11 v128) (local $h1 v128)
    (local $b0 v128) (local $b1 v128) (local $sc v128) (local $hd v128) (local $d v128)
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
        (local.set $yb (local.get $y))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 210))))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; q - 32 with q in 0..63: start from -32 * sum_k sc_k * bsums_k (bsum_dot_s8, shifted by 5)
            (local.set $b0 (v128.load offset=260 align=1 (local.get $yb)))
            (local.set $b1 (v128.load offset=276 align=1 (local.get $yb)))
            (local.set $sc (v128.load offset=192 align=1 (local.get $x0)))
            (local.set $bias0 (i32x4.shl (i32x4.add
              (i32x4.dot_i16x8_s (local.get $b0) (i16x8.extend_low_i8x16_s (local.get $sc)))
              (i32x4.dot_i16x8_s (local.get $b1) (i16x8.extend_high_i8x16_s (local.get $sc)))) (i32.const 5)))
            (local.set $sc (v128.load offset=192 align=1 (local.get $x1)))
            (local.set $bias1 (i32x4.shl (i32x4.add
              (i32x4.dot_i16x8_s (local.get $b0) (i16x8.extend_low_i8x16_s (local.get $sc)))
              (i32x4.dot_i16x8_s (local.get $b1) (i16x8.extend_high_i8x16_s (local.get $sc)))) (i32.const 5)))
            ;; [d0, d1, 0, 0] from fp16 (fp16x4_to_f32 in util.h), times y.d
            (local.set $hd (v128.load16_lane offset=208 align=1 2 (local.get $x1)
              (v128.load16_lane offset=208 align=1 0 (local.get $x0) (v128.const i32x4 0 0 0 0))))
            (local.set $d (f32x4.mul
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
              (f32x4.splat (f32.load align=1 (local.get $yb)))))
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
              ;; t = 0: elements 128h + 32j + 0..15 of plane j, sub-block 8h + 2j + 0
              (local.set $a0 (v128.load offset=4 align=1 (local.get $ap)))
              (local.set $a1 (v128.load offset=36 align=1 (local.get $ap)))
              (local.set $a2 (v128.load offset=68 align=1 (local.get $ap)))
              (local.set $a3 (v128.load offset=100 align=1 (local.get $ap)))
              (local.set $l00 (v128.load offset=0 align=1 (local.get $q0)))
              (local.set $l01 (v128.load offset=32 align=1 (local.get $q0)))
              (local.set $h0 (v128.load offset=128 align=1 (local.get $q0h)))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l00) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 4)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=192 (local.get $q0s))))))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l01) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=194 (local.get $q0s))))))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (i16x8.shr_u (local.get $l00) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h0) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=196 (local.get $q0s))))))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (i16x8.shr_u (local.get $l01) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h0) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=198 (local.get $q0s))))))
              (local.set $l10 (v128.load offset=0 align=1 (local.get $q1)))
              (local.set $l11 (v128.load offset=32 align=1 (local.get $q1)))
              (local.set $h1 (v128.load offset=128 align=1 (local.get $q1h)))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l10) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 4)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=192 (local.get $q1s))))))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l11) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=194 (local.get $q1s))))))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (i16x8.shr_u (local.get $l10) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h1) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=196 (local.get $q1s))))))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (i16x8.shr_u (local.get $l11) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h1) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=198 (local.get $q1s))))))
              ;; t = 1: elements 128h + 32j + 16..31 of plane j, sub-block 8h + 2j + 1
              (local.set $a0 (v128.load offset=20 align=1 (local.get $ap)))
              (local.set $a1 (v128.load offset=52 align=1 (local.get $ap)))
              (local.set $a2 (v128.load offset=84 align=1 (local.get $ap)))
              (local.set $a3 (v128.load offset=116 align=1 (local.get $ap)))
              (local.set $l00 (v128.load offset=16 align=1 (local.get $q0)))
              (local.set $l01 (v128.load offset=48 align=1 (local.get $q0)))
              (local.set $h0 (v128.load offset=144 align=1 (local.get $q0h)))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l00) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 4)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=193 (local.get $q0s))))))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l01) (local.get $m4)) (v128.and (i16x8.shl (local.get $h0) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=195 (local.get $q0s))))))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (i16x8.shr_u (local.get $l00) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h0) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=197 (local.get $q0s))))))
              (local.set $dot0 (i32x4.add (local.get $dot0) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (i16x8.shr_u (local.get $l01) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h0) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=199 (local.get $q0s))))))
              (local.set $l10 (v128.load offset=16 align=1 (local.get $q1)))
              (local.set $l11 (v128.load offset=48 align=1 (local.get $q1)))
              (local.set $h1 (v128.load offset=144 align=1 (local.get $q1h)))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a0) (v128.or (v128.and (local.get $l10) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 4)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=193 (local.get $q1s))))))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a1) (v128.or (v128.and (local.get $l11) (local.get $m4)) (v128.and (i16x8.shl (local.get $h1) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=195 (local.get $q1s))))))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a2) (v128.or (v128.and (i16x8.shr_u (local.get $l10) (i32.const 4)) (local.get $m4)) (v128.and (local.get $h1) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=197 (local.get $q1s))))))
              (local.set $dot1 (i32x4.add (local.get $dot1) (i32x4.dot_i16x8_s
                (i16x8.dot_i8x16_i7x16_s (local.get $a3) (v128.or (v128.and (i16x8.shr_u (local.get $l11) (i32.const 4)) (local.get $m4)) (v128.and (i16x8.shr_u (local.get $h1) (i32.const 2)) (local.get $top2))))
                (i16x8.extend_low_i8x16_s (v128.load8_splat offset=199 (local.get $q1s))))))
              (local.set $q0 (i32.add (local.get $q0) (i32.const 64)))
              (local.set $q0h (i32.add (local.get $q0h) (i32.const 32)))
              (local.set $q0s (i32.add (local.get $q0s) (i32.const 8)))
              (local.set $q1 (i32.add (local.get $q1) (i32.const 64)))
              (local.set $q1h (i32.add (local.get $q1h) (i32.const 32)))
              (local.set $q1s (i32.add (local.get $q1s) (i32.const 8)))
              (local.set $ap (i32.add (local.get $ap) (i32.const 128)))
              (br_if $halves (local.tee $h (i32.sub (local.get $h) (i32.const 1)))))
            (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul
              (f32x4.convert_i32x4_s (i32x4.sub (local.get $dot0) (local.get $bias0)))
              (i8x16.shuffle 0 1 2 3 0 1 2 3 0 1 2 3 0 1 2 3 (local.get $d) (local.get $d)))))
            (local.set $acc1 (f32x4.add (local.get $acc1) (f32x4.mul
              (f32x4.convert_i32x4_s (i32x4.sub (local.get $dot1) (local.get $bias1)))
              (i8x16.shuffle 4 5 6 7 4 5 6 7 4 5 6 7 4 5 6 7 (local.get $d) (local.get $d)))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 210)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 210)))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        ;; hsum_f32: ((l0 + l1) + l2) + l3
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc0)) (f32x4.extract_lane 1 (local.get $acc0)))
                            (f32x4.extract_lane 2 (local.get $acc0)))
                   (f32x4.extract_lane 3 (local.get $acc0))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc1)) (f32x4.extract_lane 1 (local.get $acc1)))
                            (f32x4.extract_lane 2 (local.get $acc1)))
                   (f32x4.extract_lane 3 (local.get $acc1))))
        (br_if $rows (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
