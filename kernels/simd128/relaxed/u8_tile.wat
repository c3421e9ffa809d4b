;; One 2 x 4 tile of the byte-group prefill (kernels/simd128/gemm_i7.h) with relaxed SIMD's
;; i32x4.relaxed_dot_i8x16_i7x16_add_s, for engines where it multiplies its second operand as an
;; unsigned byte, exactly (relaxed_slots.h: u8_dot_exact; V8 on x86 with AVX-VNNI, one vpdpbusd for 16
;; products, their sums and the add). The weights may then be any byte 0..255 (IQ4_NL's codebook
;; values + 128, Q4_0's nibbles), and each step adds into the unit's i32 lane directly: no i16 sums
;; to widen, nothing to saturate (a lane sums 32 products of at most 255 * 128). Spliced in place of
;; ox_simd128_u8_tile (gemm_i7.cpp); called only where u8_dot_exact holds. wabt 1.0.32 spells it
;; without "relaxed_" (i32x4.dot_i8x16_i7x16_add_s).
;;
;; Same bits as the SIMD128 body: i32 lane j of each accumulator starts at the activation group's
;; offset (-offset * sum(a) of unit j) and ends at unit j's exact integer dot plus it, as i7_tile.wat's
;; widened sums do; then the same float steps in the same order (acc converted, times (weight scale
;; times activation scale), added to f) and the horizontal sum ((l0 + l1) + l2) + l3. The steps of a
;; group after its first are a rolled loop, as in i7_tile.wat.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; n_groups byte groups; w: 2 weight rows, vector v of row r at w + 16 * (2v + r); a: 4 activation
  ;; rows, vector v of row t at a + 16 * (4v + t); y[t * y_stride + r] receives each dot.
  (func (export "u8_tile")
    (param $n_groups i32) (param $w i32) (param $a i32) (param $y i32) (param $y_stride i32)
    (local $g i32) (local $k i32) (local $pw i32) (local $pa i32) (local $wv0 v128) (local $wv1 v128) (local $av v128) (local $ws0 v128) (local $ws1 v128)
    (local $acc00 v128) (local $acc01 v128) (local $acc02 v128) (local $acc03 v128) (local $acc10 v128) (local $acc11 v128) (local $acc12 v128) (local $acc13 v128)
    (local $f00 v128) (local $f01 v128) (local $f02 v128) (local $f03 v128) (local $f10 v128) (local $f11 v128) (local $f12 v128) (local $f13 v128)
    (block $done
      (br_if $done (i32.le_s (local.get $n_groups) (i32.const 0)))
      (loop $group
        ;; the accumulators start at the activation group's offsets (lane j: -offset * sum of unit j)
        (local.set $acc00 (v128.load offset=576 (local.get $a)))
        (local.set $acc10 (local.get $acc00))
        (local.set $acc01 (v128.load offset=592 (local.get $a)))
        (local.set $acc11 (local.get $acc01))
        (local.set $acc02 (v128.load offset=608 (local.get $a)))
        (local.set $acc12 (local.get $acc02))
        (local.set $acc03 (v128.load offset=624 (local.get $a)))
        (local.set $acc13 (local.get $acc03))
        ;; vectors 0..7 (elements 4k .. 4k + 3 of each unit), one per pass
        (local.set $pw (local.get $w))
        (local.set $pa (local.get $a))
        (local.set $k (i32.const 8))
        (loop $step
          (local.set $wv0 (v128.load offset=0 (local.get $pw)))
          (local.set $wv1 (v128.load offset=16 (local.get $pw)))
          (local.set $av (v128.load offset=0 (local.get $pa)))
          (local.set $acc00 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv0) (local.get $acc00)))
          (local.set $acc10 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv1) (local.get $acc10)))
          (local.set $av (v128.load offset=16 (local.get $pa)))
          (local.set $acc01 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv0) (local.get $acc01)))
          (local.set $acc11 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv1) (local.get $acc11)))
          (local.set $av (v128.load offset=32 (local.get $pa)))
          (local.set $acc02 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv0) (local.get $acc02)))
          (local.set $acc12 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv1) (local.get $acc12)))
          (local.set $av (v128.load offset=48 (local.get $pa)))
          (local.set $acc03 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv0) (local.get $acc03)))
          (local.set $acc13 (i32x4.dot_i8x16_i7x16_add_s (local.get $av) (local.get $wv1) (local.get $acc13)))
          (local.set $pw (i32.add (local.get $pw) (i32.const 32)))
          (local.set $pa (i32.add (local.get $pa) (i32.const 64)))
          (br_if $step (local.tee $k (i32.sub (local.get $k) (i32.const 1)))))
        ;; f += acc * (weight scales * activation scales), lane j = unit j
        (local.set $ws0 (v128.load offset=256 (local.get $w)))
        (local.set $ws1 (v128.load offset=272 (local.get $w)))
        (local.set $av (v128.load offset=512 (local.get $a)))
        (local.set $f00 (f32x4.add (local.get $f00) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc00)) (f32x4.mul (local.get $ws0) (local.get $av)))))
        (local.set $f10 (f32x4.add (local.get $f10) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc10)) (f32x4.mul (local.get $ws1) (local.get $av)))))
        (local.set $av (v128.load offset=528 (local.get $a)))
        (local.set $f01 (f32x4.add (local.get $f01) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc01)) (f32x4.mul (local.get $ws0) (local.get $av)))))
        (local.set $f11 (f32x4.add (local.get $f11) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc11)) (f32x4.mul (local.get $ws1) (local.get $av)))))
        (local.set $av (v128.load offset=544 (local.get $a)))
        (local.set $f02 (f32x4.add (local.get $f02) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc02)) (f32x4.mul (local.get $ws0) (local.get $av)))))
        (local.set $f12 (f32x4.add (local.get $f12) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc12)) (f32x4.mul (local.get $ws1) (local.get $av)))))
        (local.set $av (v128.load offset=560 (local.get $a)))
        (local.set $f03 (f32x4.add (local.get $f03) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc03)) (f32x4.mul (local.get $ws0) (local.get $av)))))
        (local.set $f13 (f32x4.add (local.get $f13) (f32x4.mul (f32x4.convert_i32x4_s (local.get $acc13)) (f32x4.mul (local.get $ws1) (local.get $av)))))
        (local.set $w (i32.add (local.get $w) (i32.const 288)))
        (local.set $a (i32.add (local.get $a) (i32.const 640)))
        (br_if $group (i32.lt_s (local.tee $g (i32.add (local.get $g) (i32.const 1))) (local.get $n_groups)))))
    ;; y[t * y_stride + r] = ((l0 + l1) + l2) + l3 of f_rt
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 0) (local.get $y_stride)) (i32.const 0)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f00)) (f32x4.extract_lane 1 (local.get $f00))) (f32x4.extract_lane 2 (local.get $f00))) (f32x4.extract_lane 3 (local.get $f00))))
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 0) (local.get $y_stride)) (i32.const 1)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f10)) (f32x4.extract_lane 1 (local.get $f10))) (f32x4.extract_lane 2 (local.get $f10))) (f32x4.extract_lane 3 (local.get $f10))))
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 1) (local.get $y_stride)) (i32.const 0)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f01)) (f32x4.extract_lane 1 (local.get $f01))) (f32x4.extract_lane 2 (local.get $f01))) (f32x4.extract_lane 3 (local.get $f01))))
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 1) (local.get $y_stride)) (i32.const 1)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f11)) (f32x4.extract_lane 1 (local.get $f11))) (f32x4.extract_lane 2 (local.get $f11))) (f32x4.extract_lane 3 (local.get $f11))))
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 2) (local.get $y_stride)) (i32.const 0)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f02)) (f32x4.extract_lane 1 (local.get $f02))) (f32x4.extract_lane 2 (local.get $f02))) (f32x4.extract_lane 3 (local.get $f02))))
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 2) (local.get $y_stride)) (i32.const 1)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f12)) (f32x4.extract_lane 1 (local.get $f12))) (f32x4.extract_lane 2 (local.get $f12))) (f32x4.extract_lane 3 (local.get $f12))))
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 3) (local.get $y_stride)) (i32.const 0)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f03)) (f32x4.extract_lane 1 (local.get $f03))) (f32x4.extract_lane 2 (local.get $f03))) (f32x4.extract_lane 3 (local.get $f03))))
    (f32.store align=1 (i32.add (local.get $y) (i32.shl (i32.add (i32.mul (i32.const 3) (local.get $y_stride)) (i32.const 1)) (i32.const 2)))
      (f32.add (f32.add (f32.add (f32x4.extract_lane 0 (local.get $f13)) (f32x4.extract_lane 1 (local.get $f13))) (f32x4.extract_lane 2 (local.get $f13))) (f32x4.extract_lane 3 (local.get $f13)))))
)
