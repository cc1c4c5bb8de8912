/**
 * Small HTTP helpers of the agent's servers: plain-text and JSON answers, the HttpError that
 * handlers throw for a status other than 500, and parsing of query values. Error bodies are
 * plain text, as upstream's agent writes them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { quoteValue } from '../../api/quote.js';

export const TEXT = 'text/plain; charset=utf-8';
export const JSON_TYPE = 'application/json';

/** Thrown by handlers: answered with `status` and `message` as the body. */
export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'HttpError';
  }
}

export function sendText(res: ServerResponse, status: number, text: string, headers: Readonly<Record<string, string>> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = Buffer.from(text);
  res.writeHead(status, { 'content-type': TEXT, 'x-content-type-options': 'nosniff', 'content-length': body.length, ...headers });
  res.end(body);
}

/** A JSON answer; `body` is an object or already-encoded JSON (a string or a Buffer). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': data.length });
  res.end(data);
}

export const notFound = (): HttpError => new HttpError(404, '404 page not found\n');

/** Reads a request body of at most `limit` bytes. */
export async function readBody(req: IncomingMessage, limit = 1 << 20): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > limit) throw new HttpError(413, `request body larger than ${limit} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** An integer query value (undefined when absent); HttpError 400 naming the parameter otherwise. */
export function intParam(query: URLSearchParams, name: string, message?: string): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  if (!/^[-+]?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new HttpError(400, message ?? `invalid value ${quoteValue(raw)} of query parameter ${name}: not an integer`);
  }
  return Number(raw);
}

/** Go's strconv.ParseBool, as upstream's form values use it; `fallback` when absent. */
export function boolParam(query: URLSearchParams, name: string, fallback = false): boolean {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False', ''].includes(raw)) return false;
  throw new HttpError(400, `invalid value ${quoteValue(raw)} of query parameter ${name}: use true or false`);
}
