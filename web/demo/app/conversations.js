// The conversations, kept in this origin's IndexedDB (database "oxidize-chat", store
// "conversations"): each is {id, title, createdAt, updatedAt, messages: [{role, content, meta?}]},
// where meta holds a reply's tokens, speed and finish reason.

const DB_NAME = 'oxidize-chat';
const STORE = 'conversations';

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

export class ConversationStore {
  constructor() {
    this.db = null;
  }

  async open() {
    if (this.db) return this;
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: 'id' });
    };
    this.db = await request(req);
    return this;
  }

  store(mode) {
    return this.db.transaction(STORE, mode).objectStore(STORE);
  }

  /** Every conversation, the most recently changed first. */
  async list() {
    const all = await request(this.store('readonly').getAll());
    return all.sort((a, b) => b.updatedAt - a.updatedAt);
  }

  async get(id) {
    return (await request(this.store('readonly').get(id))) ?? null;
  }

  /** Saves a conversation (a deep copy: later edits of the object do not reach the store). */
  async put(conversation) {
    conversation.updatedAt = Date.now();
    await request(this.store('readwrite').put(structuredClone(conversation)));
  }

  async delete(id) {
    await request(this.store('readwrite').delete(id));
  }
}

export function newConversation() {
  const now = Date.now();
  const id = crypto.randomUUID ? crypto.randomUUID() : `${now.toString(36)}-${Math.random().toString(36).slice(2)}`;
  return { id, title: 'New chat', titleSet: false, createdAt: now, updatedAt: now, messages: [] };
}

/** A title from the first user message: its first line, cut at a word near 48 characters. */
export function titleFrom(text) {
  const line = text.trim().split('\n')[0].replace(/\s+/g, ' ');
  if (line.length <= 48) return line || 'New chat';
  const cut = line.slice(0, 48);
  const space = cut.lastIndexOf(' ');
  return `${space > 24 ? cut.slice(0, space) : cut}…`;
}
