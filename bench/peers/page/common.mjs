// Helpers for the in-browser benchmark modules (oxidize_bench.mjs needs none: engine.bench makes its own token ids).

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
