// Pre-js of the wasm test binaries. Emscripten's getenv under node sees a fixed default environment,
// not process.env, so OXIDIZE_SHARED (where the shared test data lives, see shared_data.cpp) is
// copied in before main() runs; without it a clone away from ../shared cannot find the data.
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function () {
  if (typeof process !== 'undefined' && process.env.OXIDIZE_SHARED) ENV['OXIDIZE_SHARED'] = process.env.OXIDIZE_SHARED;
});
