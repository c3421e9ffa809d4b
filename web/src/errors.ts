// EngineError: how every failure reaches the caller: the core's error code and message, unchanged.
import type { ErrorCode, WireError } from './protocol.js';

export class EngineError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
  }

  static fromWire(e: WireError): EngineError {
    return new EngineError(e.code, e.message);
  }

  toWire(): WireError {
    return { code: this.code, message: this.message };
  }
}

/** Any thrown value as a WireError: EngineErrors keep their code, AbortErrors become "aborted". */
export function toWireError(e: unknown): WireError {
  if (e instanceof EngineError) return e.toWire();
  if (e instanceof DOMException && e.name === 'AbortError') return { code: 'aborted', message: 'aborted by the caller' };
  if (e instanceof Error) return { code: 'internal', message: e.message };
  return { code: 'internal', message: String(e) };
}
