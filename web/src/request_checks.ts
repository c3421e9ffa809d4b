// Checks of what a page passes to the engine, done on the main thread before anything is posted, so
// that a mistake rejects with an EngineError naming it: chat messages (roles, empty messages,
// content parts), option names renamed to camelCase (refused by their old name) or unknown.
import { EngineError } from './errors.js';
import type { ChatMessage, ChatRole } from './protocol.js';

const ROLES: readonly ChatRole[] = ['system', 'developer', 'user', 'assistant', 'tool'];
const MESSAGE_KEYS = ['role', 'content', 'tool_calls', 'tool_call_id'];

function describe(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? JSON.stringify(v) : typeof v;
}

function invalid(message: string): EngineError {
  return new EngineError('invalid_argument', message);
}

/**
 * The messages of a chat request, checked: a non-empty array of {role, content} objects with a
 * known role and content that is a non-empty string or non-empty array of text parts (null only in
 * an assistant turn with tool_calls; a tool result may be ""). Returns copies holding only the keys
 * the templates read.
 */
export function checkMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages)) {
    throw invalid(`messages must be an array of {role, content} objects, got ${describe(messages)}`);
  }
  if (messages.length === 0) throw invalid('messages is empty: a chat needs at least one message');
  return messages.map((m: unknown, i) => checkMessage(m, i));
}

function checkMessage(m: unknown, i: number): ChatMessage {
  const at = `messages[${i}]`;
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    throw invalid(`${at} must be a {role, content} object, got ${describe(m)}`);
  }
  const msg = m as Record<string, unknown>;
  for (const key of Object.keys(msg)) {
    if (!MESSAGE_KEYS.includes(key) && msg[key] !== undefined) {
      throw new EngineError('unsupported', `${at}.${key} is not supported (a message has ${MESSAGE_KEYS.join(', ')})`);
    }
  }
  const role = msg.role;
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    throw invalid(`${at}.role ${describe(role)} is not a known role (${ROLES.join(', ')})`);
  }
  const calls = msg.tool_calls;
  if (calls !== undefined && calls !== null && (role !== 'assistant' || !Array.isArray(calls))) {
    throw invalid(`${at}.tool_calls: only an assistant message has tool_calls, as an array`);
  }
  const hasCalls = Array.isArray(calls) && calls.length > 0;
  const content = msg.content;
  const empty = `${at} (role '${role}') is empty`;
  if (content === null || content === undefined) {
    if (!hasCalls) throw invalid(`${empty}: content is ${String(content)} (null only in an assistant turn with tool_calls)`);
  } else if (typeof content === 'string') {
    if (content === '' && !hasCalls && role !== 'tool') throw invalid(`${empty}: content is ""`);
  } else if (Array.isArray(content)) {
    if (content.length === 0 && !hasCalls) throw invalid(`${empty}: content has no parts`);
    content.forEach((part: unknown, j) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      if (typeof p !== 'object' || p === null || p.type !== 'text' || typeof p.text !== 'string') {
        const type = typeof p === 'object' && p !== null ? describe(p.type) : describe(p);
        throw new EngineError('unsupported', `${at}.content[${j}] is not a text part {type: 'text', text} (type ${type}): only text parts are supported`);
      }
    });
  } else {
    throw invalid(`${at}.content must be a string or an array of text parts, got ${describe(content)}`);
  }
  if (msg.tool_call_id !== undefined && typeof msg.tool_call_id !== 'string') {
    throw invalid(`${at}.tool_call_id must be a string`);
  }
  const out: ChatMessage = { role: role as ChatRole, content: (content ?? null) as ChatMessage['content'] };
  if (calls !== undefined && calls !== null) out.tool_calls = calls as ChatMessage['tool_calls'];
  if (msg.tool_call_id !== undefined) out.tool_call_id = msg.tool_call_id as string;
  return out;
}

/**
 * Options outside OpenAI-shaped requests are camelCase; the snake_case names they had before are
 * refused by name (never silently ignored), saying the new one.
 */
export function refuseRenamed(options: object | undefined | null, renamed: Record<string, string>, what: string): void {
  if (options === undefined || options === null) return;
  for (const [old, now] of Object.entries(renamed)) {
    if (Object.prototype.hasOwnProperty.call(options, old)) {
      throw invalid(`${what}: the option ${old} is now called ${now}`);
    }
  }
}

/** Any other option name (a typo, one of another call's) is refused by name with the known ones listed. */
export function refuseUnknown(options: object | undefined | null, known: readonly string[], what: string): void {
  if (options === undefined || options === null) return;
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw invalid(`${what}: unknown option ${key} (the options are ${known.join(', ')})`);
  }
}

/** Checks that an option, when given, is a boolean. */
export function checkBoolean(value: unknown, name: string, what: string): void {
  if (value !== undefined && typeof value !== 'boolean') throw invalid(`${what}: ${name} must be true or false, got ${describe(value)}`);
}

export const RENAMED_LOAD_OPTIONS = { n_ctx: 'nCtx', n_batch: 'nBatch' };
export const RENAMED_TOKENIZE_OPTIONS = { add_special: 'addSpecial', parse_special: 'parseSpecial' };
export const RENAMED_DETOKENIZE_OPTIONS = { render_special: 'renderSpecial' };

/** An AbortSignal already aborted: the request rejects at once, before anything runs. */
export function refuseAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new EngineError('aborted', `${what} was aborted before it started (the signal was already aborted)`);
}

/** Token ids from an array or typed array; anything else is an EngineError naming the call. */
export function tokenIds(tokens: unknown, what: string): number[] {
  if (typeof tokens !== 'object' || tokens === null || typeof (tokens as ArrayLike<number>).length !== 'number') {
    throw invalid(`${what} takes an array of token ids, got ${describe(tokens)}`);
  }
  return Array.from(tokens as ArrayLike<number>);
}

/** A request object at all (a parameter object of an OpenAI-shaped call). */
export function requestObject(req: unknown, what: string): void {
  if (typeof req !== 'object' || req === null || Array.isArray(req)) {
    throw invalid(`${what} takes a request object, got ${describe(req)}`);
  }
}
