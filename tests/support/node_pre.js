// Pre-js of the wasm test binaries. Emscripten's getenv under node sees a fixed default environment,
// not process.env, so OXIDIZE_SHARED (where the shared test data lives, see shared_data.cpp) is
// copied in before main() runs; without it a clone away from ../shared cannot find the data.
// OXIDIZE_WASM_RELAXED too: the tests check that the module wasm/relaxed_select.js loaded is the
// one ctest asked for (tests/kernels/simd128_relaxed_test.cpp). TEST_TMPDIR: testing::TempDir(), one folder
// per test binary (tests/CMakeLists.txt).
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function () {
  if (typeof process === 'undefined') return;
  for (const name of ['OXIDIZE_SHARED', 'OXIDIZE_WASM_RELAXED', 'TEST_TMPDIR']) {
    if (process.env[name] !== undefined) ENV[name] = process.env[name];
  }
});
