// Numbers as the chat demo shows them: byte sizes, speeds, durations, token counts.

/** 1536 -> "1.5 KiB", 3.2e9 -> "2.98 GiB". */
export function bytes(n) {
  if (!Number.isFinite(n) || n < 0) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ${units[i]}`;
}

/** Approximate sizes from a catalog: 386404992 -> "386 MB" (decimal, as Hugging Face lists files). */
export function approxSize(n) {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : `${Math.round(n / 1e6)} MB`;
}

/** Seconds left: 75 -> "1 min 15 s". */
export function duration(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 1) return '<1 s';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const m = Math.floor(seconds / 60), s = Math.round(seconds % 60);
  if (m < 60) return s ? `${m} min ${s} s` : `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function rate(bytesPerSecond) {
  return `${bytes(bytesPerSecond)}/s`;
}

/** The last path segment of a URL (a model's file name), or the URL itself. */
export function fileName(url) {
  try {
    const u = new URL(url, location.href);
    const last = u.pathname.split('/').filter(Boolean).pop();
    return last ? decodeURIComponent(last) : u.href;
  } catch {
    return String(url);
  }
}

/** "today 14:03" or a date, for lists. */
export function when(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  const today = new Date();
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === today.toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}

/** Where a model URL points, without its file: "huggingface.co/unsloth/Qwen3-1.7B-GGUF". */
export function modelFolder(url) {
  try {
    const u = new URL(url, location.href);
    return u.host + u.pathname.replace(/\/[^/]*$/, '').replace(/\/resolve\/[^/]+$/, '');
  } catch {
    return '';
  }
}
