// Replies as markdown (marked, GitHub flavour) turned into sanitised HTML (DOMPurify): no script,
// no event handler attribute, no javascript: URL, no element that fetches anything (images,
// media, frames, styles); links open in a new tab, code blocks get a copy button. A reasoning
// model's <think>...</think> block becomes a folded "Thinking" section, shown as plain text.
import { DOMPurify, marked } from '../build/vendor.js';
import { copyButton } from './clipboard.js';

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'img', 'picture', 'video', 'audio', 'source', 'track', 'form', 'input', 'button', 'textarea',
    'select', 'option', 'dialog', 'template', 'link', 'meta', 'base'],
  FORBID_ATTR: ['style', 'srcset', 'formaction', 'action', 'background', 'poster'],
  ALLOW_DATA_ATTR: false,
};

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

/** Sanitised HTML of markdown `text`. */
export function markdownToHtml(text) {
  const html = marked.parse(text, { async: false, gfm: true, breaks: true });
  return DOMPurify.sanitize(html, PURIFY);
}

/** Splits off a leading <think> block (open while it streams): {thinking, answer, open}. */
export function splitThinking(text) {
  const m = /^\s*<think>([\s\S]*?)(<\/think>|$)/.exec(text);
  if (!m) return { thinking: null, answer: text, open: false };
  return { thinking: m[1].trim(), answer: text.slice(m[0].length), open: m[2] === '' };
}

/** Renders a reply into `el` (its children replaced). */
export function renderReply(el, text) {
  const { thinking, answer, open } = splitThinking(text);
  el.replaceChildren();
  if (thinking !== null) {
    const details = document.createElement('details');
    details.className = 'thinking';
    details.open = open;
    const summary = document.createElement('summary');
    summary.textContent = open ? 'Thinking…' : 'Thought';
    const body = document.createElement('div');
    body.className = 'thinking-text';
    body.textContent = thinking;
    details.append(summary, body);
    el.append(details);
  }
  const body = document.createElement('div');
  body.className = 'markdown';
  body.innerHTML = markdownToHtml(answer);
  for (const pre of body.querySelectorAll('pre')) {
    const wrap = document.createElement('div');
    wrap.className = 'code-wrap';  // a code block with its own copy button
    pre.replaceWith(wrap);
    wrap.append(pre, copyButton('code-copy', () => pre.textContent));
  }
  for (const table of body.querySelectorAll('table')) {
    const wrap = document.createElement('div');
    wrap.className = 'table-wrap';  // scrolls sideways on a narrow screen instead of the page
    table.replaceWith(wrap);
    wrap.append(table);
  }
  el.append(body);
}
