// oxidize demo: model picker (URL or local file), streaming chat, stop button, speed and thread count.
import { createEngine, EngineError } from '../dist/index.js';

const $ = (id) => document.getElementById(id);
const ui = {
  runtime: $('runtime'), url: $('model-url'), loadUrl: $('load-url'), file: $('model-file'), useCache: $('use-cache'),
  cancelLoad: $('cancel-load'), progress: $('load-progress'), modelInfo: $('model-info'), maxTokens: $('max-tokens'),
  temperature: $('temperature'), topP: $('top-p'), seed: $('seed'), useTemplate: $('use-template'), error: $('error'),
  chat: $('chat'), composer: $('composer'), prompt: $('prompt'), send: $('send'), stop: $('stop'), clear: $('clear'),
  stats: $('stats'),
};

let engine = null;
let messages = [];         // the conversation, OpenAI-style
let generating = null;     // the running stream
let loadController = null;

function showError(e) {
  const text = e instanceof EngineError ? `${e.code}: ${e.message}` : String(e?.message ?? e);
  ui.error.textContent = text;
  ui.error.hidden = false;
}
function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = '';
}
function mib(bytes) {
  return (bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 1) + ' MiB';
}
function setBusy(loading) {
  ui.loadUrl.disabled = loading || generating !== null;
  ui.file.disabled = loading || generating !== null;
  ui.cancelLoad.disabled = !loading;
  ui.send.disabled = loading || generating !== null || engine?.model == null;
  ui.stop.disabled = generating === null;
}

async function load(input) {
  clearError();
  loadController = new AbortController();
  ui.progress.value = 0;
  ui.modelInfo.textContent = 'loading…';
  setBusy(true);
  try {
    const info = await engine.load(input, {
      signal: loadController.signal,
      cache: ui.useCache.checked,
      onProgress: ({ loaded, total, source }) => {
        ui.progress.value = total > 0 ? loaded / total : 0;
        ui.modelInfo.textContent = `${source}: ${mib(loaded)}${total > 0 ? ' of ' + mib(total) : ''}`;
      },
    });
    ui.progress.value = 1;
    ui.useTemplate.checked = info.has_chat_template;
    ui.modelInfo.textContent =
      `${info.name}: ${info.arch}, ${info.n_layer} layers, vocab ${info.n_vocab}, context ${info.n_ctx}, ` +
      `${mib(info.size_bytes)} from ${info.source}, chat template ${info.chatTemplate.name} (${info.chatTemplate.origin})` +
      (info.has_chat_template ? '' : ' (none in the file: raw completion by default)');
  } catch (e) {
    ui.progress.value = 0;
    // A failed load leaves the previous model loaded (engine.model): it still answers.
    ui.modelInfo.textContent = engine.model ? `${engine.model.name} (still loaded)` : 'no model loaded';
    showError(e);
  } finally {
    loadController = null;
    setBusy(false);
  }
}

function addMessage(role, text) {
  const div = document.createElement('div');
  div.className = `msg ${role}`;
  div.textContent = text;
  ui.chat.appendChild(div);
  div.scrollIntoView({ block: 'end' });
  return div;
}

function samplingParams() {
  const params = {
    max_tokens: Number(ui.maxTokens.value) || 128,
    temperature: Number(ui.temperature.value),
    top_p: Number(ui.topP.value),
  };
  if (ui.seed.value !== '') params.seed = Number(ui.seed.value);
  return params;
}

async function send(text) {
  clearError();
  messages.push({ role: 'user', content: text });
  addMessage('user', text);
  const bubble = addMessage('assistant', '');
  bubble.classList.add('streaming');
  const params = samplingParams();
  let reply = '';
  try {
    // Models without a chat template (like stories260K) continue the user's text instead.
    generating = ui.useTemplate.checked
      ? await engine.chat.completions.create({ messages, stream: true, ...params })
      : await engine.completions.create({ prompt: text, stream: true, ...params });
    setBusy(false);
    for await (const chunk of generating) {
      const choice = chunk.choices[0];
      const piece = choice.delta ? choice.delta.content ?? '' : choice.text;
      reply += piece;
      bubble.textContent = reply;
      if (chunk.timings) {
        const t = chunk.timings;
        const meta = document.createElement('span');
        meta.className = 'meta';
        meta.textContent = `${t.generated_tokens} tokens, ${t.tokens_per_second.toFixed(1)} tokens/s` +
          ` · finish: ${choice.finish_reason}`;
        bubble.appendChild(meta);
        ui.stats.textContent =
          `${engine.runtime.build}, ${t.threads} thread${t.threads === 1 ? '' : 's'} · prompt ${t.prompt_tokens} tokens ` +
          `(${t.prompt_tokens_per_second.toFixed(0)} tokens/s, ${t.prompt_tokens_cached} cached) · generation ` +
          `${t.generated_tokens} tokens, ${t.tokens_per_second.toFixed(1)} tokens/s`;
      }
      bubble.scrollIntoView({ block: 'end' });
    }
    messages.push({ role: 'assistant', content: reply });
  } catch (e) {
    showError(e);
    messages.pop();
  } finally {
    bubble.classList.remove('streaming');
    generating = null;
    setBusy(false);
  }
}

ui.loadUrl.addEventListener('click', () => load(ui.url.value.trim()));
ui.file.addEventListener('change', () => {
  if (ui.file.files?.[0]) load(ui.file.files[0]);
});
ui.cancelLoad.addEventListener('click', () => loadController?.abort());
ui.composer.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const text = ui.prompt.value.trim();
  if (!text || ui.send.disabled) return;
  ui.prompt.value = '';
  send(text);
});
ui.prompt.addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey) {
    ev.preventDefault();
    ui.composer.requestSubmit();
  }
});
ui.stop.addEventListener('click', () => generating?.abort());
ui.clear.addEventListener('click', () => {
  messages = [];
  ui.chat.textContent = '';
  ui.stats.textContent = '—';
});

async function main() {
  try {
    engine = await createEngine();
  } catch (e) {
    ui.runtime.textContent = 'the engine could not start';
    showError(e);
    return;
  }
  const r = engine.runtime;
  ui.runtime.textContent = `${r.build} build (${r.kernels}), ${r.threads} thread${r.threads === 1 ? '' : 's'} — ${r.reason}`;
  window.oxidizeDemo = { engine };  // for the browser tests and the console
  setBusy(false);
  const params = new URLSearchParams(location.search);
  if (params.get('model') !== 'none') load(params.get('model') ?? ui.url.value.trim());
}

main();
