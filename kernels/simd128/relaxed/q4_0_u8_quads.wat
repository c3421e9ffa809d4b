;; Q4_0 x Q8_0 decode, four rows at a time, where the engine's i32x4.relaxed_dot_i8x16_i7x16_add_s is
;; one instruction for the products, their sums and the add (u8_dot_exact in gemm_block32.cpp: V8 on
;; x86 with AVX-VNNI, vpdpbusd). Spliced in place of ox_simd128_q4_0_u8_quads (gemm_block32.cpp);
;; iq4_nl_u8_quads.wat's loop and steps without the codebook: the stored nibbles (0..15) are the
;; unsigned operand, into i32 lanes directly (no i16 sums to add and widen as q4_0_quads.wat does),
;; and 8 * sum(a) comes off each block: the exact integer dot of decode_groups<Q4_0>. The fp16 d by
;; the short path, a group with an Inf or NaN scale handed back (QuadsFn). Then the C++ body's float
;; steps in the same order: the same bits. wabt 1.0.32 spells the dot without "relaxed_".
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb blocks per row; group g < groups is rows g * g_step + j * j_step (j < 4) of the matrix at w
  ;; (rows w_stride bytes apart); rec the token's blocks as u8_records (relaxed_slots.h: per block
  ;; 48 bytes, its quants 0..15 and 16..31, -8 * sum(a) as i32, d as f32); k the constant
  ;; table (relaxed_constants in relaxed_slots.cpp); out[row] receives each row's dot. `act`, `d` and
  ;; `sum` (the SIMD128 body's) are not read.
  (func (export "q4_0_u8_quads")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $groups i32) (param $g_step i32)
    (param $j_step i32) (param $rec i32) (param $act i32) (param $d i32) (param $sum i32) (param $k i32)
    (param $out i32) (result i32)
    (local $g i32) (local $r0 i32) (local $jb i32) (local $x0 i32) (local $x1 i32) (local $x2 i32) (local $x3 i32)
    (local $ab i32) (local $end i32)
    (local $m4 v128) (local $acc v128) (local $alo v128) (local $ahi v128) (local $q v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128)
    (local $tot v128) (local $off v128) (local $h v128) (local $dx v128) (local $special v128) (local $exp_mask v128)
    (local $half_bits v128) (local $half_scale v128)
    (local.set $m4 (v128.load (local.get $k)))
    (local.set $exp_mask (i32x4.shl (v128.load offset=80 (local.get $k)) (i32.const 16)))
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
        (local.set $ab (local.get $rec))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const 18))))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $special (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            ;; the activation block's quants 0..15 and 16..31, and [-offset * sum(a), 0, 0, 0], each
            ;; row's start: the fold below adds it into the row's total
            (local.set $alo (v128.load (local.get $ab)))
            (local.set $ahi (v128.load offset=16 (local.get $ab)))
            (local.set $off (v128.load32_zero offset=32 (local.get $ab)))
            ;; per row: the low nibbles (elements 0..15) against alo, the high nibbles against ahi, into
            ;; one i32x4
            (local.set $q (v128.load offset=2 align=1 (local.get $x0)))
            (local.set $p0 (i32x4.dot_i8x16_i7x16_add_s (local.get $ahi)
              (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (i32x4.dot_i8x16_i7x16_add_s (local.get $alo)
                (v128.and (local.get $q) (local.get $m4))
                (local.get $off))))
            (local.set $q (v128.load offset=2 align=1 (local.get $x1)))
            (local.set $p1 (i32x4.dot_i8x16_i7x16_add_s (local.get $ahi)
              (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (i32x4.dot_i8x16_i7x16_add_s (local.get $alo)
                (v128.and (local.get $q) (local.get $m4))
                (local.get $off))))
            (local.set $q (v128.load offset=2 align=1 (local.get $x2)))
            (local.set $p2 (i32x4.dot_i8x16_i7x16_add_s (local.get $ahi)
              (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (i32x4.dot_i8x16_i7x16_add_s (local.get $alo)
                (v128.and (local.get $q) (local.get $m4))
                (local.get $off))))
            (local.set $q (v128.load offset=2 align=1 (local.get $x3)))
            (local.set $p3 (i32x4.dot_i8x16_i7x16_add_s (local.get $ahi)
              (v128.and (i16x8.shr_u (local.get $q) (i32.const 4)) (local.get $m4))
              (i32x4.dot_i8x16_i7x16_add_s (local.get $alo)
                (v128.and (local.get $q) (local.get $m4))
                (local.get $off))))
            ;; fold: lane j = row j's total (hsum4x4_i32), the offset in it
            (local.set $p0 (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $p0) (local.get $p1))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $p0) (local.get $p1))))
            (local.set $p2 (i32x4.add
              (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $p2) (local.get $p3))
              (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $p2) (local.get $p3))))
            (local.set $tot (i32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $p0) (local.get $p2))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $p0) (local.get $p2))))
            ;; the four rows' d from fp16 (each in the high half of its i32 lane) by Fp16Fast's short
            ;; path (util.h: shifted into f32 position, times 2^112), exact for every finite half, zero
            ;; and subnormal ones included; an Inf or NaN (exponent 31) is noted in `special`, and the
            ;; group is left to the caller.
            (local.set $h
              (v128.load16_lane align=1 7 (local.get $x3)
                (v128.load16_lane align=1 5 (local.get $x2)
                  (v128.load16_lane align=1 3 (local.get $x1)
                    (v128.load16_lane align=1 1 (local.get $x0) (v128.const i32x4 0 0 0 0))))))
            (local.set $special (i32x4.max_u (local.get $special) (v128.and (local.get $h) (local.get $exp_mask))))
            (local.set $dx
              (f32x4.mul
                (v128.and (i32x4.shr_s (local.get $h) (i32.const 3)) (local.get $half_bits))
                (local.get $half_scale)))
            ;; acc += totals * (d * a.d)
            (local.set $acc (f32x4.add (local.get $acc) (f32x4.mul
              (f32x4.convert_i32x4_s (local.get $tot))
              (f32x4.mul (local.get $dx) (v128.load32_splat offset=36 (local.get $ab))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const 18)))
            (local.set $x1 (i32.add (local.get $x1) (i32.const 18)))
            (local.set $x2 (i32.add (local.get $x2) (i32.const 18)))
            (local.set $x3 (i32.add (local.get $x3) (i32.const 18)))
            (local.set $ab (i32.add (local.get $ab) (i32.const 48)))
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
