// Pre-js (wasm/relaxed.cmake): loads NAME.relaxed.wasm, the copy with relaxed-SIMD kernel bodies,
// in place of NAME.wasm where this engine validates relaxed SIMD (Chromium and Firefox do; node 20
// only with --experimental-wasm-relaxed-simd). Both compute the same bits. Module.oxidizeRelaxed
// or, under node, OXIDIZE_WASM_RELAXED picks: "0" the plain module, "1" the relaxed one or an
// error, unset whichever the engine runs. Pthread workers receive the module the page compiled.
// A Module.locateFile given by the caller (the web worker's, web/src/wasm_files.ts) is asked for
// NAME.relaxed.wasm in place of NAME.wasm.
(function () {
  // (func (result v128) (i16x8.relaxed_dot_i8x16_i7x16_s (i8x16.splat 0) (i8x16.splat 0)))
  var probe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 15, 1, 13, 0, 65, 0, 253,
                              15, 65, 0, 253, 15, 253, 146, 2, 11]);
  var want = Module['oxidizeRelaxed'];
  if (want === undefined && typeof process === 'object' && process.env && process.env.OXIDIZE_WASM_RELAXED !== undefined) {
    want = process.env.OXIDIZE_WASM_RELAXED !== '0';
  }
  if (want === false) return;
  if (!WebAssembly.validate(probe)) {
    if (want === true) throw new Error('OXIDIZE_WASM_RELAXED=1, but this engine does not validate relaxed SIMD');
    return;
  }
  var locate = Module['locateFile'];
  Module['locateFile'] = function (path, prefix) {
    var relaxed = path.replace(/\.wasm$/, '.relaxed.wasm');
    return locate ? locate(relaxed, prefix) : prefix + relaxed;
  };
})();
