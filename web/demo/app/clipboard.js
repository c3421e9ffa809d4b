// Copying text: the async clipboard API, else a selection copy (pages without the permission).

/** Puts text on the clipboard; whether it worked. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const box = document.createElement('textarea');
    box.value = text;
    box.style.position = 'fixed';
    box.style.opacity = '0';
    document.body.append(box);
    box.select();
    const ok = document.execCommand('copy');
    box.remove();
    return ok;
  }
}

/** A small "Copy" button that copies what text() returns and says whether it did. */
export function copyButton(className, text) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `small ${className}`;
  b.textContent = 'Copy';
  b.addEventListener('click', async () => {
    b.textContent = (await copyText(text())) ? 'Copied' : 'Copy failed';
    setTimeout(() => (b.textContent = 'Copy'), 1500);
  });
  return b;
}
