// The chat settings: one table of fields (the form is built from it), kept in localStorage, and
// turned into what the engine takes: sampling parameters per request (OpenAI / llama-server
// names), load options (nCtx, cacheTypeK/V: applied by reloading the model) and engine options
// (threads: applied by restarting the engine).

const KEY = 'oxidize-chat.settings';

// applies: 'request' (every generation), 'load' (the next model load), 'engine' (createEngine).
// param: the engine's name for it. Empty number fields mean "the engine's default".
export const FIELDS = [
  { key: 'systemPrompt', id: 'system-prompt', label: 'System prompt', type: 'textarea', applies: 'request', def: '',
    placeholder: 'e.g. You are a concise, friendly assistant.',
    hint: 'Sent first in every chat (models with a chat template).' },
  { key: 'temperature', id: 'temperature', label: 'Temperature', type: 'number', param: 'temperature', applies: 'request', def: 0.7, min: 0, max: 2, step: 0.05,
    hint: '0: always the most likely token.' },
  { key: 'topP', id: 'top-p', label: 'Top-p', type: 'number', param: 'top_p', applies: 'request', def: 0.95, min: 0, max: 1, step: 0.01 },
  { key: 'topK', id: 'top-k', label: 'Top-k', type: 'number', param: 'top_k', applies: 'request', def: 40, min: 0, max: 1000, step: 1, hint: '0: off.' },
  { key: 'minP', id: 'min-p', label: 'Min-p', type: 'number', param: 'min_p', applies: 'request', def: 0.05, min: 0, max: 1, step: 0.01 },
  { key: 'repeatPenalty', id: 'repeat-penalty', label: 'Repeat penalty', type: 'number', param: 'repeat_penalty', applies: 'request', def: 1.0, min: 0, max: 2, step: 0.05, hint: '1: off.' },
  { key: 'frequencyPenalty', id: 'frequency-penalty', label: 'Frequency penalty', type: 'number', param: 'frequency_penalty', applies: 'request', def: 0, min: -2, max: 2, step: 0.1 },
  { key: 'presencePenalty', id: 'presence-penalty', label: 'Presence penalty', type: 'number', param: 'presence_penalty', applies: 'request', def: 0, min: -2, max: 2, step: 0.1 },
  { key: 'maxTokens', id: 'max-tokens', label: 'Max tokens', type: 'number', param: 'max_tokens', applies: 'request', def: 1024, min: 1, max: 131072, step: 1,
    hint: 'Per reply.' },
  { key: 'seed', id: 'seed', label: 'Seed', type: 'number', param: 'seed', applies: 'request', def: null, min: 0, max: 4294967294, step: 1, placeholder: 'random' },
  { key: 'useTemplate', id: 'use-template', label: 'Use the chat template', type: 'checkbox', applies: 'request', def: true,
    hint: 'Set at each load from the file; off: the model continues your text (base models).' },
  { key: 'extra', id: 'extra-params', label: 'More parameters (JSON)', type: 'textarea', applies: 'request', def: '',
    placeholder: '{"ignore_eos": true, "stop": ["\\n\\n"]}',
    hint: 'Any other request field by its API name (typical_p, mirostat, dry_multiplier, logit_bias, stop, ...); the engine refuses an unknown one by name.' },
  { key: 'nCtx', id: 'n-ctx', label: 'Context size (tokens)', type: 'number', param: 'nCtx', applies: 'load', def: null, min: 16, max: 1048576, step: 1,
    placeholder: 'model default', hint: 'Up to the model\'s trained context, as memory allows.' },
  { key: 'kvType', id: 'kv-type', label: 'KV cache type', type: 'select', applies: 'load', def: 'f16',
    options: ['f16', 'q8_0', 'q4_0', 'bf16', 'f32'], hint: 'q8_0 halves its memory.' },
  { key: 'threads', id: 'threads', label: 'Threads', type: 'number', applies: 'engine', def: null, min: 1, max: 64, step: 1,
    placeholder: 'auto', hint: 'Needs a cross-origin isolated page; restarts the engine.' },
];

export function defaults() {
  return Object.fromEntries(FIELDS.map((f) => [f.key, f.def]));
}

export function loadSettings() {
  let saved = {};
  try {
    saved = JSON.parse(localStorage.getItem(KEY) ?? '{}') ?? {};
  } catch {
    saved = {};
  }
  const s = defaults();
  for (const f of FIELDS) if (f.key in saved) s[f.key] = saved[f.key];
  return s;
}

export function saveSettings(settings) {
  localStorage.setItem(KEY, JSON.stringify(settings));
}

/**
 * The sampling parameters of a request, by the engine's names (empty fields left out), with the
 * "More parameters" JSON object over them. Throws an Error naming the field when that is not JSON.
 */
export function samplingParams(s) {
  const out = {};
  for (const f of FIELDS) {
    if (f.applies !== 'request' || !f.param) continue;
    const v = s[f.key];
    if (v !== null && v !== '' && v !== undefined) out[f.param] = v;
  }
  const extra = (s.extra ?? '').trim();
  if (extra !== '') {
    let parsed;
    try {
      parsed = JSON.parse(extra);
    } catch (e) {
      throw new Error(`Settings, More parameters: not JSON (${e.message})`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new Error('Settings, More parameters: must be a JSON object, e.g. {"ignore_eos": true}');
    }
    Object.assign(out, parsed);
  }
  return out;
}

/** load()'s options from the settings. */
export function loadOptions(s) {
  const out = {};
  if (s.nCtx) out.nCtx = s.nCtx;
  if (s.kvType) {
    out.cacheTypeK = s.kvType;
    out.cacheTypeV = s.kvType;
  }
  return out;
}

/** createEngine()'s options from the settings. */
export function engineOptions(s) {
  return s.threads ? { threads: s.threads } : {};
}

/**
 * Builds the form into `container`; every change is saved and reported with onChange(settings,
 * field). Returns {set(settings)} to show settings changed elsewhere (e.g. useTemplate at load).
 */
export function buildForm(container, settings, onChange) {
  const inputs = new Map();
  for (const f of FIELDS) {
    const row = document.createElement('label');
    row.className = `field field-${f.type}`;
    const name = document.createElement('span');
    name.className = 'field-name';
    name.textContent = f.label;
    let input;
    if (f.type === 'textarea') {
      input = document.createElement('textarea');
      input.rows = 3;
      input.spellcheck = false;
      if (f.placeholder) input.placeholder = f.placeholder;
    } else if (f.type === 'select') {
      input = document.createElement('select');
      for (const o of f.options) input.add(new Option(o, o));
    } else {
      input = document.createElement('input');
      input.type = f.type;
      if (f.type === 'number') {
        input.min = String(f.min);
        input.max = String(f.max);
        input.step = String(f.step);
        input.inputMode = 'decimal';
        if (f.placeholder) input.placeholder = f.placeholder;
      }
    }
    input.id = f.id;
    inputs.set(f.key, input);
    if (f.type === 'checkbox') row.append(input, name);
    else row.append(name, input);
    if (f.hint) {
      const hint = document.createElement('span');
      hint.className = 'field-hint';
      hint.textContent = f.hint;
      row.append(hint);
    }
    const update = (ev) => {
      const value = readInput(f, input);
      if (value === undefined) {
        input.setCustomValidity(`${f.label}: a number from ${f.min} to ${f.max}`);
        if (ev.type === 'change') input.reportValidity();
        return;
      }
      input.setCustomValidity('');
      settings[f.key] = value;
      saveSettings(settings);
      onChange(settings, f);
    };
    input.addEventListener('input', update);
    input.addEventListener('change', update);
    container.append(row);
  }
  const set = (s) => {
    for (const f of FIELDS) {
      const input = inputs.get(f.key), v = s[f.key];
      if (f.type === 'checkbox') input.checked = !!v;
      else input.value = v === null || v === undefined ? '' : String(v);
    }
  };
  set(settings);
  return { set };
}

// A field's value from its input: null for an empty optional number, undefined when out of range.
function readInput(f, input) {
  if (f.type === 'checkbox') return input.checked;
  if (f.type !== 'number') return input.value;
  if (input.value.trim() === '') return f.def === null ? null : f.def;
  const n = Number(input.value);
  if (!Number.isFinite(n) || n < f.min || n > f.max || (f.step === 1 && !Number.isInteger(n))) return undefined;
  return n;
}
