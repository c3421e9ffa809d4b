// The model picker: the curated catalog, the URLs the user added (remembered in localStorage), a
// local file, with a "cached" badge on each model already in the browser's storage and the
// download's progress (percent, speed, time left). It reports choices to main.js, which loads.
import { CATALOG, LOCAL_MODELS, quantOf } from './catalog.js';
import { approxSize, bytes, fileName, modelFolder } from './format.js';

const CUSTOM_KEY = 'oxidize-chat.customModels';

function absolute(url) {
  try {
    return new URL(url, location.href).href;
  } catch {
    return url;
  }
}

export class ModelsPanel {
  /** ui: the panel's elements (see index.html); handlers: loadUrl(url), loadFile(file), cancel(). */
  constructor(ui, handlers) {
    this.ui = ui;
    this.handlers = handlers;
    this.stored = new Map();  // absolute URL -> StoredModel
    this.loadedUrl = null;
    this.loading = false;
    this.local = [];  // LOCAL_MODELS this server has
    ui.loadUrl.addEventListener('click', () => this.submitUrl());
    ui.url.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') this.submitUrl();
    });
    ui.file.addEventListener('change', () => {
      const file = ui.file.files?.[0];
      if (file) handlers.loadFile(file);
      ui.file.value = '';
    });
    ui.cancel.addEventListener('click', () => handlers.cancel());
    this.renderLists();
  }

  /** Looks for LOCAL_MODELS on the page's own server, when that is this machine (a developer's). */
  async findLocal() {
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(location.hostname)) return;
    const found = await Promise.all(LOCAL_MODELS.map(async (m) => {
      try {
        return (await fetch(m.url, { method: 'HEAD' })).ok ? { ...m, url: absolute(m.url) } : null;
      } catch {
        return null;
      }
    }));
    this.local = found.filter(Boolean);
    this.renderLists();
  }

  submitUrl() {
    const url = this.ui.url.value.trim();
    if (!url || this.loading) return;
    this.handlers.loadUrl(url);
  }

  customModels() {
    try {
      const list = JSON.parse(localStorage.getItem(CUSTOM_KEY) ?? '[]');
      return Array.isArray(list) ? list.filter((u) => typeof u === 'string') : [];
    } catch {
      return [];
    }
  }

  /** Remembers a URL the user loaded (not one of the catalog's) under "Your models". */
  remember(url) {
    const abs = absolute(url);
    if (CATALOG.some((m) => m.url === abs) || this.local.some((m) => m.url === abs)) return;
    const list = [abs, ...this.customModels().filter((u) => u !== abs)].slice(0, 20);
    localStorage.setItem(CUSTOM_KEY, JSON.stringify(list));
    this.renderLists();
  }

  forget(url) {
    localStorage.setItem(CUSTOM_KEY, JSON.stringify(this.customModels().filter((u) => u !== url)));
    this.renderLists();
  }

  /** The store's files (engine.cache.list()): complete ones get the "cached" badge. */
  setStored(storedModels) {
    this.stored = new Map(storedModels.map((s) => [s.url, s]));
    this.renderLists();
  }

  setLoaded(url) {
    this.loadedUrl = url === null ? null : absolute(url);
    this.renderLists();
  }

  setLoading(loading) {
    this.loading = loading;
    this.ui.cancel.hidden = !loading;
    this.ui.loadUrl.disabled = loading;
    this.ui.file.disabled = loading;
    for (const b of this.ui.root.querySelectorAll('.load-model')) b.disabled = loading;
    if (loading) {
      this.ui.progressBox.hidden = false;
      this.ui.progress.removeAttribute('value');  // indeterminate until the first event
      this.ui.progressText.textContent = 'starting…';
    }
  }

  /** A ProgressMeter view: {fraction, text}. */
  showProgress(view) {
    if (view.fraction === null) this.ui.progress.removeAttribute('value');
    else this.ui.progress.value = view.fraction;
    this.ui.progressText.textContent = view.text;
  }

  /** The end of a load: a line that stays (done / failed / cancelled). */
  finishProgress(text, ok) {
    if (ok) this.ui.progress.value = 1;
    else this.ui.progress.value = 0;
    this.ui.progressText.textContent = text;
  }

  renderLists() {
    this.ui.catalog.replaceChildren(...CATALOG.map((m) => this.card({
      url: m.url, name: m.name, facts: [m.params, m.quant, `≈ ${approxSize(m.bytes)}`, m.arch], note: m.note,
    })));
    this.ui.localSection.hidden = this.local.length === 0;
    this.ui.localList.replaceChildren(...this.local.map((m) => this.card(m)));
    const custom = this.customModels().filter((u) => !this.local.some((m) => m.url === u));
    this.ui.customSection.hidden = custom.length === 0;
    this.ui.customList.replaceChildren(...custom.map((url) => {
      const s = this.stored.get(url);
      const name = fileName(url);
      const facts = [quantOf(name) || 'GGUF'];
      if (s) facts.push(bytes(s.size));
      facts.push(modelFolder(url));
      return this.card({ url, name, facts, note: '', removable: true });
    }));
  }

  card({ url, name, facts, note, removable = false }) {
    const li = document.createElement('li');
    li.className = 'model-card';
    li.dataset.url = url;
    const title = document.createElement('div');
    title.className = 'model-title';
    const strong = document.createElement('strong');
    strong.textContent = name;
    title.append(strong);
    const s = this.stored.get(url);
    if (s?.complete) title.append(badge('cached', 'cached', `in this browser's storage (${bytes(s.size)})`));
    else if (s) title.append(badge('partial', 'partial', `${bytes(s.stored)} of ${bytes(s.size)} stored: the download resumes`));
    if (this.loadedUrl === url) {
      li.classList.add('active');
      title.append(badge('loaded', 'loaded', 'the model in use'));
    }
    const factsEl = document.createElement('div');
    factsEl.className = 'model-facts';
    factsEl.textContent = facts.filter(Boolean).join(' · ');
    li.append(title, factsEl);
    if (note) {
      const n = document.createElement('div');
      n.className = 'model-note';
      n.textContent = note;
      li.append(n);
    }
    const actions = document.createElement('div');
    actions.className = 'actions';
    const load = document.createElement('button');
    load.type = 'button';
    load.className = 'load-model';
    load.textContent = s?.complete ? 'Load' : 'Download & load';
    load.disabled = this.loading;
    load.addEventListener('click', () => this.handlers.loadUrl(url));
    actions.append(load);
    if (removable) {
      const rm = document.createElement('button');
      rm.type = 'button';
      rm.className = 'small secondary forget-model';
      rm.textContent = 'Remove from list';
      rm.addEventListener('click', () => this.forget(url));
      actions.append(rm);
    }
    li.append(actions);
    return li;
  }
}

function badge(text, cls, title) {
  const b = document.createElement('span');
  b.className = `badge ${cls}`;
  b.textContent = text;
  b.title = title;
  return b;
}
