;; The relaxed body of ox_simd128_u8_dot_probe (relaxed_slots.cpp): one i32x4.relaxed_dot_i8x16_i7x16_add_s
;; of splat(s) (the i8 operand) and splat(u) (the "i7" one) onto splat(c), lane 0 returned. The caller
;; (u8_dot_exact) passes u of 128..255: the relaxed-SIMD spec leaves the result implementation-defined
;; there, and it is exact (4 u s + c, u unsigned, no saturation) where V8 lowers the instruction to
;; AVX-VNNI's vpdpbusd; pmaddubsw's saturating pairs or ARM's signed sdot give other values. The operands
;; come in as parameters, so no compiler can fold the instruction. wabt 1.0.32 spells it without
;; "relaxed_" (i32x4.dot_i8x16_i7x16_add_s).
(module
  (func (export "u8_dot_probe") (param $u i32) (param $s i32) (param $c i32) (result i32)
    (i32x4.extract_lane 0 (i32x4.dot_i8x16_i7x16_add_s
      (i8x16.splat (local.get $s)) (i8x16.splat (local.get $u)) (i32x4.splat (local.get $c))))))
