// oxidize chat: wires the app's parts (app/*.js) to the engine: starts it, loads models, streams
// replies into the conversation, stops, regenerates and resends, and keeps everything saved.
// URL parameter ?model=URL loads that model at start (otherwise the last model used, if stored).
import { createEngine, EngineError } from '../dist/index.js';

import { ChatView, metaText } from './app/chat_view.js';
import { ConversationList } from './app/conversation_list.js';
import { ConversationStore, newConversation, titleFrom } from './app/conversations.js';
import { ModelsPanel } from './app/models_panel.js';
import { ProgressMeter } from './app/progress.js';
import { FIELDS, buildForm, defaults, engineOptions, loadOptions, loadSettings, samplingParams, saveSettings } from './app/settings.js';
import { StoragePanel } from './app/storage_panel.js';
import { bytes, fileName } from './app/format.js';

const $ = (id) => document.getElementById(id);
const LAST_MODEL_KEY = 'oxidize-chat.lastModel';

const ui = {
  app: document.querySelector('.app'), scrim: $('scrim'), error: $('error'), errorText: $('error-text'),
  chat: $('chat'), composer: $('composer'), prompt: $('prompt'), send: $('send'), stop: $('stop'),
  runtime: $('runtime'), stats: $('stats'), contextMeter: $('context-meter'), contextText: $('context-text'),
  modelName: $('model-name'), modelInfo: $('model-info'), applyBox: $('apply-box'), applyText: $('apply-text'),
};

const state = {
  engine: null,
  settings: loadSettings(),
  store: new ConversationStore(),
  conversation: newConversation(),
  conversations: [],
  generation: null,     // the AbortController of the reply being generated
  loadController: null, // the load in progress
  source: null,         // what is loaded: {kind: 'url', url} or {kind: 'file', file}
  applied: null,        // the load and engine settings the running model was started with
};

// ---- errors and drawers ---------------------------------------------------------------------

function showError(e) {
  ui.errorText.textContent = e instanceof EngineError ? `${e.code}: ${e.message}` : String(e?.message ?? e);
  ui.error.hidden = false;
}
function clearError() {
  ui.error.hidden = true;
  ui.errorText.textContent = '';
}
$('error-close').addEventListener('click', clearError);

const drawers = { models: $('models-drawer'), settings: $('settings-drawer'), storage: $('storage-drawer') };
function openDrawer(name) {
  for (const [n, d] of Object.entries(drawers)) d.hidden = n !== name;
  ui.app.classList.remove('sidebar-open');
  ui.scrim.hidden = false;
  if (name === 'storage') void storage.refresh();
}
function closeOverlays() {
  for (const d of Object.values(drawers)) d.hidden = true;
  ui.app.classList.remove('sidebar-open');
  ui.scrim.hidden = true;
}
$('toggle-models').addEventListener('click', () => (drawers.models.hidden ? openDrawer('models') : closeOverlays()));
$('toggle-settings').addEventListener('click', () => (drawers.settings.hidden ? openDrawer('settings') : closeOverlays()));
$('toggle-storage').addEventListener('click', () => (drawers.storage.hidden ? openDrawer('storage') : closeOverlays()));
ui.modelName.addEventListener('click', () => openDrawer('models'));
for (const b of document.querySelectorAll('.close-drawer')) b.addEventListener('click', closeOverlays);
ui.scrim.addEventListener('click', closeOverlays);
$('toggle-sidebar').addEventListener('click', () => {
  closeOverlays();
  ui.app.classList.add('sidebar-open');
  ui.scrim.hidden = false;
});
$('close-sidebar').addEventListener('click', closeOverlays);
document.addEventListener('keydown', (ev) => {
  if (ev.key === 'Escape') closeOverlays();
});

// ---- the composer's state -------------------------------------------------------------------

function busy() {
  return state.generation !== null || state.loadController !== null;
}

function refreshControls() {
  const generating = state.generation !== null;
  ui.send.disabled = busy() || state.engine?.model == null;
  ui.send.hidden = generating;
  ui.stop.hidden = !generating;
  ui.stop.disabled = !generating;
  $('new-chat').disabled = false;
}

function showContext(usage) {
  const nCtx = state.engine?.model?.n_ctx ?? 0;
  if (!usage || nCtx === 0) {
    ui.contextMeter.value = 0;
    ui.contextText.textContent = nCtx ? `context: 0 / ${nCtx} tokens` : 'context: —';
    return;
  }
  const used = Math.min(usage.total_tokens, nCtx);
  ui.contextMeter.value = used / nCtx;
  ui.contextText.textContent = `context: ${used} / ${nCtx} tokens (${Math.round((100 * used) / nCtx)}%)`;
}

function showTimings(t) {
  ui.stats.textContent =
    `prompt ${t.prompt_tokens} tokens (${t.prompt_tokens_per_second.toFixed(0)} tokens/s, ${t.prompt_tokens_cached} cached) · ` +
    `reply ${t.generated_tokens} tokens, ${t.tokens_per_second.toFixed(1)} tokens/s · ${t.threads} thread${t.threads === 1 ? '' : 's'}`;
}

// ---- conversations --------------------------------------------------------------------------

const chatView = new ChatView(ui.chat, {
  edit: (index, text) => void editMessage(index, text),
  regenerate: (index) => void regenerate(index),
});

const conversationList = new ConversationList($('conversation-list'), {
  open: (id) => void openConversation(id),
  rename: async (id, title) => {
    const c = id === state.conversation.id ? state.conversation : await state.store.get(id);
    if (!c) return;
    c.title = title;
    c.titleSet = true;
    await state.store.put(c);
    await refreshList();
  },
  remove: async (id) => {
    if (id === state.conversation.id) {
      stopGeneration();
      state.conversation.deleted = true;  // a reply still finishing must not store it again
      state.conversation = newConversation();
      renderChat();
    }
    await state.store.delete(id);
    await refreshList();
  },
});

function emptyHint() {
  if (!state.engine) return 'Starting the engine…';
  if (!state.engine.model) return 'Choose a model (Models, above) to start.\nIt runs in this page: nothing you type leaves your device.';
  return state.settings.useTemplate
    ? `Chat with ${state.engine.model.name}.`
    : `${state.engine.model.name} has no chat template: it continues the text you send.`;
}

function renderChat() {
  chatView.render(state.conversation.messages, { busy: busy(), emptyHint: emptyHint() });
  showContext(state.conversation.lastUsage);
  refreshControls();
}

async function refreshList() {
  state.conversations = await state.store.list();
  conversationList.render(state.conversations, state.conversation.id);
}

async function save(conversation = state.conversation) {
  // A new chat is stored from its first message on; a deleted one not at all.
  if (conversation.messages.length === 0 || conversation.deleted) return;
  await state.store.put(conversation);
  await refreshList();
}

async function openConversation(id) {
  if (id === state.conversation.id) {
    closeOverlays();
    return;
  }
  stopGeneration();
  const c = await state.store.get(id);
  if (!c) return;
  state.conversation = c;
  renderChat();
  conversationList.render(state.conversations, c.id);
  closeOverlays();
}

$('new-chat').addEventListener('click', () => {
  stopGeneration();
  state.conversation = newConversation();
  renderChat();
  conversationList.render(state.conversations, null);
  closeOverlays();
  ui.prompt.focus();
});

// ---- generation -----------------------------------------------------------------------------

function stopGeneration() {
  state.generation?.abort();
}
ui.stop.addEventListener('click', stopGeneration);

// The request for a reply to the conversation as it is: chat messages (system prompt first) with
// the model's template, or the last user message as a prompt to continue without one.
function request(messages) {
  const params = { ...samplingParams(state.settings), stream: true };
  if (!state.settings.useTemplate) {
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    return { kind: 'text', body: { ...params, prompt: lastUser?.content ?? '' } };
  }
  const out = [];
  const system = state.settings.systemPrompt?.trim();
  if (system) out.push({ role: 'system', content: system });
  for (const m of messages) if (m.content.trim() !== '') out.push({ role: m.role, content: m.content });
  return { kind: 'chat', body: { ...params, messages: out } };
}

/** Streams a reply to the conversation's messages and appends it. */
async function generate() {
  const engine = state.engine;
  if (!engine?.model || busy()) return;
  clearError();
  const conversation = state.conversation;
  let kind, body;
  try {
    ({ kind, body } = request(conversation.messages));
  } catch (e) {
    showError(e);
    return;
  }
  const view = chatView.startReply();
  const controller = new AbortController();
  state.generation = controller;  // busy from here on: no second send while the request starts
  renderBusy();
  let reply = '', finish = null, timings = null, usage = null;
  try {
    const req = { ...body, signal: controller.signal };
    const stream = kind === 'chat' ? await engine.chat.completions.create(req) : await engine.completions.create(req);
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const piece = kind === 'chat' ? choice?.delta?.content ?? '' : choice?.text ?? '';
      if (piece) {
        reply += piece;
        view.update(reply);
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.timings) timings = chunk.timings;
      if (chunk.usage) usage = chunk.usage;
    }
  } catch (e) {
    if (!(e instanceof EngineError && e.code === 'aborted')) showError(e);  // stopped before it began
  } finally {
    state.generation = null;
  }
  if (reply !== '' || finish !== null) {
    conversation.messages.push({
      role: 'assistant',
      content: reply,
      meta: {
        tokens: timings?.generated_tokens ?? 0, tokensPerSecond: timings?.tokens_per_second ?? 0,
        finish: finish ?? 'abort', model: engine.model?.name ?? '',
      },
    });
  }
  if (usage) conversation.lastUsage = usage;
  if (timings) showTimings(timings);
  if (conversation === state.conversation) renderChat();
  await save(conversation);
  window.oxidizeDemo.replies++;
}

// While a reply streams, the other messages' actions are disabled (the view re-renders at the end).
function renderBusy() {
  for (const b of ui.chat.querySelectorAll('.msg:not(.streaming) .actions button:not(.act-copy)')) b.disabled = true;
  refreshControls();
}

async function send(text) {
  const c = state.conversation;
  c.messages.push({ role: 'user', content: text });
  if (!c.titleSet && c.messages.filter((m) => m.role === 'user').length === 1) c.title = titleFrom(text);
  renderChat();
  await save();
  await generate();
}

async function regenerate(index) {
  if (busy()) return;
  const messages = state.conversation.messages;
  // Back to the last user message at or before `index`; its replies go.
  let cut = index;
  while (cut >= 0 && messages[cut].role !== 'user') cut--;
  if (cut < 0) return;
  messages.splice(cut + 1);
  renderChat();
  await generate();
}

async function editMessage(index, text) {
  if (busy()) return;
  const messages = state.conversation.messages;
  const m = messages[index];
  if (!m) return;
  m.content = text;
  if (m.meta) m.meta.edited = true;
  if (m.role === 'user') {
    messages.splice(index + 1);  // what came after answered the old text
    renderChat();
    await save();
    await generate();
  } else {
    renderChat();
    await save();
  }
}

ui.composer.addEventListener('submit', (ev) => {
  ev.preventDefault();
  const text = ui.prompt.value.trim();
  if (!text || ui.send.disabled) return;
  ui.prompt.value = '';
  autoGrow();
  void send(text);
});
ui.prompt.addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    ui.composer.requestSubmit();
  }
});
function autoGrow() {
  ui.prompt.style.height = 'auto';
  ui.prompt.style.height = `${Math.min(ui.prompt.scrollHeight + 2, window.innerHeight * 0.4)}px`;
}
ui.prompt.addEventListener('input', autoGrow);

// ---- models ---------------------------------------------------------------------------------

const models = new ModelsPanel({
  root: drawers.models, url: $('model-url'), loadUrl: $('load-url'), file: $('model-file'), cancel: $('cancel-load'),
  progressBox: $('load-box'), progress: $('load-progress'), progressText: $('progress-text'),
  catalog: $('model-list'), customSection: $('custom-section'), customList: $('custom-list'),
  localSection: $('local-section'), localList: $('local-list'),
}, {
  loadUrl: (url) => void loadModel({ kind: 'url', url }),
  loadFile: (file) => void loadModel({ kind: 'file', file }),
  cancel: () => state.loadController?.abort(),
});

function describeModel(info) {
  const kv = info.cache_type_k === info.cache_type_v ? info.cache_type_k : `${info.cache_type_k}/${info.cache_type_v}`;
  return `${info.name}: ${info.arch}, ${info.n_layer} layers, ${bytes(info.size_bytes)}, context ${info.n_ctx} ` +
    `of ${info.n_ctx_train} trained, KV cache ${kv} (${bytes(info.kv_bytes)}), chat template ${info.chatTemplate.name} ` +
    `(${info.chatTemplate.origin})${info.has_chat_template ? '' : ': none in the file, text is continued'}, from ${info.source}`;
}

function showModel() {
  const info = state.engine?.model;
  ui.modelName.textContent = info ? info.name : 'no model';
  ui.modelInfo.textContent = info ? describeModel(info) : 'no model loaded';
  models.setLoaded(info && state.source?.kind === 'url' ? state.source.url : null);
}

/** Loads a model (a URL or a File) with the load settings; the previous one stays if this fails. */
async function loadModel(source) {
  if (!state.engine || state.loadController) return;
  stopGeneration();
  clearError();
  const controller = new AbortController();
  state.loadController = controller;
  models.setLoading(true);
  refreshControls();
  const meter = new ProgressMeter();
  const input = source.kind === 'url' ? source.url : source.file;
  try {
    const info = await state.engine.load(input, {
      ...loadOptions(state.settings),
      cache: $('use-cache').checked,
      signal: controller.signal,
      onProgress: (p) => models.showProgress(meter.update(p)),
    });
    state.source = source;
    state.applied = appliedSettings();
    state.settings.useTemplate = info.has_chat_template;
    saveSettings(state.settings);
    settingsForm.set(state.settings);
    models.finishProgress(`loaded ${info.name} (${bytes(info.size_bytes)}, ${info.source === 'cache' ? 'from storage' : info.source})`, true);
    if (!drawers.models.hidden) closeOverlays();
    if (source.kind === 'url') {
      models.remember(source.url);
      localStorage.setItem(LAST_MODEL_KEY, source.url);
    }
  } catch (e) {
    const cancelled = e instanceof EngineError && e.code === 'aborted';
    models.finishProgress(cancelled ? 'cancelled' : 'failed (see the message above)', false);
    if (!cancelled) showError(e);
  } finally {
    state.loadController = null;
    models.setLoading(false);
    showModel();
    showApplyBox();
    renderChat();
    void storage.refresh();
  }
}

// ---- settings -------------------------------------------------------------------------------

function appliedSettings() {
  const s = state.settings;
  return { nCtx: s.nCtx, kvType: s.kvType, threads: s.threads };
}

// Context size, KV type and threads take effect when the model loads again (threads: the engine
// restarts); until then the settings say so, with a button that does it.
function pendingChanges() {
  if (!state.applied || !state.source) return [];
  const now = appliedSettings();
  return FIELDS.filter((f) => f.applies !== 'request' && now[f.key] !== state.applied[f.key]);
}

function showApplyBox() {
  const pending = pendingChanges();
  ui.applyBox.hidden = pending.length === 0;
  if (pending.length === 0) return;
  const restart = pending.some((f) => f.applies === 'engine');
  ui.applyText.textContent = `${pending.map((f) => f.label).join(', ')}: applied when the model loads again` +
    (restart ? ' in a restarted engine.' : '.');
}

const settingsForm = buildForm($('settings-form'), state.settings, (settings, field) => {
  if (field.applies !== 'request') showApplyBox();
  if (field.key === 'useTemplate') renderChat();
});

$('reset-settings').addEventListener('click', () => {
  const useTemplate = state.settings.useTemplate;
  Object.assign(state.settings, defaults(), { useTemplate });
  saveSettings(state.settings);
  settingsForm.set(state.settings);
  showApplyBox();
});

$('apply-settings').addEventListener('click', async () => {
  const restart = pendingChanges().some((f) => f.applies === 'engine');
  if (restart) {
    stopGeneration();
    state.loadController?.abort();
    state.engine?.terminate();
    state.engine = null;
    showModel();
    if (!(await startEngine())) return;
  }
  if (state.source) await loadModel(state.source);
});

// ---- storage --------------------------------------------------------------------------------

const storage = new StoragePanel({
  list: $('stored-list'), summary: $('storage-summary'), quota: $('quota'), persistence: $('persistence'),
  persist: $('persist'), refresh: $('refresh-storage'), clear: $('clear-storage'),
}, () => state.engine, (list) => models.setStored(list), showError);

// ---- start ----------------------------------------------------------------------------------

async function startEngine() {
  ui.runtime.textContent = 'starting the engine…';
  try {
    state.engine = await createEngine(engineOptions(state.settings));
  } catch (e) {
    ui.runtime.textContent = 'the engine could not start';
    showError(e);
    return false;
  }
  const r = state.engine.runtime;
  ui.runtime.textContent =
    `engine: ${r.build} build (${r.kernels}), ${r.threads} thread${r.threads === 1 ? '' : 's'} · ${r.reason}`;
  window.oxidizeDemo.engine = state.engine;
  refreshControls();
  return true;
}

// For the browser tests and the console.
window.oxidizeDemo = { engine: null, state, replies: 0, ready: false, metaText };

async function main() {
  try {
    await state.store.open();
    await refreshList();
    if (state.conversations.length > 0) state.conversation = state.conversations[0];
  } catch (e) {
    showError(new Error(`conversations cannot be kept in this browser (IndexedDB: ${e?.message ?? e})`));
  }
  renderChat();
  if (!(await startEngine())) return;
  const [stored] = await Promise.all([storage.refresh(), models.findLocal()]);
  renderChat();
  const param = new URLSearchParams(location.search).get('model');
  const last = localStorage.getItem(LAST_MODEL_KEY);
  const lastStored = last !== null && stored.some((s) => s.url === new URL(last, location.href).href && s.complete);
  if (param && param !== 'none') await loadModel({ kind: 'url', url: param });
  else if (param !== 'none' && lastStored) await loadModel({ kind: 'url', url: last });
  else openDrawer('models');
  window.oxidizeDemo.ready = true;
  document.title = state.engine.model ? `oxidize chat · ${fileName(state.engine.model.name)}` : 'oxidize chat';
}

void main();
