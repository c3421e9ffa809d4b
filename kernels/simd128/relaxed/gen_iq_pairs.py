# Writes the relaxed decode bodies of the i-quants with 0..127 grids, {iq2_s,iq3_xxs,iq3_s}_pairs.wat,
# which differ only in how a sub-block's grid rows, sign fields and scales are read (gather below).
#   python3 kernels/simd128/relaxed/gen_iq_pairs.py kernels/simd128/relaxed
import os
import sys
F = {
 'iq3_s':   dict(block=110, factor='1.0', per16=False, name='IQ3_S', cname='IQ3S'),
 'iq3_xxs': dict(block=98,  factor='0.25', per16=False, name='IQ3_XXS', cname='IQ3XXS'),
 'iq2_s':   dict(block=82,  factor='0.125', per16=True, name='IQ2_S', cname='IQ2S'),
}
def L(x): return f"(local.get ${x})"

def rows_of_four(idx):
    """$g_lo, $g_hi from 8 grid rows of 4 bytes, idx(l) giving row l's address"""
    out = []
    for half, base in (('lo', 0), ('hi', 4)):
        e = f"(v128.load32_zero align=1 {idx(base)})"
        for k in (1, 2, 3):
            e = f"(v128.load32_lane align=1 {k} {idx(base + k)} {e})"
        out.append(f"(local.set $g_{half} {e})")
    return out

def gather(fmt, r):
    """wat lines: set $g_lo, $g_hi (grid magnitudes of elements 0..15, 16..31), $m_lo, $m_hi (sign
    masks), $s (scale, or $s packed s0 | s1 << 16 for per16) of sub-block $ib of row r's block $x{r}"""
    x = f"$x{r}"
    out = []
    if fmt == 'iq3_s':
        # qs at 2 + 8 ib, qh at 66 + ib, signs at 74 + 4 ib, scales at 106 + ib / 2
        out.append(f"(local.set $qh (i32.load8_u offset=66 (i32.add {L(x[1:])} {L('ib')})))")
        out.append(f"(local.set $p (i32.add {L(x[1:])} (i32.shl {L('ib')} (i32.const 3))))")
        # the 8 indices' byte offsets in u16 lanes: qs bytes widened, or bit l of qh moved to bit 8
        # ((qh & 2^l) * 2^(8 - l)), times 4; each row's address is then one lane extract
        out.append(f"(local.set $t (i16x8.shl (v128.or (v128.load8x8_u offset=2 align=1 {L('p')})"
                   f" (i16x8.mul (v128.and (i16x8.splat {L('qh')}) {L('qh_bits')}) {L('qh_mul')})) (i32.const 2)))")
        idx = lambda l: f"(i32.add {L('grid')} (i16x8.extract_lane_u {l} {L('t')}))"
        out += rows_of_four(idx)
        out.append(f"(local.set $p (i32.add {L(x[1:])} (i32.shl {L('ib')} (i32.const 2))))")
        sign = lambda k: f"(i32.add {L('masks')} (i32.shl (i32.load8_u offset={74+k} {L('p')}) (i32.const 3)))"
        out.append(f"(local.set $m_lo (v128.load64_lane align=1 1 {sign(1)} (v128.load64_zero align=1 {sign(0)})))")
        out.append(f"(local.set $m_hi (v128.load64_lane align=1 1 {sign(3)} (v128.load64_zero align=1 {sign(2)})))")
        out.append(f"(local.set $s (i32.or (i32.shl (i32.and (i32.shr_u (i32.load8_u offset=106 (i32.add {L(x[1:])} (i32.shr_u {L('ib')} (i32.const 1))))"
                   f" (i32.shl (i32.and {L('ib')} (i32.const 1)) (i32.const 2))) (i32.const 15)) (i32.const 1)) (i32.const 1)))")
    elif fmt == 'iq3_xxs':
        # grid bytes at 2 + 8 ib, aux u32 at 66 + 4 ib
        out.append(f"(local.set $p (i32.add {L(x[1:])} (i32.shl {L('ib')} (i32.const 3))))")
        idx = lambda l: f"(i32.add {L('grid')} (i32.shl (i32.load8_u offset={2+l} {L('p')}) (i32.const 2)))"
        out += rows_of_four(idx)
        out.append(f"(local.set $qh (i32.load offset=66 align=1 (i32.add {L(x[1:])} (i32.shl {L('ib')} (i32.const 2)))))")
        sign = lambda k: (f"(i32.add {L('masks')} (i32.shl (i32.and (i32.shr_u {L('qh')} (i32.const {7*k})) (i32.const 127)) (i32.const 3)))"
                          if k else f"(i32.add {L('masks')} (i32.shl (i32.and {L('qh')} (i32.const 127)) (i32.const 3)))")
        out.append(f"(local.set $m_lo (v128.load64_lane align=1 1 {sign(1)} (v128.load64_zero align=1 {sign(0)})))")
        out.append(f"(local.set $m_hi (v128.load64_lane align=1 1 {sign(3)} (v128.load64_zero align=1 {sign(2)})))")
        out.append(f"(local.set $s (i32.or (i32.shl (i32.shr_u {L('qh')} (i32.const 28)) (i32.const 1)) (i32.const 1)))")
    else:
        # index bytes at 2 + 4 ib, signs at 34 + 4 ib, qh at 66 + ib, scales at 74 + ib
        out.append(f"(local.set $p (i32.add {L(x[1:])} {L('ib')}))")
        out.append(f"(local.set $qh (i32.load8_u offset=66 {L('p')}))")
        out.append(f"(local.set $s (i32.load8_u offset=74 {L('p')}))")
        out.append(f"(local.set $p (i32.add {L(x[1:])} (i32.shl {L('ib')} (i32.const 2))))")
        def idx(k):
            hb = f"(i32.and (i32.shl {L('qh')} (i32.const {8-2*k})) (i32.const 768))"
            return f"(i32.add {L('grid')} (i32.shl (i32.or (i32.load8_u offset={2+k} {L('p')}) {hb}) (i32.const 3)))"
        out.append(f"(local.set $g_lo (v128.load64_lane align=1 1 {idx(1)} (v128.load64_zero align=1 {idx(0)})))")
        out.append(f"(local.set $g_hi (v128.load64_lane align=1 1 {idx(3)} (v128.load64_zero align=1 {idx(2)})))")
        sign = lambda k: f"(i32.add {L('masks')} (i32.shl (i32.load8_u offset={34+k} {L('p')}) (i32.const 3)))"
        out.append(f"(local.set $m_lo (v128.load64_lane align=1 1 {sign(1)} (v128.load64_zero align=1 {sign(0)})))")
        out.append(f"(local.set $m_hi (v128.load64_lane align=1 1 {sign(3)} (v128.load64_zero align=1 {sign(2)})))")
        # [2 (sc & 15) + 1, 2 (sc >> 4) + 1] as the u16 pair s0 | s1 << 16
        out.append(f"(local.set $s (i32.or (i32.or (i32.shl (i32.and {L('s')} (i32.const 15)) (i32.const 1))"
                   f" (i32.shl (i32.and {L('s')} (i32.const 240)) (i32.const 13))) (i32.const 0x10001)))")
    return out

def products(fmt, r):
    """sumi{r} += the scaled sub-block dot (C++ lane order), from $g_*, $m_*, $a_lo, $a_hi, $s"""
    d = lambda h: f"(i16x8.dot_i8x16_i7x16_s (v128.xor {L('a_'+h)} {L('m_'+h)}) {L('g_'+h)})"
    cor = lambda h: f"(v128.and {L('g_'+h)} {L('m_'+h)})"
    out = []
    if not F[fmt]['per16']:
        out.append(f"(local.set $t (i16x8.add (i16x8.add {d('lo')} {d('hi')})")
        out.append(f"  (i16x8.extadd_pairwise_i8x16_u (i8x16.add {cor('lo')} {cor('hi')}))))")
        out.append(f"(local.set $sumi{r} (i32x4.add {L('sumi'+str(r))} (i32x4.dot_i16x8_s")
        out.append(f"  (i8x16.shuffle 0 1 8 9 2 3 10 11 4 5 12 13 6 7 14 15 {L('t')} {L('t')}) (i16x8.splat {L('s')}))))")
    else:
        out.append(f"(local.set $t (i16x8.add {d('lo')} (i16x8.extadd_pairwise_i8x16_u {cor('lo')})))")
        out.append(f"(local.set $u (i16x8.add {d('hi')} (i16x8.extadd_pairwise_i8x16_u {cor('hi')})))")
        out.append(f"(local.set $sumi{r} (i32x4.add {L('sumi'+str(r))} (i32x4.add")
        out.append(f"  (i32x4.dot_i16x8_s (i8x16.shuffle 0 1 16 17 2 3 18 19 4 5 20 21 6 7 22 23 {L('t')} {L('u')}) (i32x4.splat {L('s')}))")
        out.append(f"  (i32x4.dot_i16x8_s (i8x16.shuffle 8 9 24 25 10 11 26 27 12 13 28 29 14 15 30 31 {L('t')} {L('u')}) (i32x4.splat {L('s')})))))")
    return out

def fp16(src):
    return f"""(local.set $h (i32.load16_u align=1 {L(src)}))
            (local.set $ex (i32.and (local.get $h) (i32.const 0x7C00)))
            (local.set $tiny (i32.sub (i32.const 0) (i32.eqz (local.get $ex))))
            (local.set $dw (f32.reinterpret_i32 (i32.or (i32.or
              (i32.reinterpret_f32 (f32.sub
                (f32.reinterpret_i32 (i32.add (i32.add (i32.shl (i32.and (local.get $h) (i32.const 0x7FFF)) (i32.const 13))
                                                       (i32.const 0x38000000))
                                              (i32.and (local.get $tiny) (i32.const 0x800000))))
                (f32.reinterpret_i32 (i32.and (local.get $tiny) (i32.const 0x38800000)))))
              (select (i32.const 0x7F800000) (i32.const 0) (i32.eq (local.get $ex) (i32.const 0x7C00))))
              (i32.shl (i32.and (local.get $h) (i32.const 0x8000)) (i32.const 16)))))"""

HEAD = {
 'iq3_s': """;; Sub-block ib: 8 grid indices (qs[8 ib + l] plus bit l of qh[ib] as bit 8), each a row of 4
;; magnitudes of kIQ3SGrid (1..15); 4 sign bytes (signs[4 ib + k], one per 8 elements); the scale
;; 2 (4-bit field) + 1, one per 32 elements.""",
 'iq3_xxs': """;; Sub-block ib: 8 grid indices (qs[8 ib + l]), each a row of 4 magnitudes of kIQ3XXSGrid (4..62);
;; a u32 at qs[64 + 4 ib]: four 7-bit sign fields (their parity bit from the mask table, as
;; kSignRows7) and the scale 2 (aux >> 28) + 1, one per 32 elements.""",
 'iq2_s': """;; Sub-block ib: 4 grid indices (qs[4 ib + k] plus bits 2k..2k+1 of qh[ib] as bits 8..9), each a row
;; of 8 magnitudes of kIQ2SGrid (8..43); 4 sign bytes (qs[32 + 4 ib + k]); the scales 2 (nibble) + 1
;; of elements 0..15 (low nibble of scales[ib]) and 16..31 (high).""",
}

# IQ3_S's index bits: qh bit l of row l, moved to bit 8 by a multiply (gather above)
QH_CONSTS = """    (local $qh_bits v128) (local $qh_mul v128)
    (local.set $qh_bits (v128.const i16x8 1 2 4 8 16 32 64 128))
    (local.set $qh_mul (v128.const i16x8 256 128 64 32 16 8 4 2))
"""

def module(fmt):
    f = F[fmt]
    sub = lambda r: "\n".join("              " + l for l in gather(fmt, r) + products(fmt, r))
    return f""";; {f['name']} x Q8_K decode, rows r and r + pairs together, with relaxed SIMD's
;; i16x8.relaxed_dot_i8x16_i7x16_s: the grid magnitudes (all 0..127) are the i7 operand and the signs
;; go to the activations, 16 products per instruction where the SIMD128 body (iquant::row, twice)
;; multiplies 8 i16 lanes and needs the signs as a multiply of their own. Hand-written because this
;; toolchain's clang 14 cannot emit relaxed SIMD; wasm/tools/splice_relaxed.mjs puts its body in place
;; of ox_simd128_{fmt}_pairs in the relaxed copy of the module (contract: kernels/simd128/relaxed_slots.h).
;; wabt 1.0.32 spells relaxed_dot without "relaxed_" (i16x8.dot_i8x16_i7x16_s). Generated by
;; kernels/simd128/relaxed/gen_iq_pairs.py (the three i-quant bodies differ only in how a sub-block
;; is read).
;;
;; Same bits as iquant::row<{f['cname']}>. A sign byte's mask m (0 or -1 per element, from iquant::kSignMasks*)
;; gives s a = (a ^ m) - m; a ^ m never overflows where -a would (a = -128), so the dot is taken
;; with a ^ m and the - m term added as the sum of the magnitudes under negative signs (g & m,
;; bytes of at most 124, pairwise widened). An i16 lane then holds the same four (IQ2_S: two)
;; products as the C++ body, at most 4 * 62 * 128 = 31744 in size at every step. Lane i of it holds
;; elements 2i, 2i + 1 (+ 16), which the C++ body's i32 lane i % 4 sums: a shuffle pairs lanes i and
;; i + 4 before the dot with the scale, so each i32 lane gets exactly the C++ body's integer. The
;; float steps are the C++ body's: per block acc += float(sumi) * (fp16(d) * y.d) in four lanes
;; (fp16 by util.h's integer path), then factor * (((l0 + l1) + l2) + l3).
{HEAD[fmt]}
(module
  (import "env" "memory" (memory 1 65536 shared))
  ;; nb blocks ({f['block']} bytes) per row of the matrix at w, rows w_stride bytes apart; y the token's
  ;; Q8_K blocks (292 bytes: f32 d, qs[256], bsums); grid the format's grid, masks its sign masks
  ;; (8 bytes per sign field); out[r] and out[r + pairs] receive the dots.
  (func (export "{fmt}_pairs")
    (param $nb i32) (param $w i32) (param $w_stride i32) (param $pairs i32) (param $y i32) (param $grid i32)
    (param $masks i32) (param $out i32)
    (local $r i32) (local $x0 i32) (local $x1 i32) (local $yb i32) (local $end i32) (local $ib i32) (local $p i32)
    (local $qh i32) (local $s i32) (local $h i32) (local $ex i32) (local $tiny i32)
    (local $dw f32) (local $yd f32)
    (local $acc0 v128) (local $acc1 v128) (local $sumi0 v128) (local $sumi1 v128) (local $a_lo v128) (local $a_hi v128)
    (local $g_lo v128) (local $g_hi v128) (local $m_lo v128) (local $m_hi v128) (local $t v128) (local $u v128)
{QH_CONSTS if fmt == 'iq3_s' else ''}    (if (i32.le_s (local.get $nb) (i32.const 0)) (then (local.set $nb (i32.const 0))))
    (local.set $r (i32.const 0))
    (block $rows_done
      (br_if $rows_done (i32.le_s (local.get $pairs) (i32.const 0)))
      (loop $row
        (local.set $x0 (i32.add (local.get $w) (i32.mul (local.get $r) (local.get $w_stride))))
        (local.set $x1 (i32.add (local.get $w) (i32.mul (i32.add (local.get $r) (local.get $pairs)) (local.get $w_stride))))
        (local.set $end (i32.add (local.get $x0) (i32.mul (local.get $nb) (i32.const {f['block']}))))
        (local.set $yb (local.get $y))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (block $blocks_done
          (br_if $blocks_done (i32.eq (local.get $x0) (local.get $end)))
          (loop $blocks
            (local.set $sumi0 (v128.const i32x4 0 0 0 0))
            (local.set $sumi1 (v128.const i32x4 0 0 0 0))
            (local.set $ib (i32.const 0))
            (loop $sub_blocks
              ;; the activations of sub-block ib, for both rows
              (local.set $p (i32.add (local.get $yb) (i32.shl (local.get $ib) (i32.const 5))))
              (local.set $a_lo (v128.load offset=4 align=1 (local.get $p)))
              (local.set $a_hi (v128.load offset=20 align=1 (local.get $p)))
              ;; row 0
{sub(0)}
              ;; row 1
{sub(1)}
              (br_if $sub_blocks (i32.lt_u (local.tee $ib (i32.add (local.get $ib) (i32.const 1))) (i32.const 8))))
            ;; acc += float(sumi) * (fp16(d) * y.d), row 0 then row 1
            (local.set $yd (f32.load (local.get $yb)))
            {fp16('x0')}
            (local.set $acc0 (f32x4.add (local.get $acc0) (f32x4.mul (f32x4.convert_i32x4_s (local.get $sumi0))
                                                                    (f32x4.splat (f32.mul (local.get $dw) (local.get $yd))))))
            {fp16('x1')}
            (local.set $acc1 (f32x4.add (local.get $acc1) (f32x4.mul (f32x4.convert_i32x4_s (local.get $sumi1))
                                                                    (f32x4.splat (f32.mul (local.get $dw) (local.get $yd))))))
            (local.set $x0 (i32.add (local.get $x0) (i32.const {f['block']})))
            (local.set $x1 (i32.add (local.get $x1) (i32.const {f['block']})))
            (local.set $yb (i32.add (local.get $yb) (i32.const 292)))
            (br_if $blocks (i32.ne (local.get $x0) (local.get $end)))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.mul (f32.const {f['factor']}) (f32.add (f32.add (f32.add
            (f32x4.extract_lane 0 (local.get $acc0)) (f32x4.extract_lane 1 (local.get $acc0)))
            (f32x4.extract_lane 2 (local.get $acc0))) (f32x4.extract_lane 3 (local.get $acc0)))))
        (f32.store align=1 (i32.add (local.get $out) (i32.shl (i32.add (local.get $r) (local.get $pairs)) (i32.const 2)))
          (f32.mul (f32.const {f['factor']}) (f32.add (f32.add (f32.add
            (f32x4.extract_lane 0 (local.get $acc1)) (f32x4.extract_lane 1 (local.get $acc1)))
            (f32x4.extract_lane 2 (local.get $acc1))) (f32x4.extract_lane 3 (local.get $acc1)))))
        (br_if $row (i32.lt_s (local.tee $r (i32.add (local.get $r) (i32.const 1))) (local.get $pairs))))))
)
"""

if __name__ == '__main__':
    d = sys.argv[1]
    for fmt in F:
        open(os.path.join(d, fmt + '_pairs.wat'), 'w').write(module(fmt))
