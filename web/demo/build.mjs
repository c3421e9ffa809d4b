#!/usr/bin/env node
// Bundles the chat demo's npm libraries (marked, DOMPurify: app/vendor_entry.js) into
// demo/build/vendor.js with the Vite already in web/'s devDependencies; the app's own modules
// (app/*.js) are served as they are. scripts/build-web runs it; run it by hand with
// `node web/demo/build.mjs` after `npm install` in web/.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'vite';

const demoDir = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(demoDir, '..', 'node_modules');
for (const name of ['marked', 'dompurify']) {
  if (!fs.existsSync(path.join(modules, name, 'package.json'))) {
    console.error(`web/demo/build.mjs: ${name} is not installed in web/node_modules: run scripts/setup (or npm install in web/)`);
    process.exit(1);
  }
}

await build({
  configFile: false,
  logLevel: 'warn',
  root: demoDir,
  build: {
    outDir: path.join(demoDir, 'build'),
    emptyOutDir: true,
    minify: true,
    sourcemap: true,
    target: 'es2020',
    lib: { entry: path.join(demoDir, 'app', 'vendor_entry.js'), formats: ['es'], fileName: () => 'vendor.js' },
  },
});
