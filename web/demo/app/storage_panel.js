// The storage manager: the models this origin keeps (engine.cache.list()) with their sizes, delete
// one or all, the origin's usage and quota (navigator.storage.estimate()) and whether the browser
// keeps it under pressure (navigator.storage.persisted(), asked for with engine.cache.persist()).
import { bytes, fileName, modelFolder, when } from './format.js';

export class StoragePanel {
  /** ui: the panel's elements; getEngine(): the engine; changed(list): told after each refresh. */
  constructor(ui, getEngine, changed, onError) {
    this.ui = ui;
    this.getEngine = getEngine;
    this.changed = changed;
    this.onError = onError;
    ui.refresh.addEventListener('click', () => this.refresh());
    ui.persist.addEventListener('click', () => this.askPersistence());
    ui.clear.addEventListener('click', () => this.clearAll());
  }

  async refresh() {
    const engine = this.getEngine();
    if (!engine) return [];
    let list = [];
    try {
      list = await engine.cache.list();
    } catch (e) {
      this.onError(e);
    }
    list.sort((a, b) => b.storedAt - a.storedAt);
    this.render(list);
    await this.showQuota();
    this.changed(list);
    return list;
  }

  render(list) {
    const total = list.reduce((sum, s) => sum + s.stored, 0);
    this.ui.summary.textContent = list.length === 0
      ? 'No model is stored in this browser.'
      : `${list.length} file${list.length === 1 ? '' : 's'}, ${bytes(total)} (${list[0].backend === 'opfs' ? 'Origin Private File System' : 'Cache API'})`;
    this.ui.clear.disabled = list.length === 0;
    this.ui.list.replaceChildren(...list.map((s) => this.row(s)));
  }

  row(s) {
    const li = document.createElement('li');
    li.className = 'stored-model';
    li.dataset.url = s.url;
    const name = document.createElement('div');
    name.className = 'stored-name';
    name.textContent = fileName(s.url);
    name.title = s.url;
    const facts = document.createElement('div');
    facts.className = 'stored-facts';
    const parts = [s.complete ? bytes(s.size) : `${bytes(s.stored)} of ${bytes(s.size)} (incomplete: resumes on the next load)`];
    parts.push(modelFolder(s.url));
    if (s.storedAt) parts.push(`stored ${when(s.storedAt)}`);
    if (s.version) parts.push(`version ${s.version}`);
    facts.textContent = parts.join(' · ');
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'small secondary delete-stored';
    del.textContent = 'Delete';
    del.addEventListener('click', async () => {
      del.disabled = true;
      await this.act((cache) => cache.delete(s.url));
    });
    li.append(name, facts, del);
    return li;
  }

  /** Runs fn(engine.cache), shows its error if it fails, then shows the store as it is now. */
  async act(fn) {
    try {
      await fn(this.getEngine().cache);
    } catch (e) {
      this.onError(e);
    }
    await this.refresh();
  }

  async clearAll() {
    if (!confirm('Delete every model stored in this browser? They download again when loaded.')) return;
    await this.act((cache) => cache.clear());
  }

  async askPersistence() {
    await this.act((cache) => cache.persist());
  }

  async showQuota() {
    const storage = navigator.storage;
    if (!storage?.estimate) {
      this.ui.quota.textContent = 'This browser does not report its storage use.';
      return;
    }
    const [est, persisted] = await Promise.all([storage.estimate(), storage.persisted?.() ?? Promise.resolve(false)]);
    this.ui.quota.textContent = `This site uses ${bytes(est.usage ?? 0)} of ${bytes(est.quota ?? 0)} available.`;
    this.ui.persistence.textContent = persisted
      ? 'Persistent: the browser keeps these files until you delete them.'
      : 'Best effort: the browser may remove these files when it runs short of space.';
    this.ui.persistence.dataset.persisted = String(persisted);
    this.ui.persist.hidden = persisted;
  }
}
