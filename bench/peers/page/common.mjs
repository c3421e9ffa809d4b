// Helpers shared by the in-browser benchmark modules.

// n in-vocabulary token ids (>= 3, so not the usual BOS/EOS/UNK) from a small LCG: each seed gives a
// different prompt, so no engine can reuse a cached prefix between repetitions.
export function benchTokens(n, nVocab, seed) {
  const ids = new Array(n);
  let x = (seed * 2654435761 + 12345) >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    ids[i] = 3 + ((x >>> 8) % Math.max(nVocab - 3, 1));
  }
  return ids;
}

// For engines whose completion API only takes text (wllama 3.x): nWords common words, rotated by
// seed so that consecutive prompts differ from their first word on.
const WORDS = (
  'the cat sat on a mat and the dog ran to see what was there but it was only a small bird that ' +
  'sang in the tree all day long while the sun was high in the sky over the green hill near town'
).split(' ');

export function benchText(nWords, seed) {
  const out = [];
  for (let i = 0; i < nWords; i++) out.push(WORDS[(i + seed * 7) % WORDS.length]);
  return out.join(' ');
}
