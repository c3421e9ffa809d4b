// The sidebar's list of conversations: open, rename (in place), delete (after a confirmation).
import { when } from './format.js';

export class ConversationList {
  /** handlers: open(id), rename(id, title), remove(id). */
  constructor(container, handlers) {
    this.el = container;
    this.handlers = handlers;
  }

  render(conversations, activeId) {
    this.el.replaceChildren(...conversations.map((c) => this.item(c, c.id === activeId)));
  }

  item(c, active) {
    const li = document.createElement('li');
    li.className = `conv${active ? ' active' : ''}`;
    li.dataset.id = c.id;
    const open = document.createElement('button');
    open.type = 'button';
    open.className = 'conv-open';
    open.title = c.title;
    const title = document.createElement('span');
    title.className = 'conv-title';
    title.textContent = c.title;
    const time = document.createElement('small');
    time.textContent = `${when(c.updatedAt)} · ${c.messages.length} message${c.messages.length === 1 ? '' : 's'}`;
    open.append(title, time);
    open.addEventListener('click', () => this.handlers.open(c.id));
    const rename = iconButton('✎', 'conv-rename', `Rename “${c.title}”`, () => this.startRename(li, c));
    const del = iconButton('✕', 'conv-delete', `Delete “${c.title}”`, () => {
      if (confirm(`Delete the conversation “${c.title}”?`)) this.handlers.remove(c.id);
    });
    li.append(open, rename, del);
    return li;
  }

  startRename(li, c) {
    const box = document.createElement('input');
    box.type = 'text';
    box.className = 'rename-box';
    box.value = c.title;
    box.setAttribute('aria-label', 'Conversation name');
    const saved = [...li.children];
    li.replaceChildren(box);
    box.focus();
    box.select();
    let done = false;
    const finish = (commit) => {
      if (done) return;
      done = true;
      const title = box.value.trim();
      if (commit && title && title !== c.title) this.handlers.rename(c.id, title);
      else li.replaceChildren(...saved);
    };
    box.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') finish(true);
      if (ev.key === 'Escape') finish(false);
    });
    box.addEventListener('blur', () => finish(true));
  }
}

function iconButton(text, cls, label, onClick) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `icon ${cls}`;
  b.textContent = text;
  b.title = label;
  b.setAttribute('aria-label', label);
  b.addEventListener('click', onClick);
  return b;
}
