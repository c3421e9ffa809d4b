// oxidize bench page: loads a model, runs engine.bench() (core/tools/bench.cpp in the worker) and
// shows the markdown table and JSON rows `oxidize bench` prints. URL parameters: model (a URL, or
// "none"), p, n, r (as the inputs), threads (createEngine's), run=1 (run once the model is loaded).
import { createEngine, EngineError } from '../dist/index.js';

const $ = (id) => document.getElementById(id);
const ui = {
  runtime: $('runtime'), url: $('model-url'), loadUrl: $('load-url'), file: $('model-file'), modelInfo: $('model-info'),
  nPrompt: $('n-prompt'), nGen: $('n-gen'), reps: $('reps'), warmup: $('warmup'), run: $('run'), stop: $('stop'),
  error: $('error'), progress: $('progress'), markdown: $('markdown'), json: $('json'),
};
const state = { engine: null, busy: false, controller: null, report: null, error: null };
window.oxidizeBench = state;  // for the browser tests and the console

function showError(e) {
  state.error = e instanceof EngineError ? { code: e.code, message: e.message } : { code: 'page', message: String(e?.message ?? e) };
  ui.error.textContent = `${state.error.code}: ${state.error.message}`;
  ui.error.hidden = false;
}
function setBusy(busy) {
  state.busy = busy;
  ui.loadUrl.disabled = busy;
  ui.file.disabled = busy;
  ui.run.disabled = busy || state.engine?.model == null;
  ui.stop.disabled = !busy || state.controller === null;
}

// "128, 256" -> [128, 256]; anything else goes to engine.bench as is, which says what is wrong.
function sizes(text) {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
}

async function load(input) {
  ui.error.hidden = true;
  ui.modelInfo.textContent = 'loading…';
  setBusy(true);
  try {
    const m = await state.engine.load(input);
    ui.modelInfo.textContent = `${m.name}: ${m.arch}, ${m.n_layer} layers, vocab ${m.n_vocab}, ` +
      `${(m.size_bytes / 2 ** 20).toFixed(2)} MiB from ${m.source}, ${m.n_threads} thread${m.n_threads === 1 ? '' : 's'}`;
  } catch (e) {
    ui.modelInfo.textContent = 'no model loaded';
    showError(e);
  } finally {
    setBusy(false);
  }
}

async function run() {
  ui.error.hidden = true;
  state.error = null;
  state.report = null;
  state.controller = new AbortController();
  setBusy(true);
  ui.markdown.textContent = '';
  ui.json.textContent = '';
  ui.progress.textContent = 'running…';
  const t0 = performance.now();
  try {
    state.report = await state.engine.bench({
      nPrompt: sizes(ui.nPrompt.value),
      nGen: sizes(ui.nGen.value),
      reps: Number(ui.reps.value),
      warmup: ui.warmup.checked,
      signal: state.controller.signal,
      onProgress: ({ records, done, total }) => {
        ui.progress.textContent = `${done} of ${total} tests done (last: ${records.map((r) => `${r.test} ${r.avg_ts.toFixed(2)} t/s`).join(', ')})`;
      },
    });
    ui.markdown.textContent = state.report.markdown;
    ui.json.textContent = JSON.stringify(state.report.records, null, 2);
    ui.progress.textContent = `done in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  } catch (e) {
    ui.progress.textContent = 'stopped';
    showError(e);
  } finally {
    state.controller = null;
    setBusy(false);
  }
}

ui.loadUrl.addEventListener('click', () => load(ui.url.value.trim()));
ui.file.addEventListener('change', () => {
  if (ui.file.files?.[0]) load(ui.file.files[0]);
});
ui.run.addEventListener('click', run);
ui.stop.addEventListener('click', () => state.controller?.abort());

async function main() {
  const params = new URLSearchParams(location.search);
  for (const [key, input] of [['p', ui.nPrompt], ['n', ui.nGen], ['r', ui.reps]]) {
    if (params.has(key)) input.value = params.get(key);
  }
  try {
    state.engine = await createEngine({ threads: Number(params.get('threads') ?? 0) });
  } catch (e) {
    ui.runtime.textContent = 'the engine could not start';
    showError(e);
    return;
  }
  const r = state.engine.runtime;
  ui.runtime.textContent = `${r.build} build (${r.kernels}), ${r.threads} thread${r.threads === 1 ? '' : 's'}, ` +
    `cross-origin isolated: ${r.crossOriginIsolated ? 'yes' : 'no'} — ${r.reason}`;
  setBusy(false);
  const model = params.get('model') ?? ui.url.value.trim();
  if (model !== 'none') {
    ui.url.value = model;
    await load(model);
    if (params.get('run') === '1' && state.engine.model !== null) await run();
  }
}

main();
