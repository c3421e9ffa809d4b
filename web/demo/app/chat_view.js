// The conversation on screen: user messages as plain text, replies as sanitised markdown, each
// with its actions (copy; edit, which resends a user message; regenerate on the last reply), and
// the reply being streamed. It only shows and reports: main.js decides what the actions do.
import { copyButton } from './clipboard.js';
import { renderReply } from './markdown.js';

/** "48 tokens · 31.5 tokens/s · stopped" for a reply's meta. */
export function metaText(meta) {
  if (!meta) return '';
  const parts = [`${meta.tokens} token${meta.tokens === 1 ? '' : 's'}`];
  if (meta.tokensPerSecond > 0) parts.push(`${meta.tokensPerSecond.toFixed(1)} tokens/s`);
  if (meta.finish === 'abort') parts.push('stopped');
  else if (meta.finish === 'length') parts.push('hit the token limit');
  if (meta.model) parts.push(meta.model);
  if (meta.edited) parts.push('edited');
  return parts.join(' · ');
}

export class ChatView {
  /** handlers: edit(index, text) (a user message: resend from it), regenerate(index) (from the last reply or unanswered message). */
  constructor(container, handlers) {
    this.el = container;
    this.handlers = handlers;
    this.busy = false;
  }

  /** Shows `messages` (role user / assistant) from scratch. */
  render(messages, { busy = false, emptyHint = '' } = {}) {
    this.busy = busy;
    this.el.replaceChildren();
    if (messages.length === 0) {
      const empty = document.createElement('div');
      empty.className = 'empty';
      empty.textContent = emptyHint;
      this.el.append(empty);
      return;
    }
    messages.forEach((m, i) => this.el.append(this.bubble(m, i, i === messages.length - 1)));
    this.scrollToEnd();
  }

  /** A reply that is being written: update(text) as chunks come, then the caller re-renders. */
  startReply() {
    this.el.querySelector('.empty')?.remove();
    const div = document.createElement('div');
    div.className = 'msg assistant streaming';
    const content = document.createElement('div');
    content.className = 'content';
    div.append(content);
    this.el.append(div);
    this.scrollToEnd();
    let pending = null;
    return {
      element: div,
      update: (text) => {
        // At most one markdown render per frame, however fast the tokens come.
        const first = pending === null;
        pending = text;
        if (first) {
          requestAnimationFrame(() => {
            renderReply(content, pending);
            pending = null;
            this.scrollToEnd(true);
          });
        }
      },
    };
  }

  scrollToEnd(onlyIfNear = false) {
    const scroller = this.el;
    if (onlyIfNear && scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight > 120) return;
    scroller.scrollTop = scroller.scrollHeight;
  }

  bubble(m, index, last) {
    const div = document.createElement('div');
    div.className = `msg ${m.role}`;
    div.dataset.index = String(index);
    const content = document.createElement('div');
    content.className = 'content';
    if (m.role === 'assistant') renderReply(content, m.content);
    else content.textContent = m.content;
    div.append(content);
    if (m.role === 'assistant' && m.meta) {
      const meta = document.createElement('div');
      meta.className = 'meta';
      meta.textContent = metaText(m.meta);
      div.append(meta);
    }
    const actions = document.createElement('div');
    actions.className = 'actions';
    actions.append(copyButton('act-copy', () => m.content));
    const edit = this.button('Edit', 'act-edit', () => this.openEditor(div, m, index));
    edit.disabled = this.busy;
    actions.append(edit);
    if (last) {
      // The last reply can be generated again; a last message without a reply (stopped, failed) retried.
      const label = m.role === 'assistant' ? 'Regenerate' : 'Retry';
      const regen = this.button(label, 'act-regenerate', () => this.handlers.regenerate(index));
      regen.disabled = this.busy;
      actions.append(regen);
    }
    div.append(actions);
    return div;
  }

  button(label, cls, onClick) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = `small ${cls}`;
    b.textContent = label;
    b.addEventListener('click', onClick);
    return b;
  }

  // In place: a text box with the message; a user message is sent again from there, a reply is
  // only corrected (what the model sees next time).
  openEditor(div, m, index) {
    const editor = document.createElement('div');
    editor.className = 'editor';
    const box = document.createElement('textarea');
    box.className = 'edit-box';
    box.value = m.content;
    box.rows = Math.min(12, Math.max(3, m.content.split('\n').length + 1));
    const save = this.button(m.role === 'user' ? 'Save & send' : 'Save', 'edit-save', () => {
      const text = box.value.trim();
      if (text) this.handlers.edit(index, text);
    });
    const cancel = this.button('Cancel', 'edit-cancel', () => editor.replaceWith(...saved));
    const buttons = document.createElement('div');
    buttons.className = 'actions';
    buttons.append(save, cancel);
    editor.append(box, buttons);
    const saved = [...div.children];
    div.replaceChildren(editor);
    box.focus();
    box.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) save.click();
      if (ev.key === 'Escape') cancel.click();
    });
  }
}

