// Pre-js of the node build of the CLI: node 20's global fetch cannot load the .wasm from a file
// path, so hide it and let Emscripten read the file with fs instead.
var fetch = undefined;
