;; The main tile of gemm_wide[F32] (2 rows x 16 tokens, kernels/gemm_float_outer.h) with relaxed
;; SIMD's f32x4.relaxed_madd: V8 lowers it to one vfmadd231ps where the CPU has FMA (an fmla on
;; arm64), so each product and sum is one instruction and needs no register of its own. Hand-written
;; because this toolchain's clang 14 cannot emit relaxed SIMD; wasm/tools/splice_relaxed.mjs puts its
;; body in place of ox_simd128_wide_tile (gemm_wide.cpp) in the relaxed copy of the module (see
;; kernels/simd128/relaxed_slots.h for the contract). Each cell sums its products in index order as
;; the SIMD128 body does, fused or not as the engine chooses: within float rounding of it.
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; n floats per row; w0 and w1 the two rows (any alignment); p the panel (p[k * 16 + t]); the
  ;; accumulators go to cells[r * 16 + t].
  (func (export "wide_tile")
    (param $n i32) (param $w0 i32) (param $w1 i32) (param $p i32) (param $cells i32)
    (local $end i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $b v128)
    (local $c00 v128) (local $c01 v128) (local $c02 v128) (local $c03 v128)
    (local $c10 v128) (local $c11 v128) (local $c12 v128) (local $c13 v128)
    ;; v128 locals start at zero: the accumulators need no setting
    (if (i32.gt_s (local.get $n) (i32.const 0))
      (then
        (local.set $end (i32.add (local.get $w0) (i32.shl (local.get $n) (i32.const 2))))
        (loop $k
          (local.set $a0 (v128.load offset=0 (local.get $p)))
          (local.set $a1 (v128.load offset=16 (local.get $p)))
          (local.set $a2 (v128.load offset=32 (local.get $p)))
          (local.set $a3 (v128.load offset=48 (local.get $p)))
          (local.set $b (v128.load32_splat (local.get $w0)))
          (local.set $c00 (f32x4.relaxed_madd (local.get $b) (local.get $a0) (local.get $c00)))
          (local.set $c01 (f32x4.relaxed_madd (local.get $b) (local.get $a1) (local.get $c01)))
          (local.set $c02 (f32x4.relaxed_madd (local.get $b) (local.get $a2) (local.get $c02)))
          (local.set $c03 (f32x4.relaxed_madd (local.get $b) (local.get $a3) (local.get $c03)))
          (local.set $b (v128.load32_splat (local.get $w1)))
          (local.set $c10 (f32x4.relaxed_madd (local.get $b) (local.get $a0) (local.get $c10)))
          (local.set $c11 (f32x4.relaxed_madd (local.get $b) (local.get $a1) (local.get $c11)))
          (local.set $c12 (f32x4.relaxed_madd (local.get $b) (local.get $a2) (local.get $c12)))
          (local.set $c13 (f32x4.relaxed_madd (local.get $b) (local.get $a3) (local.get $c13)))
          (local.set $p (i32.add (local.get $p) (i32.const 64)))
          (local.set $w1 (i32.add (local.get $w1) (i32.const 4)))
          (local.set $w0 (i32.add (local.get $w0) (i32.const 4)))
          (br_if $k (i32.ne (local.get $w0) (local.get $end))))))
    (v128.store offset=0 (local.get $cells) (local.get $c00))
    (v128.store offset=16 (local.get $cells) (local.get $c01))
    (v128.store offset=32 (local.get $cells) (local.get $c02))
    (v128.store offset=48 (local.get $cells) (local.get $c03))
    (v128.store offset=64 (local.get $cells) (local.get $c10))
    (v128.store offset=80 (local.get $cells) (local.get $c11))
    (v128.store offset=96 (local.get $cells) (local.get $c12))
    (v128.store offset=112 (local.get $cells) (local.get $c13))))
