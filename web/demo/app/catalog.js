// The curated chat models the demo offers: well-known GGUF repositories on Hugging Face, by their
// `resolve/main` URLs (Hugging Face answers them with CORS headers, so a page on any origin can
// download them). Sizes are the files' sizes as the repositories list them; the download shows
// the exact one. Every architecture here is in the repository README's architectures table.

const HF = 'https://huggingface.co';

export const CATALOG = [
  {
    id: 'smollm2-360m', name: 'SmolLM2 360M Instruct', family: 'SmolLM', params: '360M', quant: 'Q8_0', arch: 'llama',
    bytes: 386_404_992, url: `${HF}/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/main/smollm2-360m-instruct-q8_0.gguf`,
    note: 'The smallest: quick to download, fine for short answers.',
  },
  {
    id: 'qwen3-0.6b', name: 'Qwen3 0.6B', family: 'Qwen3', params: '0.6B', quant: 'Q8_0', arch: 'qwen3',
    bytes: 639_446_688, url: `${HF}/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf`,
    note: 'Thinks before it answers (shown folded); multilingual.',
  },
  {
    id: 'gemma3-1b', name: 'Gemma 3 1B IT', family: 'Gemma 3', params: '1B', quant: 'Q4_K_M', arch: 'gemma3',
    bytes: 806_058_272, url: `${HF}/unsloth/gemma-3-1b-it-GGUF/resolve/main/gemma-3-1b-it-Q4_K_M.gguf`,
    note: "Google's small instruction model; good prose.",
  },
  {
    id: 'llama3.2-1b', name: 'Llama 3.2 1B Instruct', family: 'Llama 3.2', params: '1B', quant: 'Q4_K_M', arch: 'llama',
    bytes: 807_694_464, url: `${HF}/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf`,
    note: "Meta's smallest Llama 3 chat model.",
  },
  {
    id: 'qwen3-1.7b', name: 'Qwen3 1.7B', family: 'Qwen3', params: '1.7B', quant: 'Q4_K_M', arch: 'qwen3',
    bytes: 1_107_409_472, url: `${HF}/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf`,
    note: 'A good balance of speed and quality.',
  },
  {
    id: 'smollm3-3b', name: 'SmolLM3 3B', family: 'SmolLM', params: '3B', quant: 'Q4_K_M', arch: 'smollm3',
    bytes: 1_915_305_792, url: `${HF}/bartowski/HuggingFaceTB_SmolLM3-3B-GGUF/resolve/main/HuggingFaceTB_SmolLM3-3B-Q4_K_M.gguf`,
    note: 'Strong for its size; reasons when asked.',
  },
  {
    id: 'llama3.2-3b', name: 'Llama 3.2 3B Instruct', family: 'Llama 3.2', params: '3B', quant: 'Q4_K_M', arch: 'llama',
    bytes: 2_019_377_696, url: `${HF}/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q4_K_M.gguf`,
    note: 'Noticeably better answers; needs a fast machine.',
  },
  {
    id: 'phi4-mini', name: 'Phi-4 mini Instruct', family: 'Phi', params: '3.8B', quant: 'Q4_K_M', arch: 'phi3',
    bytes: 2_491_874_272, url: `${HF}/unsloth/Phi-4-mini-instruct-GGUF/resolve/main/Phi-4-mini-instruct-Q4_K_M.gguf`,
    note: "Microsoft's small model, strong at maths and code.",
  },
];

/**
 * Models the repository's own server (web/scripts/serve.mjs) offers at /models/ (shared/models):
 * shown under "On this server" when the page comes from a loopback address and the file is there.
 */
export const LOCAL_MODELS = [
  { url: '/models/stories260K.gguf', name: 'stories260K', facts: ['260K', 'F32', '1.1 MB', 'llama'],
    note: 'A tiny test model that continues children\'s stories (no chat template).' },
];

/** The quantization named in a GGUF file name ("...-Q4_K_M.gguf" -> "Q4_K_M"), or ''. */
export function quantOf(name) {
  const m = /(?:^|[-_.])((?:I?Q\d(?:_[A-Z0-9]+)*)|F16|BF16|F32)(?=[-_.]|$)/i.exec(name.replace(/\.gguf$/i, ''));
  return m ? m[1].toUpperCase() : '';
}
