// Where the worker finds the wasm builds' files (dist/wasm/): each named by a literal
// `new URL('./wasm/FILE', import.meta.url)`, so that bundlers (Vite, webpack 5) emit it as an asset
// and rewrite the URL, or under the caller's `wasmBaseUrl`. The Emscripten glue asks for the .wasm
// and the pthread worker script by name through Module.locateFile, answered from this table.
import type { ModuleArgs, ModuleFactory } from './wasm_module.js';

export type Build = 'mt' | 'st';

export interface BuildFiles {
  /** The Emscripten JS glue (an ES module whose default export is the factory). */
  glue: string;
  /** URL of each file the glue asks locateFile for (NAME.wasm, NAME.relaxed.wasm, NAME.worker.js). */
  byName: Record<string, string>;
}

const NAMES: Record<Build, string[]> = {
  mt: ['oxidize-mt.wasm', 'oxidize-mt.relaxed.wasm', 'oxidize-mt.worker.js'],
  st: ['oxidize-st.wasm', 'oxidize-st.relaxed.wasm'],
};

// Literal URLs only: a bundler finds `new URL('<string>', import.meta.url)` and nothing computed.
function packaged(build: Build): BuildFiles {
  if (build === 'mt') {
    return {
      glue: new URL('./wasm/oxidize-mt.js', import.meta.url).href,
      byName: {
        'oxidize-mt.wasm': new URL('./wasm/oxidize-mt.wasm', import.meta.url).href,
        'oxidize-mt.relaxed.wasm': new URL('./wasm/oxidize-mt.relaxed.wasm', import.meta.url).href,
        'oxidize-mt.worker.js': new URL('./wasm/oxidize-mt.worker.js', import.meta.url).href,
      },
    };
  }
  return {
    glue: new URL('./wasm/oxidize-st.js', import.meta.url).href,
    byName: {
      'oxidize-st.wasm': new URL('./wasm/oxidize-st.wasm', import.meta.url).href,
      'oxidize-st.relaxed.wasm': new URL('./wasm/oxidize-st.relaxed.wasm', import.meta.url).href,
    },
  };
}

/** The files of `build`: the package's own, or those in the folder `baseUrl` (absolute, ending in '/'). */
export function buildFiles(build: Build, baseUrl: string | null): BuildFiles {
  if (baseUrl === null) return packaged(build);
  const byName: Record<string, string> = {};
  for (const name of NAMES[build]) byName[name] = new URL(name, baseUrl).href;
  return { glue: new URL(`oxidize-${build}.js`, baseUrl).href, byName };
}

/**
 * A same-origin blob: script that imports the pthread worker script at `url` as a module. The glue
 * starts its pool workers as classic scripts from whatever URL locateFile gives; through this
 * bootstrap the script may be a data: URL (Vite inlines small assets), served with a dev server's
 * module transforms (Vite injects `import` statements), or on another origin with CORS. Messages
 * that arrive before the script has set its handler are replayed to it.
 */
function pthreadBootstrap(url: string): string {
  const source =
    '"use strict";var early=[];self.onmessage=function(e){early.push(e)};' +
    `import(${JSON.stringify(url)}).then(function(){var h=self.onmessage;early.forEach(function(e){h(e)})},` +
    'function(e){setTimeout(function(){throw e})});';
  return URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
}

/** Module arguments that point the glue (and its pthread workers) at `files`. */
export function locateArgs(files: BuildFiles): Pick<ModuleArgs, 'locateFile' | 'mainScriptUrlOrBlob'> {
  let bootstrap: string | null = null;
  return {
    locateFile: (path, prefix) => {
      const url = files.byName[path] ?? prefix + path;
      if (!path.endsWith('.worker.js')) return url;
      bootstrap ??= pthreadBootstrap(url);
      return bootstrap;
    },
    mainScriptUrlOrBlob: files.glue,
  };
}

/** Imports the glue at run time from its URL (bundlers are told to leave this import alone). */
export async function importFactory(files: BuildFiles): Promise<ModuleFactory> {
  const mod = (await import(/* webpackIgnore: true */ /* @vite-ignore */ files.glue)) as { default: ModuleFactory };
  return mod.default;
}
