// Runs a wasm GoogleTest binary (built without NODERAWFS: test_kernels_chromium, tests/CMakeLists.txt)
// in headless Chromium, where the relaxed-SIMD bodies run under the V8 users have. node 20's V8 and
// Chromium's lower some relaxed instructions differently (relaxed_slots.h: u8_dot_exact), so bodies
// that only run in Chromium are tested there. Prints the program's output; exits with its status.
//   node tests/kernels/chromium_run.mjs BIN_DIR NAME [gtest arguments...]
// OXIDIZE_CHROMIUM names another Chromium (default /usr/bin/chromium); bench/peers' playwright-core
// drives it (scripts/setup installs both).
import fs from 'node:fs';
import path from 'node:path';
import { runProgramPage, startServer } from '../../bench/peers/lib/browser.mjs';

const [binDir, name, ...args] = process.argv.slice(2);
if (!binDir || !name) {
  console.error('usage: node tests/kernels/chromium_run.mjs BIN_DIR NAME [gtest arguments...]');
  process.exit(2);
}
const script = path.join(path.resolve(binDir), `${name}.js`);
if (!fs.existsSync(script)) {
  console.error(`no ${script}: build it with \`cmake --build build/wasm --target ${name}\``);
  process.exit(2);
}
const page = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script>
  var Module = {
    arguments: ${JSON.stringify(args)},
    print: (line) => console.log(line),
    printErr: (line) => console.error(line),
    onExit: (code) => console.log('done (exit ' + code + ')'),
    onAbort: (what) => console.log('done (abort: ' + what + ')'),
  };
</script><script src="/bin/${name}.js"></script>`;
const pageFile = path.join(fs.mkdtempSync(path.join(process.env.TMPDIR || '/tmp', 'oxidize-chromium-run-')), 'run.html');
fs.writeFileSync(pageFile, page);

const server = await startServer({ mounts: { '/bin/': path.resolve(binDir) }, files: { '/run.html': pageFile } });
let status = 1;
try {
  status = await runProgramPage(`${server.url}/run.html`);
} finally {
  await server.close();
  fs.rmSync(path.dirname(pageFile), { recursive: true, force: true });
}
process.exit(status);
