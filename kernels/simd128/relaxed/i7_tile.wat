;; One 2 x 4 tile of the byte-group prefill (kernels/simd128/gemm_i7.h) with relaxed SIMD's
;; i16x8.relaxed_dot_i8x16_i7x16_s (one pmaddubsw on x86: 16 byte products summed in pairs), where
;; the SIMD128 body widens both operands to i16 first. The pair sums add up in i16 over the group's
;; 8 steps and widen to i32 once per group. Not i32x4.relaxed_dot_i8x16_i7x16_add_s: node 20's
;; Liftoff (V8 11.3) gives wrong sums for it in a tile like this one (a scratch register that
;; overlaps the accumulator, measured: TurboFan's code right, Liftoff's not). wasm/tools/splice_relaxed.mjs puts this body in
;; place of ox_simd128_i7_tile (gemm_i7.cpp) in the relaxed copy of the module (contract:
;; kernels/simd128/relaxed_slots.h). wabt 1.0.32 spells it without "relaxed_".
;;
;; Same bits as the SIMD128 body: the weights are the i7 operand (stored values 0..127, Q4_0's
;; 0..15), so the dot is defined; an i16 lane sums 16 products over a group, at most
;; 16 * 128 * 15 = 30720 < 32768, so nothing wraps for any activation byte (this needs weights of at
;; most 15); i32 lane j is then unit j's exact integer dot plus the activation group's offset; then the same float steps in the same order (acc converted, times (weight scale times
;; activation scale), added to f), and the horizontal sum ((l0 + l1) + l2) + l3 of util.h's hsum_f32.
;; The group's first step starts the 8 integer accumulators, a rolled loop takes the other 7: unrolled,
;; V8 (TurboFan) loaded all 64 vectors first and spilled ~145 of them a group (disassembly under
;; node 20), and a micro-benchmark in Chromium ran the rolled form 1.1-2.6x faster.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; n_groups byte groups; w: 2 weight rows, vector v of row r at w + 16 * (2v + r); a: 4 activation
  ;; rows, vector v of row t at a + 16 * (4v + t); y[t * y_stride + r] receives each dot.
  (func (export "i7_tile")
    (param $n_groups i32) (param $w i32) (param $a i32) (param $y i32) (param $y_stride i32)
    (local $g i32) (local $k i32) (local $pw i32) (local $pa i32) (local $wv0 v128) (local $wv1 v128) (local $av v128) (local $ws0 v128) (local $ws1 v128)
    (local $acc00 v128) (local $acc01 v128) (local $acc02 v128) (local $acc03 v128) (local $acc10 v128) (local $acc11 v128) (local $acc12 v128) (local $acc13 v128)
    (local $f00 v128) (local $f01 v128) (local $f02 v128) (local $f03 v128) (local $f10 v128) (local $f11 v128) (local $f12 v128) (local $f13 v128)
    (block $done
      (br_if $done (i32.le_s (local.get $n_groups) (i32.const 0)))
      (loop $group
        ;; vector 0: elements 0..3 of each unit, whose dots start the accumulators
        (local.set $wv0 (v128.load offset=0 (local.get $w)))
        (local.set $wv1 (v128.load offset=16 (local.get $w)))
        (local.set $av (v128.load offset=0 (local.get $a)))
        (local.set $acc00 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0)))
        (local.set $acc10 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1)))
        (local.set $av (v128.load offset=16 (local.get $a)))
        (local.set $acc01 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0)))
        (local.set $acc11 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1)))
        (local.set $av (v128.load offset=32 (local.get $a)))
        (local.set $acc02 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0)))
        (local.set $acc12 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1)))
        (local.set $av (v128.load offset=48 (local.get $a)))
        (local.set $acc03 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0)))
        (local.set $acc13 (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1)))
        ;; vectors 1..7 (elements 4k .. 4k + 3 of each unit), one per pass: a rolled loop, since
        ;; V8 hoists the loads of an unrolled group to its top and spills most of them
        (local.set $pw (i32.add (local.get $w) (i32.const 32)))
        (local.set $pa (i32.add (local.get $a) (i32.const 64)))
        (local.set $k (i32.const 7))
        (loop $step
          (local.set $wv0 (v128.load offset=0 (local.get $pw)))
          (local.set $wv1 (v128.load offset=16 (local.get $pw)))
          (local.set $av (v128.load offset=0 (local.get $pa)))
          (local.set $acc00 (i16x8.add (local.get $acc00) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0))))
          (local.set $acc10 (i16x8.add (local.get $acc10) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1))))
          (local.set $av (v128.load offset=16 (local.get $pa)))
          (local.set $acc01 (i16x8.add (local.get $acc01) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0))))
          (local.set $acc11 (i16x8.add (local.get $acc11) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1))))
          (local.set $av (v128.load offset=32 (local.get $pa)))
          (local.set $acc02 (i16x8.add (local.get $acc02) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0))))
          (local.set $acc12 (i16x8.add (local.get $acc12) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1))))
          (local.set $av (v128.load offset=48 (local.get $pa)))
          (local.set $acc03 (i16x8.add (local.get $acc03) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv0))))
          (local.set $acc13 (i16x8.add (local.get $acc13) (i16x8.dot_i8x16_i7x16_s (local.get $av) (local.get $wv1))))
          (local.set $pw (i32.add (local.get $pw) (i32.const 32)))
          (local.set $pa (i32.add (local.get $pa) (i32.const 64)))
          (br_if $step (local.tee $k (i32.sub (local.get $k) (i32.const 1)))))
        ;; i32 lane j = unit j: the i16 pair sums widened, plus the activations' offsets (Q4_0: -8 * sum(a))
        (local.set $av (v128.load offset=576 (local.get $a)))
        (local.set $acc00 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc00)) (local.get $av)))
        (local.set $acc10 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc10)) (local.get $av)))
        (local.set $av (v128.load offset=592 (local.get $a)))
        (local.set $acc01 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc01)) (local.get $av)))
        (local.set $acc11 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc11)) (local.get $av)))
        (local.set $av (v128.load offset=608 (local.get $a)))
        (local.set $acc02 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc02)) (local.get $av)))
        (local.set $acc12 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc12)) (local.get $av)))
        (local.set $av (v128.load offset=624 (local.get $a)))
        (local.set $acc03 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc03)) (local.get $av)))
        (local.set $acc13 (i32x4.add (i32x4.extadd_pairwise_i16x8_s (local.get $acc13)) (local.get $av)))
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
